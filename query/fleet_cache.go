package query

import (
	"context"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/tariffs"
)

// defaultFleetCacheLocations is the fleet cache's size until SetFleetCache (config
// costs.fleet_cache_locations).
const defaultFleetCacheLocations = 20_000

// maxCachedBuckets bounds the buckets kept for one location and device (a year and a
// month of days): past it, its older ones are dropped.
const maxCachedBuckets = 400

// fleetCache keeps priced fleet buckets. A bucket is only ever read back under the pricing
// epoch, zone, tariff bits and row fingerprints it was priced under, the fingerprints being
// the ones its own pricing query read: it is served from here only while the stored rows it
// sums and every price input are exactly what they were when it was priced.
//
// An untiered bucket's money depends on its own rows alone. A tiered bucket's depends on
// every row its counters read before it too — both directions, from the tier lookback on —
// so its chain fingerprint sums those of the lookback and of every bucket up to it.
//
// Buckets are kept per location (or device), direction and aggregation: one lookup a
// location, then one map access a bucket.
type fleetCache struct {
	groups       *lru.Cache[groupKey, *groupBuckets]
	parts        *lru.Cache[partKey, []cellRow] // table parts' fingerprint sums (fleet_parts.go)
	hits, misses atomic.Int64                   // buckets served from memory, and priced
	printsReused atomic.Int64                   // fingerprint reads not made: no part changed
}

// groupKey names the buckets of a location or device; lookb is a tiered one's lookback.
type groupKey struct {
	account  string
	live     bool
	loc, dev string
	dir, agg string
	lookb    int64
}

// groupBuckets are a group's priced buckets under one pricing epoch, zone and tariff
// bits; never changed once cached (a new set replaces it).
type groupBuckets struct {
	epoch, zone string
	bits        uint16
	buckets     map[uint32]cachedBucket
}

// cachedBucket is a priced bucket and the fingerprints of the rows it was priced from.
type cachedBucket struct {
	fp, chain uint64
	sum       fleetSum
}

// newFleetCache returns a cache of the buckets of at most size locations and devices.
func newFleetCache(size int) *fleetCache {
	g, err := lru.New[groupKey, *groupBuckets](size)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &fleetCache{groups: g, parts: newKeptParts()}
}

// SetFleetCache keeps the priced fleet buckets of up to locations locations (or devices)
// in memory; 0 keeps none. It is called once, before the Pricer serves.
func (c *Pricer) SetFleetCache(locations int) {
	c.fleetCache = nil
	if locations > 0 {
		c.fleetCache = newFleetCache(locations)
	}
}

// fleetEpoch is the scope's pricing epoch when fleet buckets may be cached, else "".
func (c *Pricer) fleetEpoch(ctx context.Context, scope kwhouse.Scope) string {
	if c.fleetCache == nil {
		return ""
	}
	return c.tariffs.PricingEpoch(ctx, scope)
}

// pricedUnder is what a batch's buckets are priced under besides their rows.
type pricedUnder struct {
	epoch, zone string
	plans       map[string]tariffs.Plan
}

func (u pricedUnder) matches(g *groupBuckets, loc string) bool {
	return g.epoch == u.epoch && g.zone == u.zone && g.bits == u.plans[loc].TariffBits()
}

func groupKeyOf(scope kwhouse.Scope, req FleetRequest, tiered bool, loc, dev string, plans map[string]tariffs.Plan) groupKey {
	key := groupKey{account: scope.AccountID, live: scope.LiveMode, loc: loc, dev: dev, dir: req.Direction, agg: req.Aggregation}
	if tiered {
		key.lookb = plans[loc].Lookback
	}
	return key
}

// bucketHits returns the cached buckets whose rows and prices are unchanged, and for every
// other location its first changed bucket.
func (c *Pricer) bucketHits(scope kwhouse.Scope, req FleetRequest, tiered bool, prints []bucketPrint,
	u pricedUnder) ([]fleetSum, map[string]uint32) {
	hits := make([]fleetSum, 0, len(prints))
	missed := map[string]uint32{}
	groups := map[groupID]*groupBuckets{} // looked up once a group: prints come in any order
	for _, p := range prints {
		g, seen := groups[groupID{p.loc, p.dev}]
		if !seen {
			if got, ok := c.fleetCache.groups.Get(groupKeyOf(scope, req, tiered, p.loc, p.dev, u.plans)); ok && u.matches(got, p.loc) {
				g = got
			}
			groups[groupID{p.loc, p.dev}] = g
		}
		if g != nil {
			if b, ok := g.buckets[p.k]; ok && b.fp == p.fp && b.chain == p.chain {
				hits = append(hits, b.sum)
				continue
			}
		}
		if k, seen := missed[p.loc]; !seen || p.k < k {
			missed[p.loc] = p.k
		}
	}
	return hits, missed
}

// keep caches the priced sums that read their fingerprints and counted no reading twice,
// beside the group's buckets cached under the same prices. priced is in location, device
// and bucket order within each query's rows.
func (c *Pricer) keep(scope kwhouse.Scope, req FleetRequest, tiered bool, priced []fleetSum, u pricedUnder) {
	var chains []uint64
	if tiered {
		chains = chainSums(priced)
	}
	for i := 0; i < len(priced); {
		j := i
		for j < len(priced) && priced[j].Loc == priced[i].Loc && priced[j].Dev == priced[i].Dev {
			j++
		}
		c.keepGroup(scope, req, tiered, priced[i:j], chains, i, u)
		i = j
	}
}

// keepGroup caches the sums of one location and device (chains from index at).
func (c *Pricer) keepGroup(scope kwhouse.Scope, req FleetRequest, tiered bool, sums []fleetSum, chains []uint64, at int,
	u pricedUnder) {
	s0 := sums[0]
	key := groupKeyOf(scope, req, tiered, s0.Loc, s0.Dev, u.plans)
	next := &groupBuckets{epoch: u.epoch, zone: u.zone, bits: u.plans[s0.Loc].TariffBits(), buckets: map[uint32]cachedBucket{}}
	if old, ok := c.fleetCache.groups.Peek(key); ok && u.matches(old, s0.Loc) && len(old.buckets)+len(sums) <= maxCachedBuckets {
		for k, b := range old.buckets {
			next.buckets[k] = b
		}
	}
	for i, s := range sums {
		if !s.hashed || s.Dirty != 0 {
			continue
		}
		if req.Aggregation != FleetAggregationNone { // a window's bounds are the request's
			s.when = bucketTimes(req, s.Key, u.zone)
		}
		b := cachedBucket{fp: s.Fp, sum: s}
		if tiered {
			b.chain = chains[at+i]
		}
		next.buckets[s.Key] = b
	}
	c.fleetCache.groups.Add(key, next)
}

// mergeHits adds to the priced sums the cached ones they do not replace: of a location
// priced again, only its buckets before from.
func mergeHits(priced, hits []fleetSum, missed map[string]uint32, from uint32) []fleetSum {
	type key struct {
		loc, dev string
		k        uint32
	}
	seen := make(map[key]bool, len(priced))
	for _, s := range priced {
		seen[key{s.Loc, s.Dev, s.Key}] = true
	}
	if len(priced) == 0 {
		return hits
	}
	out := append(make([]fleetSum, 0, len(priced)+len(hits)), priced...)
	for _, h := range hits {
		if _, m := missed[h.Loc]; (m && h.Key >= from) || seen[key{h.Loc, h.Dev, h.Key}] {
			continue
		}
		out = append(out, h)
	}
	return out
}
