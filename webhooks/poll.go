package webhooks

import (
	"context"
	"time"
)

// cursorEvery is how often at most the outbox position is stored: a restarted process
// reads from the stored position less webhooks.overlap, and whatever it reads twice it
// makes into the same deliveries (their ids derive from endpoint and event).
const cursorEvery = time.Second

// poll reads the outbox from the newest position less the overlap (events whose insert
// finished after a later event's), and queues a delivery for each new event and each
// endpoint that wants it while it stores them. The position passes an event only once
// its deliveries are stored: once stored, a delivery survives any process, and an event
// whose deliveries a process did not store is read again (by it, or after a restart).
func (d *Dispatcher) poll(ctx context.Context) error {
	from := d.pos - d.cfg.Overlap.Microseconds()
	for {
		events, err := d.store.outbox(ctx, from, d.cfg.Batch)
		if err != nil {
			return err
		}
		if err := d.deliver(ctx, events); err != nil {
			return err
		}
		if len(events) < d.cfg.Batch || events[len(events)-1].CreatedUS == from {
			break
		}
		from = events[len(events)-1].CreatedUS
	}
	d.forgetSeen()
	return d.saveCursor(ctx)
}

// deliver queues the deliveries of the events not seen before and stores them. Their
// first attempts start at once, without waiting for the insert (a ClickHouse insert is the
// slowest step between an event and its delivery): an attempt holds its lease, so no other
// process makes it meanwhile, and until the insert succeeds the events are not marked
// read, so a failed insert is retried at the next turn. Events whose deliveries this
// process made and stored as they were written (fast.go) are only marked read.
func (d *Dispatcher) deliver(ctx context.Context, events []outboxEvent) error {
	var todo, fresh []outboxEvent
	for _, e := range events {
		if _, ok := d.seen[e.ID]; ok {
			continue
		}
		fresh = append(fresh, e)
		if !d.madeHere(e.ID) {
			todo = append(todo, e)
		}
	}
	states, bodies, err := d.fanOut(ctx, todo)
	if err != nil {
		return err
	}
	d.queueNew(states, bodies)
	if err := d.states.add(ctx, states...); err != nil {
		return err
	}
	for _, e := range fresh {
		d.seen[e.ID] = e.CreatedUS
		d.pos = max(d.pos, e.CreatedUS)
	}
	return nil
}

// fanOut returns the deliveries of events: one per event and endpoint that wants it
// (registered before the event), with the event's body.
func (d *Dispatcher) fanOut(ctx context.Context, events []outboxEvent) ([]state, [][]byte, error) {
	var states []state
	var bodies [][]byte
	for _, e := range events {
		if e.Type == EventTest {
			continue // sent to its one endpoint by the API, never fanned out
		}
		eps, err := d.endpoints.of(ctx, e.Scope)
		if err != nil {
			return nil, nil, err
		}
		for _, ep := range eps {
			if ep.Disabled || !ep.Wants(e.Type) || ep.CreatedUS > e.CreatedUS {
				continue
			}
			states = append(states, state{EndpointID: ep.ID, DeliveryID: deliveryID(ep.ID, e.ID), Scope: e.Scope,
				EventID: e.ID, EventType: e.Type, CreatedUS: e.CreatedUS, TimeUS: e.CreatedUS, State: StatePending,
				NextUS: e.CreatedUS})
			bodies = append(bodies, e.Body)
		}
	}
	return states, bodies, nil
}

// queueNew queues new deliveries for their first attempt and wakes the dispatch loop.
func (d *Dispatcher) queueNew(states []state, bodies [][]byte) {
	for i, st := range states {
		d.enqueue(&item{st: st, body: bodies[i], polled: true})
	}
	if len(states) > 0 {
		d.signal()
	}
}

// forgetSeen drops the events that fell behind the overlap: they are not read again.
func (d *Dispatcher) forgetSeen() {
	edge := d.pos - d.cfg.Overlap.Microseconds()
	for id, created := range d.seen {
		if created < edge {
			delete(d.seen, id)
		}
	}
	d.mu.Lock()
	for id, created := range d.made {
		if created < edge {
			delete(d.made, id)
		}
	}
	d.mu.Unlock()
}

func (d *Dispatcher) saveCursor(ctx context.Context) error {
	if d.pos-d.savedPos < cursorEvery.Microseconds() {
		return nil
	}
	if err := d.store.writeCursor(ctx, d.pos); err != nil {
		return err
	}
	d.savedPos = d.pos
	return nil
}
