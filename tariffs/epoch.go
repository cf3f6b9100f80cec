package tariffs

import (
	"context"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"

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

// tariffListCacheSize bounds the location tariff lists kept in memory.
const tariffListCacheSize = 16384

func newTariffLists() *lru.Cache[string, []Tariff] {
	c, err := lru.New[string, []Tariff](tariffListCacheSize)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return c
}

// readTariffs returns a location's tariffs for pricing reads, from memory while the
// scope's pricing epoch is unchanged. Writes (overlap checks, cascades) use ofLocation.
func (s *Service) readTariffs(ctx context.Context, scope kwhouse.Scope, locationID string) ([]Tariff, error) {
	epoch := s.PricingEpoch(ctx, scope)
	key := fmt.Sprintf("%s|%s|%t|%s", epoch, scope.AccountID, scope.LiveMode, locationID)
	if epoch != "" {
		if ts, ok := s.lists.Get(key); ok {
			return ts, nil
		}
	}
	ts, err := s.ofLocation(ctx, scope, locationID)
	if err == nil && epoch != "" {
		s.lists.Add(key, ts)
	}
	return ts, err
}
