package tariffs

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
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
	cache, key := s.epochCache(), epochKey(scope)
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
	s.epochCache().Del(ctx, epochKey(scope))
}

// SetEpochCache keeps pricing epochs in c rather than the document cache: they are no
// documents, and a service whose document reads all reach ClickHouse (the conformance
// suite's) still prices under epochs. Called once, before the Service serves.
func (s *Service) SetEpochCache(c docstore.Cache) { s.epochs = c }

func (s *Service) epochCache() docstore.Cache {
	if s.epochs != nil {
		return s.epochs
	}
	return s.docs.Cache()
}

func epochKey(scope kwhouse.Scope) string {
	return fmt.Sprintf("pricing-epoch:%s:%t", scope.AccountID, scope.LiveMode)
}

// EpochMemo keeps values computed from a scope's prices, each found only under the
// pricing epoch it was computed in: a price write makes every older value unreachable.
type EpochMemo[T any] struct {
	prices *Service
	values *lru.Cache[string, T]
}

// NewEpochMemo returns a memo of at most size values, keyed by the epochs of prices.
func NewEpochMemo[T any](prices *Service, size int) *EpochMemo[T] {
	c, err := lru.New[string, T](size)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &EpochMemo[T]{prices: prices, values: c}
}

// Get returns the value of key in scope: from memory when computed under the current
// epoch, else from load (remembered only when the epoch is known and load succeeds).
func (m *EpochMemo[T]) Get(ctx context.Context, scope kwhouse.Scope, key string, load func() (T, error)) (T, error) {
	epoch := m.prices.PricingEpoch(ctx, scope)
	full := fmt.Sprintf("%s|%s|%t|%s", epoch, scope.AccountID, scope.LiveMode, key)
	if epoch != "" {
		if v, ok := m.values.Get(full); ok {
			return v, nil
		}
	}
	v, err := load()
	if err == nil && epoch != "" {
		m.values.Add(full, v)
	}
	return v, err
}

// tariffListCacheSize bounds the location tariff lists kept in memory.
const tariffListCacheSize = 16384

// readTariffs returns a location's tariffs for pricing reads, from memory while the
// scope's pricing epoch is unchanged. Writes (overlap checks, cascades) use ofLocation.
func (s *Service) readTariffs(ctx context.Context, scope kwhouse.Scope, locationID string) ([]Tariff, error) {
	return s.lists.Get(ctx, scope, locationID, func() ([]Tariff, error) { return s.ofLocation(ctx, scope, locationID) })
}

// fleetPlansCacheSize bounds the fleet plans kept (FleetTariffs.Plans): a few windows of a
// 10,000-location fleet.
const fleetPlansCacheSize = 65536

// ofScope returns every tariff of a scope, each decoded once per version it is read at
// (docstore.Decoded): a tariff written anywhere is read again, the others are not.
func (s *Service) ofScope(ctx context.Context, scope kwhouse.Scope) ([]Tariff, error) {
	out, err := s.all.All(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("tariffs of the fleet: %w", err)
	}
	return out, nil
}

// decodeTariff decodes a stored tariff with encoding/json's rules on the faster json v2
// engine: a process's first fleet answer decodes every tariff of the scope.
func decodeTariff(d docstore.Doc) (Tariff, error) {
	var t Tariff
	if err := json.Unmarshal(d.Body, &t, jsonv1.DefaultOptionsV1()); err != nil {
		return Tariff{}, fmt.Errorf("decode %s %s: %w", d.Kind, d.ID, err)
	}
	return t, nil
}
