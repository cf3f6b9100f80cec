package query

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var fleetCellsStmt = chstore.Register("query.fleet_cells", "fleet_cells.sql: fingerprints of the rows of a fleet's buckets")

// Cache sizes: a bucket is about 250 bytes with its key, so the buckets of a 1,000-location
// year by DAY fit; a tiered location keeps every bucket of its window.
const (
	fleetCacheBuckets   = 400_000
	fleetCacheLocations = 20_000
)

// fleetCache keeps priced fleet buckets. An entry is only ever read back under the pricing
// epoch, zone, tariff bits and row fingerprint it was priced under, the fingerprint being
// the one its own pricing query read: a bucket is served from here only while the stored
// rows it sums and every price input are exactly what they were when it was priced.
//
// An untiered bucket's money depends on its own rows alone, so buckets are kept one by one
// and any window reuses them. A tiered location's buckets depend on every row its counters
// read (the lookback and both directions), so they are kept and reused together, for one
// window.
type fleetCache struct {
	buckets      *lru.Cache[bucketKey, bucketEntry]
	locations    *lru.Cache[bucketKey, locationEntry]
	hits, misses atomic.Int64 // buckets served from memory, and priced
}

// bucketKey names a bucket (k) of a location or device; w0 and w1 only for tiered ones.
type bucketKey struct {
	account       string
	live          bool
	loc, dev      string
	dir, agg      string
	k             uint32
	w0, w1, lookb int64
}

// pricedUnder is what a cached value was priced under besides its rows.
type pricedUnder struct {
	epoch, zone string
	bits        uint16
	fp          uint64
}

type bucketEntry struct {
	under pricedUnder
	sum   fleetSum
}

type locationEntry struct {
	under pricedUnder
	sums  []fleetSum
}

func newFleetCache() *fleetCache {
	b, err := lru.New[bucketKey, bucketEntry](fleetCacheBuckets)
	if err != nil {
		panic(err)
	}
	l, err := lru.New[bucketKey, locationEntry](fleetCacheLocations)
	if err != nil {
		panic(err)
	}
	return &fleetCache{buckets: b, locations: l}
}

// fleetEpoch is the scope's pricing epoch when fleet buckets may be cached, else "".
func (c *Pricer) fleetEpoch(ctx context.Context, scope kwhouse.Scope) string {
	if c.fleetCache == nil {
		return ""
	}
	return c.tariffs.PricingEpoch(ctx, scope)
}

// bucketPrint is a row of fleet_cells.sql.
type bucketPrint struct {
	loc, dev string
	k        uint32
	fp       uint64
}

// fleetPrints reads the fingerprints of a task's buckets (tiered: of its locations).
func (c *Pricer) fleetPrints(ctx context.Context, scope kwhouse.Scope, req FleetRequest, t fleetTask,
	plans map[string]tariffs.Plan) ([]bucketPrint, error) {
	b := t.batch
	args := []any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("locs", chstore.Set(b.ids)), chstore.Named("dir", req.Direction), chstore.Named("tz", b.zone),
		chstore.Named("w0", uint32(req.Start.Unix())), chstore.Named("w1", uint32(req.End.Unix()))}
	if b.tiered {
		lookbacks, lookback := make([]uint32, len(b.ids)), req.Start.Unix()
		for i, id := range b.ids {
			lookbacks[i], lookback = uint32(plans[id].Lookback), min(lookback, plans[id].Lookback)
		}
		args = append(args, chstore.Named("lookback", uint32(lookback)), chstore.Named("act_loc", b.ids),
			chstore.Named("lookbacks", lookbacks))
	}
	var buf bytes.Buffer
	shape := fleetShape{Aggregation: req.Aggregation, Devices: req.GroupBy == GroupDevice, Tiered: b.tiered}
	if err := templates.ExecuteTemplate(&buf, "fleet_cells", shape); err != nil {
		return nil, fmt.Errorf("render fleet cells query: %w", err)
	}
	rows, err := c.db.Query(ctx, fleetCellsStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("fleet cells query: %w", err)
	}
	defer rows.Close()
	var out []bucketPrint
	for rows.Next() {
		var p bucketPrint
		if err := rows.Scan(&p.loc, &p.dev, &p.k, &p.fp); err != nil {
			return nil, fmt.Errorf("scan fleet cell: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// fleetCached answers a task from cached buckets where their rows and prices are
// unchanged, and prices the rest: an untiered location from its first changed bucket on,
// a tiered location whole.
func (c *Pricer) fleetCached(ctx context.Context, scope kwhouse.Scope, req FleetRequest, t fleetTask,
	plans map[string]tariffs.Plan, epoch string) ([]fleetSum, error) {
	prints, err := c.fleetPrints(ctx, scope, req, t, plans)
	if err != nil {
		return nil, err
	}
	under := func(loc string, fp uint64) pricedUnder {
		return pricedUnder{epoch: epoch, zone: t.batch.zone, bits: plans[loc].TariffBits(), fp: fp}
	}
	var hits []fleetSum
	var missed map[string]uint32 // location → its first changed bucket
	if t.batch.tiered {
		hits, missed = c.tieredHits(scope, req, prints, plans, under)
	} else {
		hits, missed = c.bucketHits(scope, req, prints, under)
	}
	c.fleetCache.hits.Add(int64(len(hits)))
	if len(missed) == 0 {
		return hits, nil
	}
	sub, ids := req, make([]string, 0, len(missed))
	from := req.Start.Unix()
	first := int64(-1)
	for _, id := range t.batch.ids {
		if k, ok := missed[id]; ok {
			ids = append(ids, id)
			if first < 0 || int64(k) < first {
				first = int64(k)
			}
		}
	}
	if !t.batch.tiered && first > from {
		from = first
	}
	sub.Start = time.Unix(from, 0).UTC()
	t.cells = true
	priced, err := c.fleetPriced(ctx, scope, sub, t, ids, plans)
	if err != nil {
		return nil, err
	}
	c.fleetCache.misses.Add(int64(len(priced)))
	c.keep(scope, req, t.batch.tiered, priced, plans, under)
	return mergeHits(priced, hits, missed, uint32(from), t.batch.tiered), nil
}

func (c *Pricer) keyOf(scope kwhouse.Scope, req FleetRequest, loc, dev string, k uint32) bucketKey {
	return bucketKey{account: scope.AccountID, live: scope.LiveMode, loc: loc, dev: dev, dir: req.Direction,
		agg: req.Aggregation, k: k}
}

// tieredKeyOf names a tiered location's (or device's) buckets of one window.
func (c *Pricer) tieredKeyOf(scope kwhouse.Scope, req FleetRequest, loc, dev string, lookback int64) bucketKey {
	k := c.keyOf(scope, req, loc, dev, 0)
	k.w0, k.w1, k.lookb = req.Start.Unix(), req.End.Unix(), lookback
	return k
}

// bucketHits returns the cached untiered buckets whose rows and prices are unchanged, and
// for every other location its first changed bucket.
func (c *Pricer) bucketHits(scope kwhouse.Scope, req FleetRequest, prints []bucketPrint,
	under func(string, uint64) pricedUnder) ([]fleetSum, map[string]uint32) {
	var hits []fleetSum
	missed := map[string]uint32{}
	for _, p := range prints {
		e, ok := c.fleetCache.buckets.Get(c.keyOf(scope, req, p.loc, p.dev, p.k))
		if ok && e.under == under(p.loc, p.fp) {
			hits = append(hits, e.sum)
			continue
		}
		if k, seen := missed[p.loc]; !seen || p.k < k {
			missed[p.loc] = p.k
		}
	}
	return hits, missed
}

// tieredHits returns the cached buckets of tiered locations none of whose rows or prices
// changed, and the other locations.
func (c *Pricer) tieredHits(scope kwhouse.Scope, req FleetRequest, prints []bucketPrint, plans map[string]tariffs.Plan,
	under func(string, uint64) pricedUnder) ([]fleetSum, map[string]uint32) {
	var hits []fleetSum
	missed := map[string]uint32{}
	for _, p := range prints {
		e, ok := c.fleetCache.locations.Get(c.tieredKeyOf(scope, req, p.loc, p.dev, plans[p.loc].Lookback))
		if ok && e.under == under(p.loc, p.fp) {
			hits = append(hits, e.sums...)
			continue
		}
		missed[p.loc] = 0
	}
	return hits, missed
}

// keep caches the priced sums that read their fingerprints and counted no reading twice.
func (c *Pricer) keep(scope kwhouse.Scope, req FleetRequest, tiered bool, priced []fleetSum, plans map[string]tariffs.Plan,
	under func(string, uint64) pricedUnder) {
	if !tiered {
		for _, s := range priced {
			if s.hashed && s.Dirty == 0 {
				c.fleetCache.buckets.Add(c.keyOf(scope, req, s.Loc, s.Dev, s.Key), bucketEntry{under: under(s.Loc, s.Fp), sum: s})
			}
		}
		return
	}
	type group struct{ loc, dev string }
	byGroup, unfit := map[group][]fleetSum{}, map[group]bool{}
	for _, s := range priced {
		g := group{s.Loc, s.Dev}
		byGroup[g] = append(byGroup[g], s)
		unfit[g] = unfit[g] || !s.hashed || s.Dirty != 0 || s.Fp != byGroup[g][0].Fp
	}
	for g, sums := range byGroup {
		if !unfit[g] {
			key := c.tieredKeyOf(scope, req, g.loc, g.dev, plans[g.loc].Lookback)
			c.fleetCache.locations.Add(key, locationEntry{under: under(g.loc, sums[0].Fp), sums: sums})
		}
	}
}

// mergeHits adds to the priced sums the cached ones they do not replace: of an untiered
// location priced again, its buckets before from; of a tiered one, none.
func mergeHits(priced, hits []fleetSum, missed map[string]uint32, from uint32, tiered bool) []fleetSum {
	type key struct {
		loc, dev string
		k        uint32
	}
	seen := make(map[key]bool, len(priced))
	for _, s := range priced {
		seen[key{s.Loc, s.Dev, s.Key}] = true
	}
	out := priced
	for _, h := range hits {
		if _, m := missed[h.Loc]; (m && (tiered || h.Key >= from)) || seen[key{h.Loc, h.Dev, h.Key}] {
			continue
		}
		out = append(out, h)
	}
	return out
}
