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
// zone's tiered and untiered locations at once (buckets.sql, _chained), and each read of
// ClickHouse costs about the same whether it returns a few hundred rows or a few
// thousand. So the batches of one answer that share a zone share its state read: a page
// of 1,000 rows by id (a tiered and an untiered batch) makes two reads instead of four.

// zoneStates is one shared state read: the locations of the batches of a zone (at most
// fleetChunk), read once when the first of them asks.
type zoneStates struct {
	batch  stateBatch
	run    dayRun
	member map[string]bool
	once   sync.Once
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
// of run: the batches of each zone, in order, while together at most fleetChunk locations
// (larger fleets read per batch, as two reads of 1,000 locations run side by side).
func withSharedStates(ctx context.Context, batches []fleetBatch, run func(zone string) dayRun) context.Context {
	byZone := map[string][]fleetBatch{}
	for _, b := range batches {
		byZone[b.zone] = append(byZone[b.zone], b)
	}
	shares := map[string]*zoneStates{}
	for zone, bs := range byZone {
		if len(bs) < 2 {
			continue
		}
		z := &zoneStates{batch: stateBatch{zone: zone}, run: run(zone), member: map[string]bool{}}
		for _, b := range bs {
			z.batch.ids = append(z.batch.ids, b.ids...)
			z.batch.chained = append(z.batch.chained, chainedOf(b)...)
		}
		if len(z.batch.ids) > fleetChunk {
			continue
		}
		slices.Sort(z.batch.ids)
		for _, id := range z.batch.ids {
			z.member[id] = true
		}
		shares[zone] = z
	}
	if len(shares) == 0 {
		return ctx
	}
	return context.WithValue(ctx, stateSharesKey{}, shares)
}

// sharedZone returns the shared read that covers batch b over run, or nil: b's zone has
// one, over the same days, asking about every location of b.
func sharedZone(ctx context.Context, b fleetBatch, run dayRun) *zoneStates {
	shares, _ := ctx.Value(stateSharesKey{}).(map[string]*zoneStates)
	z := shares[b.zone]
	if z == nil || !sameRun(z.run, run) {
		return nil
	}
	for _, id := range b.ids {
		if !z.member[id] {
			return nil
		}
	}
	return z
}

// sameRun reports whether two runs are the same local days and window.
func sameRun(a, b dayRun) bool {
	return a.first.Equal(b.first) && a.end.Equal(b.end) && a.w0.Equal(b.w0) && a.w1.Equal(b.w1)
}

// statesOf returns the states of b's locations from the zone's read, made when first asked.
func (z *zoneStates) statesOf(ctx context.Context, c *Pricer, scope kwhouse.Scope, daily FleetRequest,
	b fleetBatch) ([]bucketState, error) {
	z.once.Do(func() { z.states, z.err = c.readStates(ctx, scope, daily, z.batch, z.run) })
	if z.err != nil {
		return nil, z.err
	}
	mine := make(map[string]bool, len(b.ids))
	for _, id := range b.ids {
		mine[id] = true
	}
	out := make([]bucketState, 0, len(z.states)*len(b.ids)/max(1, len(z.batch.ids)))
	for _, s := range z.states {
		if mine[s.Loc] {
			out = append(out, s)
		}
	}
	return out, nil
}
