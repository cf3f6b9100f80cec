package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
)

// sitePath describes the site the last run built in the bench's database, for the next
// run to reuse.
const sitePath = ".run/bench-schedules.json"

// site is what the requests are timed against: an account with a London location priced
// by a market, devices that report there, and a fleet of other locations with readings.
type site struct {
	Account, Key, Location, Market string
	Devices                        []string
	Fleet                          int
	Day0                           string // the UTC day the market's prices start on
}

// loadSite returns the site saved by an earlier run when its account still holds all its
// readings, with the market's prices moved to start at day0; else it builds a new one
// and saves it. A kept site is a long-lived account: the schedules of every earlier run
// stay stored in it.
func loadSite(ctx context.Context, a *app.App, base string, fleet, devices int, day0 time.Time, prices []float64) (site, bool, error) {
	if s, ok := savedSite(ctx, a, fleet, devices); ok {
		if s.Day0 != day0.Format(time.DateOnly) {
			if err := putPrices(base, s.Key, s.Market, day0, prices); err != nil {
				return s, false, err
			}
			s.Day0 = day0.Format(time.DateOnly)
		}
		return s, true, saveSite(s)
	}
	acc, err := a.Accounts.Create(ctx, "bench")
	if err != nil {
		return site{}, false, err
	}
	s := site{Account: acc.AccountID, Key: acc.TestKey, Fleet: fleet, Day0: day0.Format(time.DateOnly)}
	if s.Location, s.Market, s.Devices, err = setup(base, s.Key, day0, prices, devices); err != nil {
		return s, false, err
	}
	began := time.Now()
	if err := readings(base, s.Key, s.Location, s.Devices, fleet, day0); err != nil {
		return s, false, err
	}
	fmt.Printf("readings: each device 1 at the location, %d other locations × 90 days of half-hours (%.1f s)\n", fleet, time.Since(began).Seconds())
	began = time.Now()
	settle(ctx, a.DB, database)
	fmt.Printf("merges of those readings' parts waited for: %.1f s\n", time.Since(began).Seconds())
	return s, false, saveSite(s)
}

// savedSite reads sitePath and checks that its account still has every reading the site
// was built with (the database may have been dropped or rebuilt since).
func savedSite(ctx context.Context, a *app.App, fleet, devices int) (site, bool) {
	b, err := os.ReadFile(sitePath)
	if err != nil {
		return site{}, false
	}
	var s site
	if json.Unmarshal(b, &s) != nil || s.Fleet != fleet || len(s.Devices) != devices {
		return site{}, false
	}
	day0, err := time.Parse(time.DateOnly, s.Day0)
	if err != nil || time.Since(day0) > 30*24*time.Hour { // the readings leave the devices' 90-day lookback
		return site{}, false
	}
	var n uint64
	err = a.DB.QueryRow(ctx, chstore.Tool("SELECT count() FROM meter_records WHERE account_id = ?"), s.Account).Scan(&n)
	if err != nil || n < uint64(devices+fleet*90*48) {
		return site{}, false
	}
	return s, true
}

func saveSite(s site) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(sitePath), 0o755); err != nil {
		return err
	}
	return os.WriteFile(sitePath, b, 0o600)
}

// storedSchedules counts the schedule documents the account holds.
func storedSchedules(ctx context.Context, a *app.App, account string) (uint64, error) {
	var n uint64
	err := a.DB.QueryRow(ctx, chstore.Tool("SELECT uniqExact(id) FROM documents WHERE account_id = ? AND kind = 'schedule'"), account).Scan(&n)
	return n, err
}

// putPrices sets the market's half-hourly prices from day0.
func putPrices(base, key, market string, day0 time.Time, prices []float64) error {
	var body []any
	for i, p := range prices {
		s := day0.Add(time.Duration(i) * 30 * time.Minute)
		body = append(body, map[string]any{"start_time": s.Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).Format(time.RFC3339), "price": p})
	}
	return benchkit.Call(base, key, "PUT", "/markets/"+market+"/prices", body, nil)
}
