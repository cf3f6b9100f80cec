package query

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var fleetCellsStmt = chstore.Register("query.fleet_cells", "fleet_cells.sql: fingerprints of the rows of a fleet's buckets")

// defaultFleetCacheBuckets is the fleet cache's size until SetFleetCache (config costs.fleet_cache_buckets).
const defaultFleetCacheBuckets = 400_000

// lookbackBucket is the bucket fleet_cells.sql puts a tiered location's lookback rows in.
const lookbackBucket = math.MaxUint32

// fleetCache keeps priced fleet buckets. A bucket is only ever read back under the pricing
// epoch, zone, tariff bits and row fingerprints it was priced under, the fingerprints being
// the ones its own pricing query read: it is served from here only while the stored rows it
// sums and every price input are exactly what they were when it was priced.
//
// An untiered bucket's money depends on its own rows alone. A tiered bucket's depends on
// every row its counters read before it too — both directions, from the tier lookback on —
// so its chain fingerprint sums those of the lookback and of every bucket up to it.
type fleetCache struct {
	buckets      *lru.Cache[bucketKey, bucketEntry]
	hits, misses atomic.Int64 // buckets served from memory, and priced
}

// bucketKey names a bucket (k) of a location or device; lookb is a tiered one's lookback.
type bucketKey struct {
	account  string
	live     bool
	loc, dev string
	dir, agg string
	k        uint32
	lookb    int64
}

// pricedUnder is what a cached bucket was priced under besides its rows' fingerprints.
type pricedUnder struct {
	epoch, zone string
	bits        uint16
	fp, chain   uint64
}

type bucketEntry struct {
	under pricedUnder
	sum   fleetSum
}

// newFleetCache returns a cache of at most size buckets (about 250 bytes each with its key).
func newFleetCache(size int) *fleetCache {
	b, err := lru.New[bucketKey, bucketEntry](size)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &fleetCache{buckets: b}
}

// SetFleetCache keeps up to buckets priced fleet buckets in memory; 0 keeps none. It is
// called once, before the Pricer serves.
func (c *Pricer) SetFleetCache(buckets int) {
	c.fleetCache = nil
	if buckets > 0 {
		c.fleetCache = newFleetCache(buckets)
	}
}

// fleetEpoch is the scope's pricing epoch when fleet buckets may be cached, else "".
func (c *Pricer) fleetEpoch(ctx context.Context, scope kwhouse.Scope) string {
	if c.fleetCache == nil {
		return ""
	}
	return c.tariffs.PricingEpoch(ctx, scope)
}

// bucketPrint is a row of fleet_cells.sql, with a tiered bucket's chain fingerprint.
type bucketPrint struct {
	loc, dev  string
	k         uint32
	fp, chain uint64
}

// fleetPrints reads the fingerprints of a batch's buckets, in location, device and bucket order.
func (c *Pricer) fleetPrints(ctx context.Context, scope kwhouse.Scope, req FleetRequest, b fleetBatch,
	plans map[string]tariffs.Plan) ([]bucketPrint, error) {
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.loc < b.loc || a.loc == b.loc && (a.dev < b.dev || a.dev == b.dev && a.k < b.k)
	})
	if b.tiered {
		out = chainPrints(out)
	}
	return out, nil
}

// chainPrints gives each tiered bucket its chain: the lookback's fingerprint (the last
// bucket of its location and device, then dropped) plus those of its buckets up to it.
func chainPrints(prints []bucketPrint) []bucketPrint {
	out := prints[:0]
	for i := 0; i < len(prints); {
		j := i
		for j < len(prints) && prints[j].loc == prints[i].loc && prints[j].dev == prints[i].dev {
			j++
		}
		var chain uint64
		if prints[j-1].k == lookbackBucket {
			chain = prints[j-1].fp
		}
		for _, p := range prints[i:j] {
			if p.k != lookbackBucket {
				chain += p.fp
				p.chain = chain
				out = append(out, p)
			}
		}
		i = j
	}
	return out
}

// chainSums gives each priced tiered bucket its chain, as chainPrints does; sums are in
// location, device and bucket order.
func chainSums(sums []fleetSum) []uint64 {
	out := make([]uint64, len(sums))
	var chain uint64
	for i, s := range sums {
		if i == 0 || s.Loc != sums[i-1].Loc || s.Dev != sums[i-1].Dev {
			chain = s.Pre
		}
		chain += s.Fp
		out[i] = chain
	}
	return out
}

// batchLook is what the cache holds for a batch: the buckets it can serve, and the
// locations to price again (in batch order) from their batch's first changed bucket.
type batchLook struct {
	batch     fleetBatch
	hits      []fleetSum
	missed    map[string]uint32 // location → its first changed bucket
	missedIDs []string
	from      time.Time
	under     func(loc string, fp, chain uint64) pricedUnder
}

// fleetLooks reads the fingerprints of every batch, fleetParallel at a time, and looks
// their buckets up.
func (c *Pricer) fleetLooks(ctx context.Context, scope kwhouse.Scope, req FleetRequest, batches []fleetBatch,
	plans map[string]tariffs.Plan, epoch string) ([]batchLook, error) {
	looks := make([]batchLook, len(batches))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for i, b := range batches {
		g.Go(func() error {
			prints, err := c.fleetPrints(gctx, scope, req, b, plans)
			if err != nil {
				return err
			}
			l := batchLook{batch: b, under: func(loc string, fp, chain uint64) pricedUnder {
				return pricedUnder{epoch: epoch, zone: b.zone, bits: plans[loc].TariffBits(), fp: fp, chain: chain}
			}}
			l.hits, l.missed = c.bucketHits(scope, req, b.tiered, prints, plans, l.under)
			var from int64
			l.missedIDs, from = missedFrom(b.ids, l.missed, req.Start.Unix())
			l.from = time.Unix(from, 0).UTC()
			c.fleetCache.hits.Add(int64(len(l.hits)))
			looks[i] = l
			return nil
		})
	}
	return looks, g.Wait()
}

// settle caches what the jobs priced and adds the buckets served from the cache.
func (c *Pricer) settle(scope kwhouse.Scope, req FleetRequest, looks []batchLook, jobs []fleetJob, results [][]fleetSum,
	plans map[string]tariffs.Plan) []fleetSum {
	priced := make([][]fleetSum, len(looks))
	for i, j := range jobs {
		priced[j.batch] = append(priced[j.batch], results[i]...)
	}
	var out []fleetSum
	for i, l := range looks {
		c.fleetCache.misses.Add(int64(len(priced[i])))
		c.keep(scope, req, l.batch.tiered, priced[i], plans, l.under)
		for _, s := range mergeHits(priced[i], l.hits, l.missed, uint32(l.from.Unix())) {
			// A tiered bucket of the other direction's records only is no answer row.
			if !l.batch.tiered || s.NOut > 0 || !s.hashed {
				out = append(out, s)
			}
		}
	}
	return out
}

// missedFrom returns the missed locations in batch order and where pricing starts: the
// first changed bucket of any of them, not before w0.
func missedFrom(batch []string, missed map[string]uint32, w0 int64) ([]string, int64) {
	ids, first := make([]string, 0, len(missed)), int64(-1)
	for _, id := range batch {
		if k, ok := missed[id]; ok {
			ids = append(ids, id)
			if first < 0 || int64(k) < first {
				first = int64(k)
			}
		}
	}
	return ids, max(first, w0)
}

func (c *Pricer) keyOf(scope kwhouse.Scope, req FleetRequest, tiered bool, loc, dev string, k uint32,
	plans map[string]tariffs.Plan) bucketKey {
	key := bucketKey{account: scope.AccountID, live: scope.LiveMode, loc: loc, dev: dev, dir: req.Direction,
		agg: req.Aggregation, k: k}
	if tiered {
		key.lookb = plans[loc].Lookback
	}
	return key
}

// bucketHits returns the cached buckets whose rows and prices are unchanged, and for every
// other location its first changed bucket.
func (c *Pricer) bucketHits(scope kwhouse.Scope, req FleetRequest, tiered bool, prints []bucketPrint,
	plans map[string]tariffs.Plan, under func(string, uint64, uint64) pricedUnder) ([]fleetSum, map[string]uint32) {
	var hits []fleetSum
	missed := map[string]uint32{}
	for _, p := range prints {
		e, ok := c.fleetCache.buckets.Get(c.keyOf(scope, req, tiered, p.loc, p.dev, p.k, plans))
		if ok && e.under == under(p.loc, p.fp, p.chain) {
			hits = append(hits, e.sum)
			continue
		}
		if k, seen := missed[p.loc]; !seen || p.k < k {
			missed[p.loc] = p.k
		}
	}
	return hits, missed
}

// keep caches the priced sums that read their fingerprints and counted no reading twice.
func (c *Pricer) keep(scope kwhouse.Scope, req FleetRequest, tiered bool, priced []fleetSum, plans map[string]tariffs.Plan,
	under func(string, uint64, uint64) pricedUnder) {
	var chains []uint64
	if tiered {
		chains = chainSums(priced)
	}
	for i, s := range priced {
		if !s.hashed || s.Dirty != 0 {
			continue
		}
		var chain uint64
		if tiered {
			chain = chains[i]
		}
		key := c.keyOf(scope, req, tiered, s.Loc, s.Dev, s.Key, plans)
		c.fleetCache.buckets.Add(key, bucketEntry{under: under(s.Loc, s.Fp, chain), sum: s})
	}
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
	out := priced
	for _, h := range hits {
		if _, m := missed[h.Loc]; (m && h.Key >= from) || seen[key{h.Loc, h.Dev, h.Key}] {
			continue
		}
		out = append(out, h)
	}
	return out
}
