package query

import (
	"context"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// A fleet's batches split a zone's locations by tiering (fleet_sums.go), but the state
// reads of priced buckets (bucket_states.go) need not: one pair of reads can ask about a
// zone's tiered and untiered locations at once (buckets.sql, _chained). Buckets and
// counts are stored in location order, so a read of every tenth location (the tiered
// ones, say) reads the granules of all of them: the batches of one answer that share a
// zone share its state reads instead, in chunks of consecutive location ids (tiered and
// untiered together), each read once, by the first batch that needs it. A month of a
// fleet of 1,012 locations in one zone (a tiered batch of 100 and an untiered one of 912)
// makes one pair of reads of all of them instead of a pair of reads of the whole table's
// granules for each batch; a year of them, two pairs of 506 consecutive locations.

// zoneShares is the shared state reads of one zone's batches over one run of days: their
// locations in chunks of consecutive ids, in id order.
type zoneShares struct {
	run     dayRun
	parts   []*zoneStates
	batchOf map[string]int  // location → its batch (index in the zone's batches)
	sizes   []int           // locations of each batch
	partsOf [][]*zoneStates // per batch: the chunks that hold its locations, in id order
}

// zoneStates is one shared state read: a chunk of at most stateChunk locations of a zone,
// read when a batch first asks, its states split by batch as they are made, each batch's
// part dropped once taken.
type zoneStates struct {
	batch   stateBatch
	shares  *zoneShares
	mu      sync.Mutex
	read    bool
	err     error
	byBatch []dayStates
	taken   []bool
}

type stateSharesKey struct{}

// shareStates returns ctx carrying shared state reads for the batches of req where every
// batch reads the states of the whole window (bucketSums: by DAY, and on a cluster); a
// MONTH or NONE answer on one server reads month sums instead, and states only of its
// stale locations.
func (c *Pricer) shareStates(ctx context.Context, req FleetRequest, batches []fleetBatch) context.Context {
	if req.Aggregation != AggregationDay && c.db.Cluster == "" {
		return ctx
	}
	return withSharedStates(ctx, batches, func(zone string) dayRun {
		z, err := catalog.LoadZone(zone)
		if err != nil {
			return dayRun{} // matches no batch's run: the batch reads its own
		}
		return dayRunOf(req.Start, req.End, z)
	})
}

// stateChunkBuckets bounds the buckets (locations × local days) one shared pair of state
// reads asks about, unless a pricing batch's fleetChunk locations hold more (a year by
// DAY). A pair costs 18.16 several ms of CPU before its first row (bucket_counts for one
// location alone, 3–7 ms: a UNION of two SELECTs with their IN subqueries) and keeps two
// cores busy on its own, so a month of 1,001 locations is one pair: its state reads cost
// 26 ms of ClickHouse CPU an answer, against 40 ms as two pairs of 500.
const stateChunkBuckets = 64000

// stateChunk is how many locations one shared state read asks about over days local days.
func stateChunk(days int) int {
	return max(fleetChunk, stateChunkBuckets/max(days, 1))
}

// withSharedStates returns ctx carrying shared state reads for batches over the local days
// of run: each zone of two batches or more, its locations in as few chunks of consecutive
// ids as stateChunk allows, of about equal size (a month of 2,200 locations: two of 1,100).
func withSharedStates(ctx context.Context, batches []fleetBatch, run func(zone string) dayRun) context.Context {
	byZone := map[string][]fleetBatch{}
	for _, b := range batches {
		byZone[b.zone] = append(byZone[b.zone], b)
	}
	shares := map[string]*zoneShares{}
	for zone, bs := range byZone {
		if len(bs) >= 2 {
			shares[zone] = newZoneShares(zone, bs, run(zone))
		}
	}
	if len(shares) == 0 {
		return ctx
	}
	return context.WithValue(ctx, stateSharesKey{}, shares)
}

// newZoneShares splits the locations of a zone's batches into chunks of consecutive ids.
func newZoneShares(zone string, bs []fleetBatch, run dayRun) *zoneShares {
	zs := &zoneShares{run: run, batchOf: map[string]int{}, sizes: make([]int, len(bs)), partsOf: make([][]*zoneStates, len(bs))}
	var ids []string
	for i, b := range bs {
		ids = append(ids, b.ids...)
		zs.sizes[i] = len(b.ids)
		for _, id := range b.ids {
			zs.batchOf[id] = i
		}
	}
	slices.Sort(ids)
	per := stateChunk(run.days())
	n := (len(ids) + per - 1) / per
	for k := 0; k < n; k++ {
		part := ids[k*len(ids)/n : (k+1)*len(ids)/n]
		z := &zoneStates{batch: stateBatch{zone: zone, ids: part}, shares: zs, taken: make([]bool, len(bs))}
		in := make([]bool, len(bs))
		for _, id := range part {
			i := zs.batchOf[id]
			if bs[i].tiered {
				z.batch.chained = append(z.batch.chained, id)
			}
			in[i] = true
		}
		for i := range in {
			if in[i] {
				zs.partsOf[i] = append(zs.partsOf[i], z)
			}
		}
		zs.parts = append(zs.parts, z)
	}
	return zs
}

// sharedZone returns the shared reads that cover batch b over run and b's index among
// their batches, or nil: b's zone has them, over the same days, and b is one of its
// batches (a part of one, as a MONTH answer's stale locations, reads its own).
func sharedZone(ctx context.Context, b fleetBatch, run dayRun) (*zoneShares, int) {
	shares, _ := ctx.Value(stateSharesKey{}).(map[string]*zoneShares)
	zs := shares[b.zone]
	if zs == nil || !sameRun(zs.run, run) || len(b.ids) == 0 {
		return nil, 0
	}
	i, ok := zs.batchOf[b.ids[0]]
	if !ok || zs.sizes[i] != len(b.ids) {
		return nil, 0
	}
	for _, id := range b.ids {
		if j, ok := zs.batchOf[id]; !ok || j != i {
			return nil, 0
		}
	}
	return zs, i
}

// sameRun reports whether two runs are the same local days and window.
func sameRun(a, b dayRun) bool {
	return a.first.Equal(b.first) && a.end.Equal(b.end) && a.w0.Equal(b.w0) && a.w1.Equal(b.w1)
}

// statesOf returns the states of batch i, in (location, device, day) order, from the
// chunks that hold its locations (consecutive ids: their states follow each other). The
// chunks are taken side by side, fleetParallel at a time: taken one after another, the
// zone's batches would all wait on the first chunk's read, then all on the second's.
func (zs *zoneShares) statesOf(ctx context.Context, c *Pricer, scope kwhouse.Scope, daily FleetRequest,
	i int) (dayStates, error) {
	parts := make([]dayStates, len(zs.partsOf[i]))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for k, z := range zs.partsOf[i] {
		g.Go(func() (err error) {
			parts[k], err = z.take(gctx, c, scope, daily, i)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return dayStates{}, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	served, stale := 0, 0
	for _, p := range parts {
		served, stale = served+len(p.served), stale+len(p.stale)
	}
	out := dayStates{served: make([]fleetSum, 0, served), stale: make([]bucketState, 0, stale)}
	for _, p := range parts {
		out.served, out.stale = append(out.served, p.served...), append(out.stale, p.stale...)
	}
	return out, nil
}

// take returns batch i's states in the chunk, read when first asked; a batch that asks
// again (its part already handed out) reads the chunk once more.
func (z *zoneStates) take(ctx context.Context, c *Pricer, scope kwhouse.Scope, daily FleetRequest,
	i int) (dayStates, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	group := func(loc string) int { return z.shares.batchOf[loc] }
	n := len(z.taken)
	if z.taken[i] {
		again, err := c.readStates(ctx, scope, daily, z.batch, z.shares.run, group, n)
		if err != nil {
			return dayStates{}, err
		}
		return again[i], nil
	}
	if !z.read {
		z.byBatch, z.err = c.readStates(ctx, scope, daily, z.batch, z.shares.run, group, n)
		z.read = true
	}
	if z.err != nil {
		return dayStates{}, z.err
	}
	out := z.byBatch[i]
	z.byBatch[i], z.taken[i] = dayStates{}, true
	return out, nil
}
