//go:build chdb

// Command modes benchmarks one user's requests in embedded mode (chDB and an in-process
// Redis, data in a temporary folder) against server mode (the ClickHouse and Redis
// servers of make services): the demo fleet loaded through the API (seconds), ingest
// (records/s of -batches PUT /meters/interval requests of 10,000 records, one client),
// then p50/p99 of a location's month by DAY (POST /costs/interval) and of the fleet's
// month by DAY (POST /costs/fleet), each asked -requests times after one cold request;
// then, in an account of its own, a synthetic fleet of -fleet locations (a tariff of
// benchkit.TOUSchedule, June 2024's half-hours) loaded through the API (seconds) and its
// month by DAY as CSV, one cold request and -fleet-requests more. Run: make bench-modes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/demo"
	"github.com/kwhouse/kwhouse/embedded"
)

func main() {
	data := flag.String("data", "../shared/data", "the demo's public data files")
	requests := flag.Int("requests", 50, "requests of each shape after the cold one")
	batches := flag.Int("batches", 20, "ingest requests of 10,000 records")
	fleetN := flag.Int("fleet", 1000, "locations of the synthetic fleet (0: skip it)")
	fleetRequests := flag.Int("fleet-requests", 10, "requests of the synthetic fleet's month after the cold one")
	flag.Parse()
	fleet, missing, err := demo.ReadDir(*data, demo.Window[0], demo.Window[1])
	if err != nil || len(missing) > 0 {
		log.Fatalf("demo data in %s: %v (missing %v)", *data, err, missing)
	}
	o := options{requests: *requests, batches: *batches, fleet: *fleetN, fleetRequests: *fleetRequests}
	fmt.Printf("| mode | demo fleet load | ingest, records/s | location month by DAY: cold, p50 / p99 | fleet month by DAY: cold, p50 / p99 "+
		"| %d-location fleet load | its month by DAY (CSV): cold, p50 / p99 |\n", o.fleet)
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, mode := range []string{"server", "embedded"} {
		r, err := run(context.Background(), mode, fleet, o)
		if err != nil {
			log.Fatalf("%s: %v", mode, err)
		}
		fmt.Printf("| %s | %.1f s | %.0f | %s | %s | %s | %s |\n", mode, r.load.Seconds(), r.recordsPerSec, r.location, r.fleet, r.bigLoad, r.bigMonth)
	}
}

type options struct {
	requests, batches, fleet, fleetRequests int
}

type result struct {
	load              time.Duration
	recordsPerSec     float64
	location, fleet   string
	bigLoad, bigMonth string // the synthetic fleet's: "skipped" without -fleet
}

func run(ctx context.Context, mode string, fleet demo.Fleet, o options) (result, error) {
	a, closeFn, err := start(ctx, mode)
	if err != nil {
		return result{}, err
	}
	defer closeFn()
	base, stop, err := benchkit.Serve(ctx, a)
	if err != nil {
		return result{}, err
	}
	defer stop()
	acc, err := a.Accounts.Create(ctx, "bench-modes")
	if err != nil {
		return result{}, err
	}
	c := &demo.Client{Base: base, Key: acc.TestKey, HTTP: &http.Client{Timeout: 5 * time.Minute}}
	t0 := time.Now()
	loaded, err := demo.Load(ctx, c, fleet)
	if err != nil {
		return result{}, fmt.Errorf("load the demo fleet: %w", err)
	}
	r := result{load: time.Since(t0)}
	month := map[string]any{"start_time": "2020-12-01T00:00:00Z", "end_time": "2021-01-01T00:00:00Z"}
	interval := "/costs/interval/" + loaded.Locations[0] + "?direction=IMPORT&aggregation=DAY"
	n := o.requests
	if r.location, err = measure(ctx, c, interval, month, n); err != nil {
		return r, err
	}
	body := map[string]any{"aggregation": "DAY", "direction": "IMPORT", "limit": 10000}
	for k, v := range month {
		body[k] = v
	}
	if r.fleet, err = measure(ctx, c, "/costs/fleet", body, n); err != nil {
		return r, err
	}
	if r.recordsPerSec, err = ingest(ctx, c, o.batches); err != nil { // after the demo's shapes: its location is not the demo fleet's
		return r, err
	}
	r.bigLoad, r.bigMonth, err = bigFleet(ctx, a, base, o)
	return r, err
}

// bigFleet loads the synthetic fleet of o.fleet locations and times its month by DAY:
// the load in seconds and "cold, p50 / p99".
func bigFleet(ctx context.Context, a *app.App, base string, o options) (string, string, error) {
	if o.fleet == 0 {
		return "skipped", "skipped", nil
	}
	t0 := time.Now()
	c, err := loadFleet(ctx, a, base, o.fleet)
	if err != nil {
		return "", "", err
	}
	took := fmt.Sprintf("%.1f s", time.Since(t0).Seconds())
	month, err := timed(ctx, c, o.fleetRequests, fleetCSV(o.fleet))
	return took, month, err
}

// ingest sends batches requests of 10,000 one-minute records of a new location, one
// after the other, and returns the records stored per second.
func ingest(ctx context.Context, c *demo.Client, batches int) (float64, error) {
	var loc struct {
		ID string `json:"id"`
	}
	if err := c.Do(ctx, "POST", "/locations", map[string]any{"reference_id": "bench-ingest",
		"postal_address": map[string]any{"country_code": "GB"}}, &loc); err != nil {
		return 0, err
	}
	start := time.Date(2021, 2, 1, 0, 0, 0, 0, time.UTC)
	var took time.Duration
	for b := 0; b < batches; b++ {
		body := make([]map[string]any, 10_000)
		for i := range body {
			s := start.Add(time.Duration(b*len(body)+i) * time.Minute)
			body[i] = map[string]any{"location_id": loc.ID, "units": "WH", "value": 5 + i%7, "direction": "IMPORT",
				"start_time": s.Format(time.RFC3339), "end_time": s.Add(time.Minute).Format(time.RFC3339)}
		}
		t0 := time.Now()
		if err := c.Do(ctx, "PUT", "/meters/interval", body, nil); err != nil {
			return 0, err
		}
		took += time.Since(t0)
	}
	return float64(batches*10_000) / took.Seconds(), nil
}

// measure sends one cold request, then n more, and renders "cold, p50 / p99" in ms.
func measure(ctx context.Context, c *demo.Client, path string, body any, n int) (string, error) {
	return timed(ctx, c, n, func(ctx context.Context, c *demo.Client) error { return c.Do(ctx, "POST", path, body, nil) })
}

// timed runs ask once cold, then n more times, and renders "cold, p50 / p99" in ms.
func timed(ctx context.Context, c *demo.Client, n int, ask func(context.Context, *demo.Client) error) (string, error) {
	lat := make([]time.Duration, 0, n)
	var cold time.Duration
	for i := 0; i <= n; i++ {
		t0 := time.Now()
		if err := ask(ctx, c); err != nil {
			return "", err
		}
		if i == 0 {
			cold = time.Since(t0)
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	p50, p99 := benchkit.Percentile(lat, 50), benchkit.Percentile(lat, 99)
	return fmt.Sprintf("%.1f ms, %.1f / %.1f ms", benchkit.Millis(cold), benchkit.Millis(p50), benchkit.Millis(p99)), nil
}

// start builds the app of mode: on the servers of benchkit.Config, or embedded in a
// temporary folder removed by the returned close.
func start(ctx context.Context, mode string) (*app.App, func(), error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := benchkit.Config("kwbench_modes")
	if mode == "server" {
		if err := benchkit.DropDatabase(ctx, cfg.ClickHouse); err != nil {
			return nil, nil, err
		}
		a, err := app.New(ctx, cfg, log, app.Options{RedisPrefix: "kwbenchmodes:"})
		if err != nil {
			return nil, nil, err
		}
		return a, func() { a.Close() }, nil
	}
	dir, err := os.MkdirTemp("", "kwhouse-bench-embedded-")
	if err != nil {
		return nil, nil, err
	}
	s, err := embedded.Open(dir, cfg.ClickHouse)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	cfg.Redis.Addr = s.RedisAddr
	a, err := app.New(ctx, cfg, log, app.Options{DB: s.DB})
	if err != nil {
		s.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return a, func() { a.Close(); s.Close(); os.RemoveAll(dir) }, nil
}
