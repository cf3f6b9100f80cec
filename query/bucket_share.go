package query

import (
	"context"
	"slices"
	"sync"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// A fleet's batches split a zone's locations by tiering (fleet_sums.go), but the state
// reads of priced buckets (bucket_states.go) need not: one pair of reads can ask about a
// zone's tiered and untiered locations at once (buckets.sql, _chained). Buckets and
// counts are stored in location order, so a read of every tenth location (the tiered
// ones, say) reads the granules of all of them: the batches of one answer that share a
// zone share its state reads instead, in chunks of consecutive location ids (tiered and
// untiered together), each read once, by the first batch that needs it. A fleet of 1,012
// locations in one zone (a tiered batch of 100 and an untiered one of 912) makes two
// reads of 506 consecutive locations side by side instead of two reads of the whole
// table's granules each.

// zoneShares is the shared state reads of one zone over one run of days: its locations
// in chunks of consecutive ids, in id order.
type zoneShares struct {
	run   dayRun
	parts []*zoneStates
	of    map[string]*zoneStates // location → its chunk
}

// zoneStates is one shared state read: a chunk of at most fleetChunk locations of a zone,
// read when a batch first asks, and dropped once every batch that reads it took its part.
type zoneStates struct {
	batch  stateBatch
	run    dayRun
	mu     sync.Mutex
	done   bool // read (states or err set)
	users  int  // batches yet to take their part
	states []bucketState
	err    error
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

// withSharedStates returns ctx carrying shared state reads for batches over the local days
// of run: each zone of two batches or more, its locations in as few chunks of consecutive
// ids as fleetChunk allows, of about equal size (1,200 locations: two of 600).
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
	var ids []string
	chained := map[string]bool{}
	for _, b := range bs {
		ids = append(ids, b.ids...)
		for _, id := range chainedOf(b) {
			chained[id] = true
		}
	}
	slices.Sort(ids)
	n := (len(ids) + fleetChunk - 1) / fleetChunk
	zs := &zoneShares{run: run, of: make(map[string]*zoneStates, len(ids))}
	for i := 0; i < n; i++ {
		part := ids[i*len(ids)/n : (i+1)*len(ids)/n]
		z := &zoneStates{batch: stateBatch{zone: zone, ids: part}, run: run}
		for _, id := range part {
			if chained[id] {
				z.batch.chained = append(z.batch.chained, id)
			}
			zs.of[id] = z
		}
		zs.parts = append(zs.parts, z)
	}
	for _, b := range bs {
		for _, z := range zs.partsOf(b) {
			z.users++
		}
	}
	return zs
}

// partsOf returns the chunks that hold b's locations, in id order, or nil when one of them
// is in none.
func (zs *zoneShares) partsOf(b fleetBatch) []*zoneStates {
	in := map[*zoneStates]bool{}
	for _, id := range b.ids {
		z := zs.of[id]
		if z == nil {
			return nil
		}
		in[z] = true
	}
	var out []*zoneStates
	for _, z := range zs.parts {
		if in[z] {
			out = append(out, z)
		}
	}
	return out
}

// sharedZone returns the shared reads that cover batch b over run, or nil: b's zone has
// them, over the same days, asking about every location of b.
func sharedZone(ctx context.Context, b fleetBatch, run dayRun) *zoneShares {
	shares, _ := ctx.Value(stateSharesKey{}).(map[string]*zoneShares)
	zs := shares[b.zone]
	if zs == nil || !sameRun(zs.run, run) || zs.partsOf(b) == nil {
		return nil
	}
	return zs
}

// sameRun reports whether two runs are the same local days and window.
func sameRun(a, b dayRun) bool {
	return a.first.Equal(b.first) && a.end.Equal(b.end) && a.w0.Equal(b.w0) && a.w1.Equal(b.w1)
}

// statesOf returns the states of b's locations, in (location, device, day) order, from
// the chunks that hold them (chunks are consecutive ids: their states follow each other).
func (zs *zoneShares) statesOf(ctx context.Context, c *Pricer, scope kwhouse.Scope, daily FleetRequest,
	b fleetBatch) ([]bucketState, error) {
	mine := make(map[string]bool, len(b.ids))
	for _, id := range b.ids {
		mine[id] = true
	}
	var out []bucketState
	for _, z := range zs.partsOf(b) {
		part, err := z.take(ctx, c, scope, daily, mine)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// take returns the states of the locations mine of the chunk, read when first asked. A
// batch beyond those counted (a MONTH answer's stale days on a cluster, say) after the
// chunk was dropped reads its part on its own.
func (z *zoneStates) take(ctx context.Context, c *Pricer, scope kwhouse.Scope, daily FleetRequest,
	mine map[string]bool) ([]bucketState, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	states, err := z.states, z.err
	if !z.done {
		states, err = c.readStates(ctx, scope, daily, z.batch, z.run)
		z.done, z.states, z.err = true, states, err
	} else if z.users <= 0 && err == nil {
		states, err = c.readStates(ctx, scope, daily, z.batch, z.run)
	}
	if err != nil {
		return nil, err
	}
	if z.users--; z.users <= 0 {
		z.states = nil
	}
	n := 0
	for i := range states {
		if mine[states[i].Loc] {
			n++
		}
	}
	out := make([]bucketState, 0, n)
	for _, s := range states {
		if mine[s.Loc] {
			out = append(out, s)
		}
	}
	return out, nil
}
