package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/query"
)

// pricerLag times the background pricer (query.BucketPricer, its clock an hour after the
// day it writes ends, so that day counts as recent): one pass with whatever is not priced
// yet, one with nothing changed, then — after a new day of readings is written for every
// location of the fixture — the passes until a fleet request over that day prices
// nothing: the lag between a day of readings landing and dashboards being served it from
// priced buckets (plus up to costs.pricer_interval before the pass starts). The day is
// the one after the fixture's latest reading (1 January 2025 on the first run, the next
// day on each run after): new readings, priced by the fixture's tariffs after their
// contracts end (confidence 0.8, docs/costs.md) and its market prices, which run to
// February 2025.
func pricerLag(ctx context.Context, a *app.App, fx *fixture) error {
	day, err := nextLagDay(ctx, a, fx)
	if err != nil {
		return err
	}
	clock := func() time.Time { return day.Add(25 * time.Hour) }
	p := query.NewPricer(a.DB, a.Tariffs, a.Catalog, a.Carbon, clock)
	p.UsePricedBuckets(true, nil)
	bp := query.NewBucketPricer(p, a.Cache, a.Log, 30*time.Second, config.Defaults().Costs.PricerDays)
	pass := func(what string) error {
		before, t0 := p.BucketCounts(), time.Now()
		if err := bp.Pass(ctx); err != nil {
			return fmt.Errorf("pricer pass (%s): %w", what, err)
		}
		after := p.BucketCounts()
		fmt.Printf("%-58s %8.1f s  %d buckets priced, %d served\n", "pricer lag: one pass, "+what, time.Since(t0).Seconds(),
			after.Priced-before.Priced, after.Served-before.Served)
		return nil
	}
	if err := pass("first of this run (prices what is not priced yet)"); err != nil {
		return err
	}
	if err := pass("nothing changed"); err != nil {
		return err
	}
	t0 := time.Now()
	if err := writeLagDay(ctx, a, fx, day); err != nil {
		return err
	}
	fmt.Printf("%-58s %8.1f s  %d readings\n", "pricer lag: wrote a day of readings", time.Since(t0).Seconds(), len(fx.locations)*48)
	start := time.Now()
	for i := 1; ; i++ {
		if err := pass(fmt.Sprintf("%d after the day was written", i)); err != nil {
			return err
		}
		left, err := unpricedOfDay(ctx, a, fx, day, clock)
		if err != nil {
			return err
		}
		if left == 0 {
			fmt.Printf("%-58s %8.1f s  (%d locations, a request over the day then priced nothing)\n",
				"pricer lag after a day of readings", time.Since(start).Seconds(), len(fx.locations))
			break
		}
		if i == 3 {
			return fmt.Errorf("pricer lag: %d buckets of the day still unpriced after %d passes", left, i)
		}
	}
	return nil
}

// nextLagDay is the UTC day after the fixture's latest reading, 1 January 2025 at the earliest.
func nextLagDay(ctx context.Context, a *app.App, fx *fixture) (time.Time, error) {
	var last time.Time
	err := a.DB.QueryRow(ctx, chstore.Tool("SELECT max(start_time) FROM meter_records WHERE account_id = ? AND live_mode = 0"),
		fx.scope.AccountID).Scan(&last)
	if err != nil {
		return time.Time{}, fmt.Errorf("the fixture's latest reading: %w", err)
	}
	day := last.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	return maxTime(day, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// unpricedOfDay asks the fleet over day of a new Pricer and returns how many buckets it
// priced (0: the background pricer left nothing for a dashboard to price).
func unpricedOfDay(ctx context.Context, a *app.App, fx *fixture, day time.Time, clock func() time.Time) (int64, error) {
	p := query.NewPricer(a.DB, a.Tariffs, a.Catalog, a.Carbon, clock)
	p.UsePricedBuckets(true, nil)
	req := query.FleetRequest{Start: day, End: day.AddDate(0, 0, 1), Direction: "IMPORT",
		Aggregation: query.AggregationDay, GroupBy: query.GroupLocation, All: true}
	if _, err := p.Fleet(ctx, fx.scope, req); err != nil {
		return 0, fmt.Errorf("fleet over the day: %w", err)
	}
	return p.BucketCounts().Priced, nil
}

// writeLagDay writes day's 48 half-hours for every location, loadChunk locations per insert.
func writeLagDay(ctx context.Context, a *app.App, fx *fixture, day time.Time) error {
	return marked(ctx, a, fx.scope, func() error { return writeDay(ctx, a, fx, day) })
}

// writeDay is writeLagDay's inserts.
func writeDay(ctx context.Context, a *app.App, fx *fixture, day time.Time) error {
	for first := 0; first < len(fx.locations); first += loadChunk {
		b, err := a.DB.Insert(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
			device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
			record_reference_id, batch_id, version) VALUES`))
		if err != nil {
			return err
		}
		for i := first; i < min(first+loadChunk, len(fx.locations)); i++ {
			for t := day; t.Before(day.AddDate(0, 0, 1)); t = t.Add(30 * time.Minute) {
				err := b.Append(fx.scope.AccountID, uint8(0), fx.locations[i], "", "IMPORT", "IMPORT", t, t.Add(30*time.Minute),
					benchkit.FleetWh(i, t), 1.0, "", "", "bat_bench_lag", uint64(1))
				if err != nil {
					_ = b.Abort()
					return err
				}
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("write a day of readings: %w", err)
		}
	}
	return nil
}
