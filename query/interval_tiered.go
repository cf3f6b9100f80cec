package query

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse/tariffs"
)

// intervalRows prices an interval request. A tiered location's days and months are summed
// by the fleet query for that one location: it reads the records once, where cost.sql's
// per-record JOIN reads them twice and takes about twice as long (docs/benchmarks.md, "Costs").
// Records, sessions, devices and carbon keep cost.sql's per-record rows.
func (c *Pricer) intervalRows(ctx context.Context, a costArgs, req CostRequest) ([]costRow, error) {
	if !a.plan.Tiered || !a.daily || a.session != "" || a.device != "" || req.IncludeCarbon || c.joinOnly {
		return c.run(ctx, a)
	}
	if err := c.tariffs.EnsureRates(ctx, a.scope, a.plan); err != nil {
		return nil, err
	}
	fr := FleetRequest{Start: time.Unix(a.w0, 0).UTC(), End: time.Unix(a.w1, 0).UTC(), Direction: a.direction,
		Aggregation: AggregationDay, GroupBy: GroupLocation}
	// One location's readings are few: deduplicated at once (argMax), not after a first read.
	t := fleetTask{batch: fleetBatch{zone: a.zone, tiered: true, ids: []string{a.location}}}
	sums, err := c.fleetQuery(ctx, a.scope, fr, t, t.batch.ids, dedupArgMax, map[string]tariffs.Plan{a.location: a.plan})
	if err != nil {
		return nil, err
	}
	rows := make([]costRow, len(sums))
	for i, s := range sums {
		rows[i] = costRow{Key: s.Key, Energy: s.Energy, Money: s.Money, MoneyCommodity: s.MoneyCom,
			MoneyNonCommodity: s.MoneyNon, Confidence: s.Confidence, NImport: s.NImport, NExport: s.NExport}
	}
	return rows, nil
}
