// Command costs benchmarks cost queries on 1,000 locations × one year of 30-minute
// readings (17.5 M rows) with time-of-use, month-tiered and market tariffs: p50/p99 of
// one location's month by DAY and year by MONTH per tariff kind, a raw day, and fleet
// queries (100 and all locations, a month by DAY and a year by MONTH) beside their
// floors: bare ClickHouse sums of the same rows. Run: make bench-costs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
)

type options struct {
	locations, requests int
	chAddr, database    string
	cluster             string
	keep                bool
	only, cpuProfile    string
	memProfile          string
	afresh              bool
	fleetTimeout        time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.locations, "locations", 1000, "locations")
	flag.IntVar(&o.requests, "requests", 200, "requests per location shape (fleet shapes take a tenth, at least 10)")
	flag.StringVar(&o.chAddr, "clickhouse", "127.0.0.1:9000", "ClickHouse native address (a comma-separated list on a cluster)")
	flag.StringVar(&o.cluster, "cluster", "", "ClickHouse cluster name (cluster mode, e.g. kw with make cluster-up)")
	flag.StringVar(&o.database, "database", "kwbench_costs", "database (reused when it holds the data, see -keep)")
	flag.BoolVar(&o.keep, "keep", true, "keep the loaded data for the next run")
	flag.StringVar(&o.only, "only", "", "run only the shapes whose name contains this (or one of several, separated by |)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed requests to this file")
	flag.StringVar(&o.memProfile, "memprofile", "", "write a Go allocation profile (every allocation since start) to this file at the end")
	flag.BoolVar(&o.afresh, "afresh", true, "also time each fleet shape priced afresh (no priced buckets)")
	flag.DurationVar(&o.fleetTimeout, "fleet-timeout", 5*time.Minute, "client timeout of one fleet request (the first of a shape prices what no bucket holds)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

var (
	ms  = benchkit.Millis
	pct = benchkit.Percentile
)

func run(o options) error {
	ctx := context.Background()
	cfg := benchkit.Config(o.database)
	cfg.ClickHouse.Addr, cfg.ClickHouse.Cluster = o.chAddr, o.cluster
	cfg.ClickHouse.LogQueries = true // ClickHouse memory per answer, from system.query_log
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
	if err := cleanOnboarded(ctx, a, fx); err != nil {
		return err
	}
	if err := keepHistoryPeaks(ctx, a, fx); err != nil {
		return err
	}
	base, stop, err := benchkit.Serve(ctx, a)
	if err != nil {
		return err
	}
	defer stop()
	// A second service on the same data, without priced buckets: every fleet request priced afresh.
	cfgFresh := *cfg
	cfgFresh.Costs.PricedBuckets, cfgFresh.Costs.AnswerCache = false, "off"
	b, err := app.New(ctx, &cfgFresh, logger, app.Options{RedisPrefix: "kwbench:"})
	if err != nil {
		return err
	}
	defer b.Close()
	fresh, stopFresh, err := benchkit.Serve(ctx, b)
	if err != nil {
		return err
	}
	defer stopFresh()
	fmt.Printf("data: %d locations × 17,568 half-hours (2024) = %d rows (8/10 time-of-use, 1/10 month-tiered, 1/10 market); "+
		"%d requests per location shape, 1 client\n", len(fx.locations), len(fx.locations)*17568, o.requests)
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
	if o.memProfile != "" {
		defer writeMemProfile(o.memProfile)
	}
	if err := locationShapes(ctx, a, base, fx, o); err != nil {
		return err
	}
	if err := fleetShapes(ctx, a, base, fresh, fx, o); err != nil {
		return err
	}
	if o.selected("pricer lag") {
		return pricerLag(ctx, a, fx)
	}
	return nil
}

// writeMemProfile writes the allocations made so far (the alloc_space view of go tool
// pprof) to path.
func writeMemProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Print(err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Print(err)
	}
}

// selected reports whether the -only flag lets shape name run: its name contains one of
// the flag's "|"-separated parts.
func (o options) selected(name string) bool {
	if o.only == "" {
		return true
	}
	for _, part := range strings.Split(o.only, "|") {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}

func report(name string, lat []time.Duration, extra string) {
	fmt.Printf("%-58s p50 %7.1f ms  p99 %7.1f ms%s\n", name, ms(pct(lat, 50)), ms(pct(lat, 99)), extra)
}
