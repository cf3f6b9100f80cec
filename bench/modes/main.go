//go:build chdb

// Command modes benchmarks one user's requests in embedded mode (chDB and an in-process
// Redis, data in a temporary folder) against server mode (the ClickHouse and Redis
// servers of make services): the demo fleet loaded through the API (readings/s), then
// p50/p99 of a location's month by DAY (POST /costs/interval) and of the fleet's month by
// DAY (POST /costs/fleet), each asked -requests times after one cold request. Run: make
// bench-modes.
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
	flag.Parse()
	fleet, missing, err := demo.ReadDir(*data, demo.Window[0], demo.Window[1])
	if err != nil || len(missing) > 0 {
		log.Fatalf("demo data in %s: %v (missing %v)", *data, err, missing)
	}
	fmt.Println("| mode | demo load: readings/s | location month by DAY: cold, p50 / p99 | fleet month by DAY: cold, p50 / p99 |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, mode := range []string{"server", "embedded"} {
		r, err := run(context.Background(), mode, fleet, *requests)
		if err != nil {
			log.Fatalf("%s: %v", mode, err)
		}
		fmt.Printf("| %s | %.0f | %s | %s |\n", mode, r.readingsPerSec, r.location, r.fleet)
	}
}

type result struct {
	readingsPerSec  float64
	location, fleet string
}

func run(ctx context.Context, mode string, fleet demo.Fleet, n int) (result, error) {
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
	var r result
	r.readingsPerSec = float64(loaded.Readings) / time.Since(t0).Seconds()
	month := map[string]any{"start_time": "2020-12-01T00:00:00Z", "end_time": "2021-01-01T00:00:00Z"}
	interval := "/costs/interval/" + loaded.Locations[0] + "?direction=IMPORT&aggregation=DAY"
	if r.location, err = measure(ctx, c, interval, month, n); err != nil {
		return r, err
	}
	body := map[string]any{"aggregation": "DAY", "direction": "IMPORT", "limit": 10000}
	for k, v := range month {
		body[k] = v
	}
	r.fleet, err = measure(ctx, c, "/costs/fleet", body, n)
	return r, err
}

// measure sends one cold request, then n more, and renders "cold, p50 / p99" in ms.
func measure(ctx context.Context, c *demo.Client, path string, body any, n int) (string, error) {
	lat := make([]time.Duration, 0, n)
	var cold time.Duration
	for i := 0; i <= n; i++ {
		t0 := time.Now()
		if err := c.Do(ctx, "POST", path, body, nil); err != nil {
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
