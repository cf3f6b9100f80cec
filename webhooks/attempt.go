package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// maxErrorLen bounds the error text kept with an attempt.
const maxErrorLen = 500

// attempt makes the next attempt of a claimed delivery and stores its outcome. An attempt
// cut short by shutdown stores nothing: the delivery stays due and is attempted again.
func (d *Dispatcher) attempt(ctx context.Context, c claimed) {
	defer d.wg.Done()
	st := c.it.st
	ep, found, err := d.endpoints.get(ctx, st.Scope, st.EndpointID)
	if err != nil {
		d.abandon(c, err)
		return
	}
	start := d.now()
	next := st
	next.Attempt, next.AttemptID, next.TimeUS = st.Attempt+1, kwhouse.NewID(kwhouse.PrefixAttempt), start.UnixMicro()
	switch {
	case !found:
		next.State, next.Error = StateFailed, "endpoint deleted"
	case ep.Disabled:
		next.State, next.Error = StateFailed, "endpoint disabled"
	default:
		body, err := d.body(ctx, c.it)
		if errors.Is(err, errEventGone) {
			next.State, next.Error = StateFailed, err.Error()
			break
		}
		if err != nil {
			d.abandon(c, err)
			return
		}
		code, err := d.post(ctx, ep.Endpoint, st.EventID, start, body)
		d.freeSender(c.it)
		d.signal()
		if ctx.Err() != nil {
			d.abandon(c, nil)
			return
		}
		next.StatusCode, next.DurationMS = uint16(code), uint32(d.now().Sub(start).Milliseconds())
		d.outcome(&next, start, err)
	}
	d.finish(ctx, c, next, ep, found)
}

// outcome sets the state after an attempt that returned err (nil: a 2xx).
func (d *Dispatcher) outcome(next *state, start time.Time, err error) {
	if err == nil {
		next.State = StateDelivered
		return
	}
	next.Error = truncate(err.Error(), maxErrorLen)
	at, ok := nextAttempt(next.Attempt, start)
	if !ok {
		next.State = StateFailed
		return
	}
	next.State, next.NextUS = StatePending, at.UnixMicro()
}

// finish stores the attempt's outcome, keeps a retry due soon in memory (later ones are
// left to the sweep), updates the endpoint's failure streak and gives back the lease.
func (d *Dispatcher) finish(ctx context.Context, c claimed, next state, ep known, found bool) {
	if err := d.states.add(ctx, next); err != nil {
		// The lease is kept until it expires, so no other process repeats the attempt
		// at once; the delivery stays due at its stored attempt and is made again.
		d.log.Warn("store webhook attempt", "delivery", next.DeliveryID, "err", err)
		d.release(c.it, true)
		return
	}
	// The lease is left to expire rather than given back: a process that queued this
	// delivery before the outcome was stored cannot take it for the same attempt then.
	soon := next.State == StatePending && next.NextUS-d.now().UnixMicro() < d.cfg.SweepInterval.Microseconds()
	d.release(c.it, !soon)
	if soon {
		d.mu.Lock()
		if it, ok := d.queue[next.DeliveryID]; ok {
			// The body is read again for the retry (with the others of its pass): a
			// failing endpoint's queue holds no bodies.
			it.st, it.body, it.polled = next, nil, false
		}
		d.mu.Unlock()
	}
	if found && next.Error != "endpoint disabled" {
		d.health(context.WithoutCancel(ctx), ep, next)
	}
}

// abandon gives up an attempt without storing anything: it is made again later.
func (d *Dispatcher) abandon(c claimed, err error) {
	if err != nil {
		d.log.Warn("webhook attempt not made", "delivery", c.it.st.DeliveryID, "err", err)
	}
	c.unlock()
	d.release(c.it, false)
}

var errEventGone = errors.New("event no longer kept")

// body is the event as GET /events/{id} returns it.
func (d *Dispatcher) body(ctx context.Context, it *item) ([]byte, error) {
	raw := it.body
	if raw == nil {
		doc, err := d.docs.Get(ctx, it.st.Scope, docstore.KindEvent, it.st.EventID)
		if kwhouse.KindOf(err) == kwhouse.KindNotFound {
			return nil, errEventGone
		}
		if err != nil {
			return nil, err
		}
		raw = doc.Body
	}
	var e catalog.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("decode event %s: %w", it.st.EventID, err)
	}
	return json.Marshal(e)
}

// post sends one signed attempt; the status code and nil mean a 2xx.
func (d *Dispatcher) post(ctx context.Context, ep Endpoint, eventID string, at time.Time, body []byte) (int, error) {
	h, err := Sign(ep.Secret, eventID, at, body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kwhouse-webhooks/1")
	req.Header.Set("webhook-id", h.ID)
	req.Header.Set("webhook-timestamp", h.Timestamp)
	req.Header.Set("webhook-signature", h.Signature)
	client := d.test
	if ep.LiveMode {
		client = d.live
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return resp.StatusCode, fmt.Errorf("redirect to %q not followed", resp.Header.Get("Location"))
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("endpoint answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
