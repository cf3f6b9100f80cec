// Command onboard measures fleet onboarding over the API (make bench-onboard): location +
// tariff pairs (POST /locations, then a two-rate time-of-use POST /tariffs/elements with a
// 2024–2030 contract) created by 1, 8 and 32 clients; it prints pairs/s, p50/p99 of each
// call, and the tariff_rates rows and bytes the fleet's tariffs hold before and after a
// month of costs is asked for every location.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
)

func main() {
	pairs := flag.Int("pairs", 400, "location + tariff pairs per client count")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the onboarding runs to this file")
	bulkRows := flag.Int("import", 100_000, "locations per kwhouse import shape (0: no import runs)")
	apiRuns := flag.Bool("api", true, "run the API onboarding (1, 8, 32 clients)")
	fresh := flag.Bool("fresh", false, "drop the database first (else each run onboards a new account into it)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*pairs, *bulkRows, *apiRuns, *fresh); err != nil {
		log.Print(err)
	}
}

func run(pairs, bulkRows int, apiRuns, fresh bool) error {
	ctx := context.Background()
	start := benchkit.Start
	if fresh {
		start = benchkit.StartFresh
	}
	a, base, stop, err := start(ctx, "kwbench_onboard", "kwbenchonboard:")
	if err != nil {
		return err
	}
	defer stop()
	acc, err := a.Accounts.Create(ctx, "onboard")
	if err != nil {
		return err
	}
	if bulkRows > 0 {
		if err := bulk(ctx, a, bulkRows); err != nil {
			return err
		}
	}
	if !apiRuns {
		return nil
	}
	var all []string
	for _, clients := range []int{1, 8, 32} {
		locs, err := onboardAPI(base, acc.TestKey, clients, pairs)
		if err != nil {
			return err
		}
		all = append(all, locs...)
	}
	rows, bytes, err := rateStorage(ctx, a.DB, acc.AccountID)
	if err != nil {
		return err
	}
	fmt.Printf("tariff_rates after onboarding %d locations: %d rows, %d bytes (per 1,000 locations: %.0f rows)\n",
		len(all), rows, bytes, float64(rows)*1000/float64(len(all)))
	for _, l := range all {
		if err := benchkit.Call(base, acc.TestKey, "POST", "/costs/interval/"+l+"?aggregation=DAY",
			map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z"}, nil); err != nil {
			return err
		}
	}
	rows, bytes, err = rateStorage(ctx, a.DB, acc.AccountID)
	if err != nil {
		return err
	}
	fmt.Printf("tariff_rates after a month of costs for each: %d rows, %d bytes (per 1,000 locations: %.0f rows)\n",
		rows, bytes, float64(rows)*1000/float64(len(all)))
	return nil
}

// onboardAPI creates pairs location + tariff pairs with clients clients and prints the rates.
func onboardAPI(base, key string, clients, pairs int) ([]string, error) {
	var mu sync.Mutex
	var locLat, trfLat []time.Duration
	var locs []string
	var firstErr error
	cpuBefore := serverCPU()
	next := make(chan int, pairs)
	for i := 0; i < pairs; i++ {
		next <- i
	}
	close(next)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				t0 := time.Now()
				var loc struct{ ID string }
				err := benchkit.Call(base, key, "POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}, &loc)
				t1 := time.Now()
				if err == nil {
					err = benchkit.Call(base, key, "POST", "/tariffs/elements", tariff(loc.ID), nil)
				}
				t2 := time.Now()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				locLat, trfLat, locs = append(locLat, t1.Sub(t0)), append(trfLat, t2.Sub(t1)), append(locs, loc.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if firstErr != nil {
		return nil, firstErr
	}
	cpu := serverCPU().minus(cpuBefore)
	fmt.Printf("%2d clients: %4d pairs in %5.1f s = %6.0f pairs/s; POST /locations p50 %5.1f p99 %6.1f ms; POST /tariffs/elements p50 %5.1f p99 %6.1f ms; ClickHouse CPU per pair: user %.1f, kernel %.1f ms\n",
		clients, pairs, d.Seconds(), float64(pairs)/d.Seconds(), pct(locLat, 50), pct(locLat, 99), pct(trfLat, 50), pct(trfLat, 99),
		cpu.user.Seconds()*1000/float64(pairs), cpu.kernel.Seconds()*1000/float64(pairs))
	return locs, nil
}

func tariff(loc string) map[string]any {
	h := func(from, to string, price float64) map[string]any {
		return map[string]any{"valid_from": from, "valid_to": to, "rate": []any{map[string]any{"fixed": price}}}
	}
	return map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
		"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"},
			"hours": []any{h("07:00:00", "23:00:00", 0.30), h("23:00:00", "07:00:00", 0.10)}}}}}}
}

func pct(d []time.Duration, q int) float64 {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[min(len(d)-1, len(d)*q/100)].Microseconds()) / 1000
}

// rateStorage counts the account's tariff_rates rows; bytes are those rows' share of the
// table's bytes on disk.
func rateStorage(ctx context.Context, db *chstore.DB, account string) (rows, bytes uint64, err error) {
	var all, allBytes uint64
	err = db.QueryRow(ctx, chstore.Tool(`SELECT sum(rows), sum(bytes_on_disk) FROM system.parts
		WHERE database = currentDatabase() AND table = 'tariff_rates' AND active`)).Scan(&all, &allBytes)
	if err != nil {
		return 0, 0, err
	}
	err = db.QueryRow(ctx, chstore.Tool(`SELECT count() FROM tariff_rates WHERE account_id = ?`), account).Scan(&rows)
	if err != nil || all == 0 {
		return rows, 0, err
	}
	return rows, allBytes * rows / all, nil
}

// cpuTimes is the CPU a process has used, in user and kernel mode.
type cpuTimes struct{ user, kernel time.Duration }

func (c cpuTimes) minus(o cpuTimes) cpuTimes { return cpuTimes{c.user - o.user, c.kernel - o.kernel} }

// serverCPU reads the local clickhouse-server's CPU times from /proc (zero when it is not
// found). Every document write is a ClickHouse insert that creates a part of ~34 files:
// on a filesystem that is slow to create files (see docs/benchmarks.md, "Onboarding")
// the kernel share per pair grows, and the rate with it.
func serverCPU() cpuTimes {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		comm, err := os.ReadFile("/proc/" + d.Name() + "/comm")
		if err != nil || !strings.HasPrefix(string(comm), "clickhouse-serv") {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			return cpuTimes{}
		}
		// Fields after the ")" closing the command name: utime and stime are the 12th and
		// 13th, in clock ticks (100 a second on Linux).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 13 {
			return cpuTimes{}
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		return cpuTimes{time.Duration(u) * 10 * time.Millisecond, time.Duration(k) * 10 * time.Millisecond}
	}
	return cpuTimes{}
}
