// Command schedules benchmarks POST /schedules end to end (price timeline read, exact
// plan, stored schedule): a 24-hour plan for 10 devices on half-hourly market prices, and
// a 7-day plan for 50 devices, each with p50/p99 from one client. Prices are Octopus
// Agile half-hours from ../shared/data (docs/benchmarks.md, "Schedules") moved to start at
// today's midnight UTC, or a synthetic daily curve where the file is absent. The database
// and the site are kept from run to run (-fresh drops them first). Run: make
// bench-schedules.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
)

// database is the bench's own: kept from run to run, dropped and made afresh with -fresh.
const database = "kwbench_schedules"

const agileFile = "../shared/data/agile_A_eastern_england_2018-2021.csv"

func main() {
	small := flag.Int("requests", 200, "requests of the 24-hour, 10-device plan")
	large := flag.Int("large", 20, "requests of the 7-day, 50-device plan")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the timed requests to this file")
	fleet := flag.Int("fleet", 200, "other locations of the account, each with 90 days of half-hourly readings")
	fresh := flag.Bool("fresh", false, "drop the database first (else the site an earlier run built in it is reused)")
	flag.Parse()
	if err := run(*small, *large, *fleet, *profile, *fresh); err != nil {
		log.Fatal(err)
	}
}

func run(nSmall, nLarge, fleet int, profile string, fresh bool) error {
	ctx := context.Background()
	// Dropping the last run's database deletes tens of thousands of files, and on an ext4
	// without a journal creating files is slow for minutes after that: every insert of a
	// schedule creates a part of 34 files (docs/benchmarks.md, "Schedules"). So the
	// database is kept, and only -fresh drops it.
	boot := benchkit.StartWith
	if fresh {
		boot = benchkit.StartFreshWith
	}
	// Without the background bucket pricer: it prices the fleet's readings as they arrive
	// and would be timed with the schedules.
	a, base, closeApp, err := boot(ctx, database, "kwbenchsched:",
		func(c *config.Config) { c.Costs.Pricer = false })
	if err != nil {
		return err
	}
	defer closeApp()
	if profile != "" {
		stop, err := benchkit.CPUProfile(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	day0 := time.Now().UTC().Truncate(24 * time.Hour)
	prices, source := halfHours(day0, 9*48)
	fmt.Printf("prices: %d half-hours from %s (%s)\n", len(prices), day0.Format("2006-01-02"), source)
	s, reused, err := loadSite(ctx, a, base, fleet, 50, day0, prices)
	if err != nil {
		return err
	}
	stored, err := storedSchedules(ctx, a, s.Account)
	if err != nil {
		return err
	}
	if reused {
		fmt.Printf("site: reused from %s (account %s, %d schedules stored by earlier runs)\n", sitePath, s.Account, stored)
	}
	key, loc, devices := s.Key, s.Location, s.Devices
	r := rand.New(rand.NewSource(1))
	start := time.Now().UTC().Truncate(30 * time.Minute).Add(30 * time.Minute)
	measure := func(what string, n, ndev int, span time.Duration) error {
		if n == 0 {
			return nil
		}
		t0 := benchkit.QueryLogStart()
		lat := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			body := request(r, loc, devices[:ndev], start, span)
			began := time.Now()
			if err := benchkit.Call(base, key, "POST", "/schedules", body, nil); err != nil {
				return err
			}
			lat = append(lat, time.Since(began))
		}
		p := func(q int) float64 { return benchkit.Millis(benchkit.Percentile(lat, q)) }
		fmt.Printf("%-44s p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms (%d requests)\n", what, p(50), p(99), p(100), n)
		return benchkit.PrintQueryLog(ctx, a, t0, s.Account)
	}
	if err := measure("24 h, 10 devices, half-hourly market prices:", nSmall, 10, 24*time.Hour); err != nil {
		return err
	}
	return measure("7 days, 50 devices, half-hourly market prices:", nLarge, 50, 7*24*time.Hour-time.Hour)
}

// settle waits (up to a minute) until ClickHouse merges none of database's parts: the
// fleet's readings arrive as many parts, and merging them takes the server from the
// timed requests (their document inserts above all) for a while after.
func settle(ctx context.Context, db *chstore.DB, database string) {
	for i := 0; i < 600; i++ {
		var n uint64
		if err := db.QueryRow(ctx, chstore.Tool("SELECT count() FROM system.merges WHERE database = ?"), database).Scan(&n); err != nil || n == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// request is a site with a 40 kW supply and ndev chargers of 3.7–22 kW, each needing what
// it could take in a third to two thirds of a random window inside [start, start+span).
func request(r *rand.Rand, loc string, devices []string, start time.Time, span time.Duration) map[string]any {
	halves := int(span / (30 * time.Minute))
	var data []any
	powers := []float64{3.7, 7.4, 11, 22}
	for _, d := range devices {
		a := r.Intn(halves / 2)
		b := a + 4 + r.Intn(halves-a-4)
		kw := powers[r.Intn(len(powers))]
		need := kw * float64(b-a) / 2 * (1 + r.Float64()) / 3
		data = append(data, map[string]any{"device_id": d, "direction": "IMPORT",
			"start_time": start.Add(time.Duration(a) * 30 * time.Minute).Format(time.RFC3339),
			"end_time":   start.Add(time.Duration(b) * 30 * time.Minute).Format(time.RFC3339),
			"max_power":  map[string]any{"units": "KW", "value": kw}, "energy": map[string]any{"units": "KWH", "value": math.Round(need*10) / 10}})
	}
	return map[string]any{"location_id": loc, "max_power": map[string]any{"units": "KW", "value": 40}, "data": data}
}

// setup creates a location priced by a market with half-hourly prices from day0, and n
// devices.
func setup(base, key string, day0 time.Time, prices []float64, n int) (string, string, []string, error) {
	var loc, mkt struct{ ID string }
	if err := benchkit.Call(base, key, "POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}, &loc); err != nil {
		return "", "", nil, err
	}
	if err := benchkit.Call(base, key, "POST", "/markets", map[string]any{"display_name": "agile", "currency_code": "GBP"}, &mkt); err != nil {
		return "", "", nil, err
	}
	if err := putPrices(base, key, mkt.ID, day0, prices); err != nil {
		return "", "", nil, err
	}
	tariff := map[string]any{"location_id": loc.ID, "direction": "IMPORT", "type": "COMMODITY", "market_rates": true, "market_id": mkt.ID,
		"contract_start_date": day0.AddDate(-1, 0, 0).Format(time.RFC3339), "contract_end_date": day0.AddDate(1, 0, 0).Format(time.RFC3339)}
	if err := benchkit.Call(base, key, "POST", "/tariffs/elements", tariff, nil); err != nil {
		return "", "", nil, err
	}
	devices := make([]string, n)
	for i := range devices {
		var d struct{ ID string }
		if err := benchkit.Call(base, key, "POST", "/devices", map[string]any{"reference_id": fmt.Sprintf("EV-%d", i)}, &d); err != nil {
			return "", "", nil, err
		}
		devices[i] = d.ID
	}
	return loc.ID, mkt.ID, devices, nil
}

// readings gives each device one reading at loc yesterday (the devices report there), and
// the account fleet other locations with 90 days of half-hourly readings before day0: the
// records a schedule's device check must not read.
func readings(base, key, loc string, devices []string, fleet int, day0 time.Time) error {
	record := func(loc, dev string, at time.Time) map[string]any {
		r := map[string]any{"location_id": loc, "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "WH", "value": 250,
			"start_time": at.Format(time.RFC3339), "end_time": at.Add(30 * time.Minute).Format(time.RFC3339)}
		if dev != "" {
			r["device_id"] = dev
		}
		return r
	}
	var body []any
	for _, d := range devices {
		body = append(body, record(loc, d, day0.Add(-12*time.Hour)))
	}
	if err := benchkit.Call(base, key, "PUT", "/meters/interval", body, nil); err != nil {
		return err
	}
	for i := 0; i < fleet; i++ {
		var other struct{ ID string }
		if err := benchkit.Call(base, key, "POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}, &other); err != nil {
			return err
		}
		body = body[:0]
		for at := day0.AddDate(0, 0, -90); at.Before(day0); at = at.Add(30 * time.Minute) {
			body = append(body, record(other.ID, "", at))
		}
		if err := benchkit.Call(base, key, "PUT", "/meters/interval", body, nil); err != nil {
			return err
		}
	}
	return nil
}

// halfHours returns n half-hourly prices (GBP/kWh): Agile's from 2020-10-20 on when the
// file is there, else a daily curve (cheap nights, a dear 16:00–19:00 peak) with noise.
func halfHours(day0 time.Time, n int) ([]float64, string) {
	if ps, err := agile(time.Date(2020, 10, 20, 0, 0, 0, 0, time.UTC), n); err == nil {
		return ps, agileFile + " from 2020-10-20"
	}
	r := rand.New(rand.NewSource(2))
	out := make([]float64, n)
	for i := range out {
		h := float64(i%48) / 2
		out[i] = 0.15 + 0.08*math.Sin((h-10)/24*2*math.Pi) + 0.01*r.NormFloat64()
		if h >= 16 && h < 19 {
			out[i] += 0.2
		}
	}
	return out, "synthetic"
}

func agile(from time.Time, n int) ([]float64, error) {
	f, err := os.Open(agileFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		cols := strings.Split(sc.Text(), ",")
		at, err := time.Parse(time.RFC3339, cols[0])
		if err != nil || at.Before(from) {
			continue
		}
		pence, err := strconv.ParseFloat(cols[4], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", agileFile, err)
		}
		out = append(out, pence/100)
	}
	if len(out) < n {
		return nil, fmt.Errorf("%s: %d half-hours from %s, want %d", agileFile, len(out), from, n)
	}
	return out, sc.Err()
}
