package tariffs

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
)

// PricingEpoch names the current state of a scope's prices: its tariffs and market
// prices. Every write that can change a price ends the epoch, so a price timeline computed
// under an epoch may be reused for as long as PricingEpoch still returns it. "" means the
// epoch cannot be known now (no Redis, or invalidations still pending): reuse nothing.
//
// The epoch lives in Redis so that every kwhouse process sees a write made by another; a
// write that cannot reach Redis leaves a pending invalidation, and the cache then answers
// "" until it is flushed.
func (s *Service) PricingEpoch(ctx context.Context, scope kwhouse.Scope) string {
	cache, key := s.docs.Cache(), epochKey(scope)
	if b, ok := cache.Get(ctx, key); ok {
		return string(b)
	}
	cache.SetNX(ctx, key, []byte(kwhouse.NewID("epo_")))
	if b, ok := cache.Get(ctx, key); ok {
		return string(b)
	}
	return ""
}

// endEpoch is called after a write that can change a price of the scope.
func (s *Service) endEpoch(ctx context.Context, scope kwhouse.Scope) {
	s.docs.Cache().Del(ctx, epochKey(scope))
}

func epochKey(scope kwhouse.Scope) string {
	return fmt.Sprintf("pricing-epoch:%s:%t", scope.AccountID, scope.LiveMode)
}
