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

// changeLive: before each request, a live fleet's last half hour is re-sent and the
// background pricer passes once (liveBefore).
const changeLive = "live"

// liveDay is the recent day of the year window whose half hour every location re-sends:
// the background pricer re-prices it on every pass, as it does today's on a live fleet.
var liveDay = time.Date(2024, 12, 30, 0, 0, 0, 0, time.UTC)

// livePricer is the background pricer of liveBefore, its clock in the afternoon after
// liveDay (so that liveDay is among its recent days), made on first use.
var livePricer *query.BucketPricer

// liveBefore makes request i of a live shape: it re-sends the half hour of liveDay at
// 12:00 of every location (a value changed with i, a new version) and runs one pass of
// the background pricer (query.BucketPricer, as lag.go does), which prices that day again.
func liveBefore(ctx context.Context, a *app.App, fx *fixture, i int) error {
	if livePricer == nil {
		clock := func() time.Time { return liveDay.Add(36 * time.Hour) }
		p := query.NewPricer(a.DB, a.Tariffs, a.Catalog, a.Carbon, clock)
		p.UsePricedBuckets(true, nil)
		livePricer = query.NewBucketPricer(p, a.Cache, a.Log, 30*time.Second, config.Defaults().Costs.PricerDays)
	}
	if err := resendHalfHour(ctx, a, fx, liveDay.Add(12*time.Hour), i); err != nil {
		return err
	}
	if err := livePricer.Pass(ctx); err != nil {
		return fmt.Errorf("live fleet: pricer pass: %w", err)
	}
	return nil
}

// resendHalfHour writes the half hour from t of every location again, its energy changed
// with i, under a new version (one insert per loadChunk locations).
func resendHalfHour(ctx context.Context, a *app.App, fx *fixture, t time.Time, i int) error {
	return marked(ctx, a, fx.scope, func() error { return resend(ctx, a, fx, t, i) })
}

// resend is resendHalfHour's inserts.
func resend(ctx context.Context, a *app.App, fx *fixture, t time.Time, i int) error {
	version := uint64(time.Now().UnixNano())
	for first := 0; first < len(fx.locations); first += loadChunk {
		b, err := a.DB.Insert(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
			device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
			record_reference_id, batch_id, version) VALUES`))
		if err != nil {
			return err
		}
		for j := first; j < min(first+loadChunk, len(fx.locations)); j++ {
			wh := benchkit.FleetWh(j, t) + float64(i%5)
			if err := b.Append(fx.scope.AccountID, uint8(0), fx.locations[j], "", "IMPORT", "IMPORT", t, t.Add(30*time.Minute),
				wh, 1.0, "", "", "bat_bench_live", version); err != nil {
				_ = b.Abort()
				return err
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("live fleet: re-send a half hour: %w", err)
		}
	}
	return nil
}
