package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"slices"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
)

// The fixture's readings are a backfill: a year written at once, long after it ended, so
// no background pricer pass ever covered its months (a pass covers the last
// costs.pricer_days days). A location whose readings arrived as they were measured had
// each month's demand peaks measured and kept by the pass after its last reading
// (docs/costs.md, "Background pricer"), so a dashboard's first answer with charges finds
// them kept. keepHistoryPeaks leaves the fixture so; backfillShapes time the other case.

// historyPricerDays is a pass's window over the fixture's whole year (the most
// costs.pricer_days allows).
const historyPricerDays = 366

// keepHistoryPeaks runs, once per fixture, the background pricer a live fleet would have
// run through 2024: one pass over the whole year, which keeps every month's demand peaks
// (and prices what is not priced yet). It is skipped when every location's 12 months are
// kept already.
func keepHistoryPeaks(ctx context.Context, a *app.App, fx *fixture) error {
	var kept uint64
	err := a.DB.QueryRow(ctx, chstore.Tool(`SELECT uniqExact(location_id, month_start) FROM demand_peaks
		WHERE account_id = ? AND live_mode = 0 AND month_start >= toDateTime('2023-12-31 00:00:00')
			AND month_start < toDateTime('2025-01-01 00:00:00') AND substring(tariff_key, 1, 2) = 'r:'`),
		fx.scope.AccountID).Scan(&kept)
	if err != nil || kept >= uint64(12*len(fx.locations)) {
		return err
	}
	t0 := time.Now()
	clock := func() time.Time { return time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC) }
	p := query.NewPricer(a.DB, a.Tariffs, a.Catalog, a.Carbon, clock)
	p.UsePricedBuckets(true, nil)
	if err := query.NewBucketPricer(p, a.Cache, a.Log, time.Minute, historyPricerDays).Pass(ctx); err != nil {
		return fmt.Errorf("the pricer's pass over the fixture's year: %w", err)
	}
	fmt.Printf("kept the fixture's demand peaks as a background pricer would have (%d of %d months were): %.0f s\n",
		kept, 12*len(fx.locations), time.Since(t0).Seconds())
	return nil
}

// backfillShapes time one time-of-use location's first year by MONTH with charges whose
// history was backfilled: no pass kept its peaks, so the answer measures all 12 months
// from the readings. Each request asks a location this process has not asked about. The
// interval answer prices its year from the readings with or without charges, so against
// the same answer without charges the ratio counts the measuring alone; a fleet answer
// after a real backfill prices its stale buckets too, which costs with and without charges
// alike ("Priced buckets" in docs/costs.md).
//   - "backfilled (peaks measured)", the adversarial case: the location's kept peaks are
//     made stale before the request (a later version under a fingerprint that is not the
//     current one, with days that cannot be served), so the answer reads its kept days and
//     its dates' change counts before it measures, as a month re-sent whole does.
//   - "backfilled, no peaks kept": the location's kept peaks and days are deleted first, as
//     for a location whose history was imported before any answer or pass measured it: its
//     months are measured right after their fingerprints are read.
func backfillShapes(ctx context.Context, a *app.App, base string, fx *fixture, o options) error {
	stale := "one year, MONTH, include_charges, backfilled (peaks measured), " + kindTOU
	none := "one year, MONTH, include_charges, backfilled, no peaks kept, " + kindTOU
	if !o.selected(stale) && !o.selected(none) {
		return nil
	}
	n := o.requests
	locs := unasked(fx.ofKind(kindTOU), n)
	if len(locs) < 2*(n+5) {
		return fmt.Errorf("backfilled: %d locations not asked by the other shapes, want %d", len(locs), 2*(n+5))
	}
	if o.selected(stale) {
		err := backfillShape(stale, base, fx, locs[:n+5], func(loc string) error { return stalePeaks(ctx, a, fx, loc) })
		if err != nil {
			return err
		}
	}
	if !o.selected(none) {
		return nil
	}
	if err := dropPeaks(ctx, a, fx, locs[n+5:2*(n+5)]); err != nil {
		return fmt.Errorf("%s: %w", none, err)
	}
	if err := backfillShape(none, base, fx, locs[n+5:2*(n+5)], nil); err != nil {
		return err
	}
	// The answers keep the peaks they measured after they are sent: waited for, so the
	// next run finds the fixture's year kept (keepHistoryPeaks).
	return a.Pricer.WaitBucketWrites(ctx, fx.scope)
}

// backfillShape asks each location of locs (the first 5 warm caches) its year by MONTH with
// charges, before each request calling before (nil: nothing) with the location.
func backfillShape(name, base string, fx *fixture, locs []string, before func(loc string) error) error {
	year := [2]string{"2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"}
	lat := make([]time.Duration, 0, len(locs))
	for i, loc := range locs {
		if before != nil {
			if err := before(loc); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		t0 := time.Now()
		if err := askInterval(base, fx, loc, "?aggregation=MONTH&include_charges=true", year); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if i >= 5 { // as measure: the first few warm caches
			lat = append(lat, time.Since(t0))
		}
	}
	report(name, lat, "")
	return nil
}

// unasked is the locations of locs that measure's random picks of n requests leave out.
func unasked(locs []string, n int) []string {
	rng := rand.New(rand.NewSource(1)) // measure's
	asked := map[string]bool{}
	for i := 0; i < n+5; i++ {
		asked[locs[rng.Intn(len(locs))]] = true
	}
	out := slices.DeleteFunc(slices.Clone(locs), func(l string) bool { return asked[l] })
	slices.Reverse(out)
	return out
}

// stalePeaks writes a later version of every kept month of loc whose fingerprint is not
// the current one (one more than the kept): ReplacingMergeTree serves it, and the answer
// measures those months again (and keeps them anew, a later version still).
func stalePeaks(ctx context.Context, a *app.App, fx *fixture, loc string) error {
	// Without its days too: a month whose days are kept under the current counts is not
	// measured again (docs/costs.md, "Bill charges").
	err := a.DB.Exec(ctx, chstore.Tool(`INSERT INTO demand_days (account_id, live_mode, location_id, direction, month_start,
			tariff_key, version)
		SELECT account_id, live_mode, location_id, direction, month_start, tariff_key, toUInt64(?)
		FROM demand_days WHERE account_id = ? AND live_mode = 0 AND location_id = ?
		GROUP BY account_id, live_mode, location_id, direction, month_start, tariff_key`),
		uint64(time.Now().UnixNano()), fx.scope.AccountID, loc)
	if err != nil {
		return err
	}
	return a.DB.Exec(ctx, chstore.Tool(`INSERT INTO demand_peaks (account_id, live_mode, location_id, direction, month_start,
			tariff_key, peaks, readings_seen, version)
		SELECT account_id, live_mode, location_id, direction, month_start, tariff_key, argMax(peaks, version),
			argMax(readings_seen, version) + 1, toUInt64(?)
		FROM demand_peaks WHERE account_id = ? AND live_mode = 0 AND location_id = ?
		GROUP BY account_id, live_mode, location_id, direction, month_start, tariff_key`),
		uint64(time.Now().UnixNano()), fx.scope.AccountID, loc)
}

// askInterval asks POST /costs/interval of loc over window and checks the answer.
func askInterval(base string, fx *fixture, loc, query string, window [2]string) error {
	body, _ := json.Marshal(map[string]string{"start_time": window[0], "end_time": window[1]})
	req, _ := http.NewRequest("POST", base+"/costs/interval/"+loc+query, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+fx.key)
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var out struct {
		Charges *struct{ Demand float64 } `json:"charges"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 || out.Charges == nil || out.Charges.Demand == 0 {
		return fmt.Errorf("status %d, charges %v (%v)", res.StatusCode, out.Charges, err)
	}
	return nil
}

// dropPeaks deletes the kept peaks and days of locs (one mutation of each table, on each
// shard on a cluster) and waits until the mutations are done.
func dropPeaks(ctx context.Context, a *app.App, fx *fixture, locs []string) error {
	for _, table := range []string{"demand_peaks", "demand_days"} {
		if a.DB.Cluster != "" {
			table += "_local"
		}
		err := a.DB.MutateShards(ctx, chstore.Tool(`ALTER TABLE `+table+` DELETE
			WHERE account_id = @account AND live_mode = 0 AND location_id IN @locs`),
			chstore.Named("account", fx.scope.AccountID), chstore.Named("locs", chstore.Set(locs)))
		if err != nil {
			return fmt.Errorf("delete the kept %s of %d locations: %w", table, len(locs), err)
		}
	}
	for t0 := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		var left uint64
		err := a.DB.QueryRow(ctx, chstore.Tool(`SELECT count() FROM system.mutations
			WHERE database = currentDatabase() AND table LIKE 'demand_%' AND is_done = 0`)).Scan(&left)
		if err != nil || left == 0 {
			return err
		}
		if time.Since(t0) > time.Minute {
			return fmt.Errorf("%d mutations of demand_peaks and demand_days not done after a minute", left)
		}
	}
}
