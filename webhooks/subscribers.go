package webhooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// subscribers tells whether a scope has an enabled endpoint taking an event type: the
// events made only for endpoints (cost.revised, meter.batch.completed) cost nothing in a
// scope where none takes them.
type subscribers struct {
	endpoints *endpointCache
	log       *slog.Logger
}

// newSubscribers reuses a scope's endpoint list for ttl (webhooks.endpoint_cache_ttl): an
// endpoint created through another process takes cost.revised and meter.batch.completed
// events from at most this later.
func newSubscribers(docs *docstore.Store, ttl time.Duration, log *slog.Logger) subscribers {
	return subscribers{endpoints: newEndpointCache(docs, ttl, docs.Now), log: log}
}

// want reports whether scope has an enabled endpoint that takes eventType. A failure to
// tell counts as yes: the events are not to be lost.
func (s subscribers) want(ctx context.Context, scope kwhouse.Scope, eventType string) bool {
	list, err := s.endpoints.of(ctx, scope)
	if err != nil {
		s.log.Warn("webhook endpoints of scope", "account", scope.AccountID, "event_type", eventType, "err", err)
		return true
	}
	for _, e := range list {
		if !e.Disabled && e.Wants(eventType) {
			return true
		}
	}
	return false
}
