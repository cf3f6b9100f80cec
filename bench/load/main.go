// Command load measures fairness under load (make bench-load): one account's fleet
// ingests daily uploads with 4 clients, first alone, then while 16 clients of another
// account fire month-by-DAY cost queries for as long again. It prints ingest records/s and
// request p99 in both phases (target: ≥ 80 % of the solo rate kept), the cost queries'
// p50/p99, how many were shed (503) or limited (429), and the process's peak RSS.
//
// Then the normal tenants (the same ingest, and 2 cost clients) run for -hostile twice:
// alone, and beside a hostile tenant that loops over slow bodies, a stalled reader,
// 200 MiB gzip bodies, a 100 MB plain body, 3 M failing NDJSON lines and a 256 MiB line
// (hostile.go). It prints both phases' ingest rate and cost p99 (target: within 20 %),
// the process's peak RSS in each, and what each attack got; -cpuprofile writes the
// process's CPU profile over the phase beside the hostile tenant.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
)

type options struct {
	fleet, perRequest, ingestClients, costClients, dashboards int
	solo, loaded                                              time.Duration
	hostile                                                   time.Duration
	normalCost, hostileFleet                                  int
	cpuprofile                                                string
}

func main() {
	var o options
	flag.IntVar(&o.fleet, "fleet", 200, "locations of the ingesting account")
	flag.IntVar(&o.perRequest, "half-hours", 50, "consecutive half-hours per location in one push (daily upload: 200 × 50)")
	flag.IntVar(&o.ingestClients, "ingest-clients", 4, "ingest clients")
	flag.IntVar(&o.costClients, "cost-clients", 16, "cost-query clients of the other account")
	flag.IntVar(&o.dashboards, "dashboards", 20, "locations of the querying account")
	flag.DurationVar(&o.solo, "solo", 30*time.Second, "ingest alone")
	flag.DurationVar(&o.loaded, "duration", 2*time.Minute, "ingest with the cost queries")
	flag.DurationVar(&o.hostile, "hostile", 90*time.Second, "each of the normal tenants' phases without and beside the hostile tenant (0: skip)")
	flag.IntVar(&o.normalCost, "normal-cost-clients", 2, "cost-query clients of the normal tenants beside the hostile one")
	flag.IntVar(&o.hostileFleet, "hostile-fleet", 100, "priced locations of the hostile tenant (its stalled CSV answer: ≈ 38 KB each)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write the process's CPU profile over the phase beside the hostile tenant to this file")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	ctx := context.Background()
	// Every run starts from an empty database, on the service's timeouts and body bounds.
	a, base, stop, err := benchkit.StartFreshWith(ctx, "kwbench_load", "kwbenchload:", benchkit.ServingDefaults)
	if err != nil {
		return err
	}
	defer stop()
	fleet, err := newAccount(ctx, a, base, o.fleet, false)
	if err != nil {
		return err
	}
	dash, err := newAccount(ctx, a, base, o.dashboards, true)
	if err != nil {
		return err
	}
	fmt.Printf("fleet: %d locations, pushes of %d records, %d clients; dashboards: %d locations with a month of readings, %d clients\n",
		o.fleet, o.fleet*o.perRequest, o.ingestClients, o.dashboards, o.costClients)
	solo := ingest(base, fleet, o, o.solo, 0)
	fmt.Printf("ingest alone:        %9.0f records/s, push p50 %6.1f ms p99 %6.1f ms\n", solo.rate, solo.p(50), solo.p(99))
	var costs stats
	done := make(chan struct{})
	go func() { costs = query(base, dash, o); close(done) }()
	loaded := ingest(base, fleet, o, o.loaded, 1)
	<-done
	fmt.Printf("ingest under queries: %9.0f records/s, push p50 %6.1f ms p99 %6.1f ms (%.0f %% of alone; target ≥ 80 %%)\n",
		loaded.rate, loaded.p(50), loaded.p(99), 100*loaded.rate/solo.rate)
	fmt.Printf("cost queries: %d served, p50 %.1f ms p99 %.1f ms; %d shed (503), %d limited (429), %d other errors\n",
		len(costs.lat), costs.p(50), costs.p(99), costs.shed, costs.limited, costs.failed)
	fmt.Printf("ingest errors: %d alone, %d under queries; peak RSS of the process (server and clients) %d kB\n",
		solo.failed, loaded.failed, benchkit.ProcStatusKiB(0, "VmHWM"))
	if o.hostile <= 0 {
		return nil
	}
	h, err := newHostile(ctx, a, base, o.hostileFleet)
	if err != nil {
		return fmt.Errorf("hostile tenant: %w", err)
	}
	quiet := normalPhase(base, fleet, dash, o, nil, 2)
	stopProfile, err := profile(o.cpuprofile)
	if err != nil {
		return err
	}
	loud := normalPhase(base, fleet, dash, o, h, 3)
	stopProfile()
	for _, p := range []struct {
		name string
		r    phaseResult
	}{{"normal tenants alone", quiet}, {"beside the hostile", loud}} {
		fmt.Printf("%-22s ingest %9.0f records/s (p99 %6.1f ms); cost p50 %6.1f ms p99 %6.1f ms, %d served, %d shed, %d other; peak RSS %d MiB\n",
			p.name+":", p.r.ing.rate, p.r.ing.p(99), p.r.cost.p(50), p.r.cost.p(99), len(p.r.cost.lat), p.r.cost.shed, p.r.cost.failed+p.r.cost.limited, p.r.rss)
	}
	fmt.Printf("kept beside the hostile: ingest %.0f %%, cost p99 %.0f %% of alone (target: ingest ≥ 80 %%, p99 ≤ 120 %%)\n",
		100*loud.ing.rate/quiet.ing.rate, 100*loud.cost.p(99)/quiet.cost.p(99))
	fmt.Println("hostile attacks (outcome × count):")
	h.report()
	return nil
}

// phaseResult is the normal tenants' figures of one phase, and the process's peak RSS.
type phaseResult struct {
	ing, cost stats
	rss       int64 // MiB
}

// normalPhase runs the normal tenants' ingest and cost queries for o.hostile, beside h's
// attacks when h is not nil.
func normalPhase(base string, fleet, dash account, o options, h *hostile, round int) phaseResult {
	rss := sampleRSS()
	until := time.Now().Add(o.hostile)
	var wg sync.WaitGroup
	if h != nil {
		wg.Add(1)
		go func() { defer wg.Done(); h.run(base, until) }()
	}
	var costs stats
	wg.Add(1)
	go func() { defer wg.Done(); costs = queryFor(base, dash, o.normalCost, until) }()
	ing := ingest(base, fleet, o, o.hostile, round)
	wg.Wait()
	return phaseResult{ing: ing, cost: costs, rss: rss.peakMiB()}
}

// account is an account's key and its location ids.
type account struct {
	key  string
	locs []string
}

func newAccount(ctx context.Context, a *app.App, base string, n int, withData bool) (account, error) {
	c, err := a.Accounts.Create(ctx, "load")
	if err != nil {
		return account{}, err
	}
	acc := account{key: c.TestKey}
	for i := 0; i < n; i++ {
		var loc struct{ ID string }
		if err := benchkit.Call(base, acc.key, "POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}, &loc); err != nil {
			return acc, err
		}
		acc.locs = append(acc.locs, loc.ID)
		if !withData {
			continue
		}
		if err := benchkit.Call(base, acc.key, "POST", "/tariffs/elements", map[string]any{"location_id": loc.ID, "direction": "IMPORT",
			"type": "COMMODITY", "contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2026-01-01T00:00:00Z",
			"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
				map[string]any{"valid_from": "07:00:00", "valid_to": "23:00:00", "rate": []any{map[string]any{"fixed": 0.30}}},
				map[string]any{"valid_from": "23:00:00", "valid_to": "07:00:00", "rate": []any{map[string]any{"fixed": 0.10}}}}}}}}}, nil); err != nil {
			return acc, err
		}
		if err := benchkit.Call(base, acc.key, "PUT", "/meters/interval", records([]string{loc.ID}, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 31*48), nil); err != nil {
			return acc, err
		}
	}
	return acc, nil
}

// records are n consecutive half-hours from t0 for each location.
func records(locs []string, t0 time.Time, n int) []any {
	out := make([]any, 0, len(locs)*n)
	for _, l := range locs {
		for i := 0; i < n; i++ {
			s := t0.Add(time.Duration(i) * 30 * time.Minute)
			out = append(out, map[string]any{"location_id": l, "units": "WH", "value": 100 + i%300,
				"start_time": s.Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).Format(time.RFC3339)})
		}
	}
	return out
}

// stats are the latencies of one kind of request and the counts of its refusals.
type stats struct {
	lat                   []time.Duration
	rate                  float64
	shed, limited, failed int
}

func (s stats) p(q int) float64 {
	if len(s.lat) == 0 {
		return 0
	}
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	return float64(s.lat[min(len(s.lat)-1, len(s.lat)*q/100)].Microseconds()) / 1000
}

// ingest pushes daily uploads of the whole fleet for d, each client its own days.
func ingest(base string, acc account, o options, d time.Duration, round int) stats {
	var mu sync.Mutex
	var out stats
	var recs atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := 0; c < o.ingestClients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for day := 0; time.Now().Before(deadline); day++ {
				t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, (round*o.ingestClients+c)*400+day)
				body := records(acc.locs, t0, o.perRequest)
				start := time.Now()
				err := benchkit.Call(base, acc.key, "PUT", "/meters/interval", body, nil)
				mu.Lock()
				if err != nil {
					out.failed++
				} else {
					out.lat = append(out.lat, time.Since(start))
					recs.Add(int64(len(body)))
				}
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	out.rate = float64(recs.Load()) / d.Seconds()
	return out
}

// query fires month-by-DAY costs over the dashboard account's locations until the loaded
// phase ends.
func query(base string, acc account, o options) stats {
	return queryFor(base, acc, o.costClients, time.Now().Add(o.loaded))
}

// queryFor fires month-by-DAY costs with clients clients until deadline.
func queryFor(base string, acc account, clients int, deadline time.Time) stats {
	var mu sync.Mutex
	var out stats
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c; time.Now().Before(deadline); i++ {
				start := time.Now()
				err := benchkit.Call(base, acc.key, "POST", "/costs/interval/"+acc.locs[i%len(acc.locs)]+"?aggregation=DAY",
					map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z"}, nil)
				mu.Lock()
				switch {
				case err == nil:
					out.lat = append(out.lat, time.Since(start))
				case strings.Contains(err.Error(), "status 503"):
					out.shed++
				case strings.Contains(err.Error(), "status 429"):
					out.limited++
				default:
					out.failed++
				}
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	return out
}

// profile starts a CPU profile into path ("": none); the func ends it.
func profile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
