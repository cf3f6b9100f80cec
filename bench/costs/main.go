// Command costs benchmarks cost queries: 1,000 locations × one year of 30-minute
// readings (17.5 M rows), a time-of-use tariff per location; p50/p99 of a one-month
// DAY cost, a one-year MONTH cost and a raw one-day cost through the HTTP API, and the
// floor: a bare ClickHouse sum of the same location's month. Run: make bench-costs.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

type options struct {
	locations, requests int
	chAddr, database    string
	cluster             string
	keep                bool
	only, cpuProfile    string
}

func main() {
	var o options
	flag.IntVar(&o.locations, "locations", 1000, "locations")
	flag.IntVar(&o.requests, "requests", 200, "requests per query shape")
	flag.StringVar(&o.chAddr, "clickhouse", "127.0.0.1:9000", "ClickHouse native address (a comma-separated list on a cluster)")
	flag.StringVar(&o.cluster, "cluster", "", "ClickHouse cluster name (cluster mode, e.g. kw with make cluster-up)")
	flag.StringVar(&o.database, "database", "kwbench_costs", "database (reused when it holds the data, see -keep)")
	flag.BoolVar(&o.keep, "keep", true, "keep the loaded data for the next run")
	flag.StringVar(&o.only, "only", "", "run only the shapes whose name contains this")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed requests to this file")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	ctx := context.Background()
	cfg := benchkit.Config(o.database)
	cfg.ClickHouse.Addr, cfg.ClickHouse.Cluster = o.chAddr, o.cluster
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(ctx, cfg, logger, app.Options{RedisPrefix: "kwbench:"})
	if err != nil {
		return err
	}
	defer a.Close()
	fx, err := load(ctx, a, o)
	if err != nil {
		return err
	}
	base, stop, err := benchkit.Serve(ctx, a)
	if err != nil {
		return err
	}
	defer stop()
	shapes := []struct {
		name, query, start, end string
	}{
		{"one month, DAY", "?aggregation=DAY", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"},
		{"one year, MONTH", "?aggregation=MONTH", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{"one day, raw", "", "2024-06-15T00:00:00Z", "2024-06-16T00:00:00Z"},
	}
	fmt.Printf("data: %d locations × 17,568 half-hours (2024) = %d rows; TOU tariff per location; %d requests per shape, 1 client\n",
		len(fx.locations), len(fx.locations)*17568, o.requests)
	floor50, floor99, err := floor(ctx, a, fx, o.requests)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, s := range shapes {
		if o.only != "" && !strings.Contains(s.name, o.only) {
			continue
		}
		lat, err := measure(base, fx, s.query, s.start, s.end, o.requests)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		p50, p99 := pct(lat, 50), pct(lat, 99)
		fmt.Printf("%-16s p50 %6.1f ms  p99 %6.1f ms", s.name, ms(p50), ms(p99))
		if s.name == "one month, DAY" {
			fmt.Printf("   (floor: bare sum of the month p50 %.1f ms p99 %.1f ms; ratio p50 %.1f×, p99 %.1f×)",
				ms(floor50), ms(floor99), float64(p50)/float64(floor50), float64(p99)/float64(floor99))
		}
		fmt.Println()
	}
	return nil
}

type fixture struct {
	scope     kwhouse.Scope
	key       string
	locations []string
}

var (
	ms  = benchkit.Millis
	pct = benchkit.Percentile
)

func measure(base string, fx *fixture, query, start, end string, n int) ([]time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"start_time": start, "end_time": end})
	client := &http.Client{Timeout: time.Minute}
	var lat []time.Duration
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < n+5; i++ {
		loc := fx.locations[rng.Intn(len(fx.locations))]
		req, _ := http.NewRequest("POST", base+"/costs/interval/"+loc+query, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.key)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		var out struct {
			Tariff struct{ Value float64 } `json:"tariff"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || out.Tariff.Value <= 0 {
			return nil, fmt.Errorf("status %d, value %v (%v)", res.StatusCode, out.Tariff.Value, err)
		}
		if i >= 5 { // the first few warm caches
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, nil
}

// floor times the cheapest useful question: the sum of one location's month of energy.
func floor(ctx context.Context, a *app.App, fx *fixture, n int) (time.Duration, time.Duration, error) {
	rng := rand.New(rand.NewSource(2))
	var lat []time.Duration
	for i := 0; i < n+5; i++ {
		loc := fx.locations[rng.Intn(len(fx.locations))]
		t0 := time.Now()
		var wh float64
		err := a.DB.QueryRow(ctx, chstore.Tool(`SELECT sum(energy_wh) FROM meter_records
			WHERE account_id = ? AND live_mode = 0 AND location_id = ? AND device_id = ''
			  AND start_time >= toDateTime(?) AND start_time < toDateTime(?)`),
			fx.scope.AccountID, loc, uint32(1717200000), uint32(1719792000)).Scan(&wh)
		if err != nil {
			return 0, 0, err
		}
		if i >= 5 {
			lat = append(lat, time.Since(t0))
		}
	}
	return pct(lat, 50), pct(lat, 99), nil
}

// load creates the account, locations, tariffs and readings, or reuses them.
func load(ctx context.Context, a *app.App, o options) (*fixture, error) {
	if fx, err := reuse(ctx, a, o); err == nil && fx != nil {
		fmt.Println("reusing the data in", o.database)
		return fx, nil
	}
	acc, err := a.Accounts.Create(ctx, "bench")
	if err != nil {
		return nil, err
	}
	fx := &fixture{scope: kwhouse.Scope{AccountID: acc.AccountID}, key: acc.TestKey}
	start := time.Now()
	if err := makeLocations(ctx, a, fx, o.locations); err != nil {
		return nil, err
	}
	fmt.Printf("created %d locations with tariffs in %.0f s\n", len(fx.locations), time.Since(start).Seconds())
	start = time.Now()
	if err := makeReadings(ctx, a, fx); err != nil {
		return nil, err
	}
	fmt.Printf("loaded %d readings in %.0f s\n", len(fx.locations)*17568, time.Since(start).Seconds())
	if o.keep {
		b, _ := json.Marshal(fx.saved())
		if err := os.WriteFile(".run/bench-costs.json", b, 0o600); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

type savedFixture struct {
	Account, Key string
	Locations    []string
}

func (f *fixture) saved() savedFixture {
	return savedFixture{Account: f.scope.AccountID, Key: f.key, Locations: f.locations}
}

func reuse(ctx context.Context, a *app.App, o options) (*fixture, error) {
	b, err := os.ReadFile(".run/bench-costs.json")
	if err != nil || !o.keep {
		return nil, err
	}
	var s savedFixture
	if err := json.Unmarshal(b, &s); err != nil || len(s.Locations) != o.locations {
		return nil, err
	}
	var n uint64
	if err := a.DB.QueryRow(ctx, chstore.Tool("SELECT count() FROM meter_records WHERE account_id = ?"), s.Account).Scan(&n); err != nil || n < uint64(o.locations*17568) {
		return nil, err
	}
	return &fixture{scope: kwhouse.Scope{AccountID: s.Account}, key: s.Key, locations: s.Locations}, nil
}

func makeLocations(ctx context.Context, a *app.App, fx *fixture, n int) error {
	tz, cur := "Europe/London", "GBP"
	fx.locations = make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			l, err := a.Catalog.CreateLocation(ctx, fx.scope, catalog.LocationInput{Timezone: &tz, CurrencyCode: &cur})
			if err != nil {
				errs <- err
				return
			}
			fx.locations[i] = l.ID
			cs, ce := catalog.Timestamp(time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)), catalog.Timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			var sched tariffs.Schedule
			if err := json.Unmarshal([]byte(touSchedule), &sched); err != nil {
				errs <- err
				return
			}
			if _, err := a.Tariffs.Create(ctx, fx.scope, tariffs.Input{LocationID: l.ID, Direction: "IMPORT", Type: "COMMODITY",
				ContractStartDate: &cs, ContractEndDate: &ce, Schedule: sched}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// touSchedule: night 00:00–07:00 0.09, day 0.25, peak 16:00–19:00 0.38 (weekdays), weekend day 0.22.
const touSchedule = `[{"months":["All"],"days_and_hours":[
 {"days":["Weekday"],"hours":[{"valid_from":"00:00:00","valid_to":"07:00:00","rate":[{"fixed":0.09}]},
   {"valid_from":"07:00:00","valid_to":"16:00:00","rate":[{"fixed":0.25}]},
   {"valid_from":"16:00:00","valid_to":"19:00:00","rate":[{"fixed":0.38}]},
   {"valid_from":"19:00:00","valid_to":"00:00:00","rate":[{"fixed":0.25}]}]},
 {"days":["Weekend"],"hours":[{"valid_from":"00:00:00","valid_to":"07:00:00","rate":[{"fixed":0.09}]},
   {"valid_from":"07:00:00","valid_to":"00:00:00","rate":[{"fixed":0.22}]}]}]}]`

// loadChunk is how many locations' month of readings one insert carries: about 750,000
// rows, so the loader and the server stay within a few GiB at 10,000 locations and more
// (one insert of every location's month needed more than 8 GiB on the server).
const loadChunk = 500

// makeReadings inserts a year of half-hours for every location, month by month (an
// insert may touch at most 100 day-partitions) and loadChunk locations at a time.
func makeReadings(ctx context.Context, a *app.App, fx *fixture) error {
	for m := time.January; m <= time.December; m++ {
		from := time.Date(2024, m, 1, 0, 0, 0, 0, time.UTC)
		for first := 0; first < len(fx.locations); first += loadChunk {
			if err := insertReadings(ctx, a, fx, first, min(first+loadChunk, len(fx.locations)), from); err != nil {
				return err
			}
		}
		fmt.Printf("  %s loaded\n", m)
	}
	return nil
}

// insertReadings inserts the month from `from` of locations [first, last).
func insertReadings(ctx context.Context, a *app.App, fx *fixture, first, last int, from time.Time) error {
	to := from.AddDate(0, 1, 0)
	b, err := a.DB.Insert(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
		device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
		record_reference_id, batch_id, version) VALUES`))
	if err != nil {
		return err
	}
	for i := first; i < last; i++ {
		loc := fx.locations[i]
		for t := from; t.Before(to); t = t.Add(30 * time.Minute) {
			wh := 150 + float64((i*37+t.Hour()*11+t.Day()*7)%400)
			if err := b.Append(fx.scope.AccountID, uint8(0), loc, "", "IMPORT", "IMPORT", t, t.Add(30*time.Minute), wh, 1.0, "", "", "bat_bench", uint64(1)); err != nil {
				_ = b.Abort()
				return err
			}
		}
	}
	return b.Send()
}
