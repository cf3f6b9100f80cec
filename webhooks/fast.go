package webhooks

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse/docstore"
)

// fastQueue bounds the batches of new events waiting for the fast path; when it is full
// the outbox read finds the rest.
const fastQueue = 1024

// fastWriteTimeout bounds the store of one batch of deliveries made by the fast path.
const fastWriteTimeout = time.Minute

// written takes the documents this process has just stored (docstore's write hook): its
// new events are made into deliveries and attempted at once by Run, without waiting for
// the next outbox read. Never blocks the writer.
func (d *Dispatcher) written(docs []docstore.Doc) {
	var events []outboxEvent
	for _, doc := range docs {
		if doc.Kind == docstore.KindEvent && doc.Fields.EventType != EventTest {
			events = append(events, outboxEvent{CreatedUS: doc.CreatedUS, ID: doc.ID, Scope: doc.Scope,
				Type: doc.Fields.EventType, Body: doc.Body})
		}
	}
	if len(events) == 0 {
		return
	}
	select {
	case d.fresh <- events:
	default: // the outbox read finds them
	}
}

// fastLoop makes the deliveries of the events this process writes as they are written
// (until ctx ends): queued for their first attempt at once, and stored meanwhile. The
// outbox read stays what guarantees every event its deliveries: it skips an event only
// once its deliveries from here are stored (made), and makes them itself otherwise.
func (d *Dispatcher) fastLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case events := <-d.fresh:
			states, bodies, err := d.fanOut(ctx, events)
			if err != nil {
				continue // the outbox read makes them
			}
			d.queueNew(states, bodies)
			go d.storeMade(ctx, events, states)
		}
	}
}

// storeMade stores the deliveries made by the fast path and then marks their events made.
func (d *Dispatcher) storeMade(ctx context.Context, events []outboxEvent, states []state) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fastWriteTimeout)
	defer cancel()
	if err := d.states.add(ctx, states...); err != nil {
		return // the outbox read makes and stores them
	}
	d.mu.Lock()
	for _, e := range events {
		d.made[e.ID] = e.CreatedUS
	}
	d.mu.Unlock()
}

// madeHere reports whether the fast path has made and stored the event's deliveries.
func (d *Dispatcher) madeHere(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.made[id]
	return ok
}
