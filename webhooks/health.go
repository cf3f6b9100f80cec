package webhooks

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// health keeps the endpoint's failure streak: the first failure since the last success
// starts it, a success ends it, and an endpoint failing for webhooks.disable_after is
// disabled with a webhook.disabled event. The cached endpoint only decides whether to look;
// the stored one is changed under the endpoint's lock.
func (d *Dispatcher) health(ctx context.Context, ep known, next state) {
	ok := next.State == StateDelivered
	at := time.UnixMicro(next.TimeUS).UTC()
	switch {
	case ok && ep.FailingSince == nil, !ok && ep.FailingSince != nil && at.Sub(ep.FailingSince.Time()) < d.cfg.DisableAfter:
		return
	}
	err := d.service.streak(ctx, ep.Scope(), ep.ID, ok, at, d.cfg.DisableAfter)
	if err != nil {
		d.log.Warn("update webhook endpoint health", "endpoint", ep.ID, "err", err)
	}
	d.endpoints.forget(ep.Scope())
}

// streak records an attempt's outcome on the stored endpoint; it writes only on a change.
func (s *Service) streak(ctx context.Context, scope kwhouse.Scope, id string, ok bool, at time.Time, disableAfter time.Duration) error {
	unlock, err := s.docs.Lock(ctx, "webhook:"+id)
	if err != nil {
		return err
	}
	defer unlock()
	doc, e, err := s.load(ctx, scope, id)
	if err != nil {
		return err
	}
	switch {
	case ok && e.FailingSince != nil:
		e.FailingSince = nil
		return s.save(ctx, doc, e)
	case !ok && e.FailingSince == nil:
		ts := catalog.Timestamp(at)
		e.FailingSince = &ts
		return s.save(ctx, doc, e)
	case !ok && !e.Disabled && at.Sub(e.FailingSince.Time()) >= disableAfter:
		e.Disabled = true
		return s.disable(ctx, doc, e)
	}
	return nil
}
