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

// lagDay is the day of readings the pricer-lag shape writes again for every location: the
// fixture's last, so that it is priced under the fixture's tariffs and market prices.
var lagDay = time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)

// lagClock is the background pricer's clock in the lag shape: an hour after lagDay ends
// (Europe/London is UTC in winter), so the day counts as recent.
var lagClock = lagDay.Add(25 * time.Hour)

// pricerLag times the background pricer (query.BucketPricer, its clock at lagClock): one
// pass with nothing priced yet, one with nothing changed, then — after a day of readings
// is written for every location of the fixture — the passes until a fleet request over
// that day prices nothing: the lag between a day of readings landing and dashboards
// being served it from priced buckets (plus up to costs.pricer_interval before the pass
// starts). The day is the fixture's last, sent again with a newer version (every
// reading's second version: the dearer case, each location's readings deduplicated);
// the table is merged back to one version afterwards (OPTIMIZE … FINAL, not timed).
func pricerLag(ctx context.Context, a *app.App, fx *fixture) error {
	clock := func() time.Time { return lagClock }
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
	if err := writeLagDay(ctx, a, fx); err != nil {
		return err
	}
	fmt.Printf("%-58s %8.1f s  %d readings\n", "pricer lag: wrote a day of readings", time.Since(t0).Seconds(), len(fx.locations)*48)
	start := time.Now()
	for i := 1; ; i++ {
		if err := pass(fmt.Sprintf("%d after the day was written", i)); err != nil {
			return err
		}
		left, err := unpricedOfDay(ctx, a, fx)
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
	return mergeLagDay(ctx, a, fx)
}

// unpricedOfDay asks the fleet over lagDay of a new Pricer and returns how many buckets it
// priced (0: the background pricer left nothing for a dashboard to price).
func unpricedOfDay(ctx context.Context, a *app.App, fx *fixture) (int64, error) {
	p := query.NewPricer(a.DB, a.Tariffs, a.Catalog, a.Carbon, func() time.Time { return lagClock })
	p.UsePricedBuckets(true, nil)
	req := query.FleetRequest{Start: lagDay, End: lagDay.AddDate(0, 0, 1), Direction: "IMPORT",
		Aggregation: query.AggregationDay, GroupBy: query.GroupLocation, All: true}
	if _, err := p.Fleet(ctx, fx.scope, req); err != nil {
		return 0, fmt.Errorf("fleet over the day: %w", err)
	}
	return p.BucketCounts().Priced, nil
}

// writeLagDay writes lagDay's 48 half-hours again for every location, a newer version of
// each, loadChunk locations per insert.
func writeLagDay(ctx context.Context, a *app.App, fx *fixture) error {
	version := uint64(time.Now().UnixNano())
	for first := 0; first < len(fx.locations); first += loadChunk {
		b, err := a.DB.Insert(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
			device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
			record_reference_id, batch_id, version) VALUES`))
		if err != nil {
			return err
		}
		for i := first; i < min(first+loadChunk, len(fx.locations)); i++ {
			for t := lagDay; t.Before(lagDay.AddDate(0, 0, 1)); t = t.Add(30 * time.Minute) {
				err := b.Append(fx.scope.AccountID, uint8(0), fx.locations[i], "", "IMPORT", "IMPORT", t, t.Add(30*time.Minute),
					benchkit.FleetWh(i, t), 1.0, "", "", "bat_bench_lag", version)
				if err != nil {
					_ = b.Abort()
					return err
				}
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("write the day again: %w", err)
		}
	}
	return nil
}

// mergeLagDay merges lagDay's month back to one version of each reading, so the next
// shapes and runs read the fixture as loaded.
func mergeLagDay(ctx context.Context, a *app.App, _ *fixture) error {
	t0 := time.Now()
	if err := a.DB.Exec(ctx, chstore.Tool(onEveryShard(a, "OPTIMIZE TABLE", "meter_records", " PARTITION 202412 FINAL"))); err != nil {
		return fmt.Errorf("merge the day's versions: %w", err)
	}
	fmt.Printf("%-58s %8.1f s\n", "pricer lag: merged the day's versions (not timed)", time.Since(t0).Seconds())
	return nil
}
