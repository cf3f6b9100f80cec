// Command slots benchmarks GET /slots/threshold: 1,000 locations, each with a tariff that
// follows one half-hourly market. It prints p50/p99 of a 24-hour HIGH r=0.25 request from
// one client, cold (the first request of a location) and for one location asked for every
// half-hour's next 24 hours, then requests/s with 8 clients over all locations with moving
// windows. Run: make bench-slots.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

func main() {
	locations := flag.Int("locations", 1000, "locations")
	requests := flag.Int("requests", 200, "single-client requests")
	clients := flag.Int("clients", 8, "concurrent clients for the throughput run")
	seconds := flag.Int("seconds", 10, "length of the throughput run")
	flag.Parse()
	if err := run(*locations, *requests, *clients, *seconds); err != nil {
		log.Fatal(err)
	}
}

func run(nloc, nreq, clients, seconds int) error {
	ctx := context.Background()
	cfg := benchkit.Config("kwbench_slots")
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), app.Options{RedisPrefix: "kwbenchslots:"})
	if err != nil {
		return err
	}
	defer a.Close()
	acc, err := a.Accounts.Create(ctx, "bench")
	if err != nil {
		return err
	}
	scope := kwhouse.Scope{AccountID: acc.AccountID}
	locs, err := setup(ctx, a, scope, nloc)
	if err != nil {
		return err
	}
	base, stop, err := benchkit.Serve(ctx, a)
	if err != nil {
		return err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	day := time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)
	// ask sends a "next 24 hours" request starting at half-hour k of June 3, as a controller
	// asking every half hour would.
	ask := func(loc string, k int) (time.Duration, error) {
		w0 := day.Add(time.Duration(k) * 30 * time.Minute)
		req, _ := http.NewRequest("GET", base+"/slots/threshold/"+loc+"?segment=HIGH&relative=0.25&start_time="+
			w0.Format(time.RFC3339)+"&end_time="+w0.Add(24*time.Hour).Format(time.RFC3339), nil)
		req.Header.Set("Authorization", "Bearer "+acc.TestKey)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		var out struct {
			Duration float64 `json:"duration"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || out.Duration < 360 {
			return 0, fmt.Errorf("status %d duration %v (%v)", res.StatusCode, out.Duration, err)
		}
		return time.Since(t0), nil
	}
	report := func(what string, lat []time.Duration) {
		p := func(q int) float64 { return benchkit.Millis(benchkit.Percentile(lat, q)) }
		fmt.Printf("%-62s p50 %6.1f ms  p99 %6.1f ms (%d requests)\n", what, p(50), p(99), len(lat))
	}
	// Cold: the first request of a location since the last price write (nothing to reuse).
	var cold []time.Duration
	for i, loc := range locs[:min(nreq, len(locs))] {
		d, err := ask(loc, i%48)
		if err != nil {
			return err
		}
		cold = append(cold, d)
	}
	report("24 h HIGH r=0.25, 1 client, first request of a location:", cold)
	// One location asked for every half-hour's next 24 hours (its span is reused).
	var warm []time.Duration
	for i := 0; i < nreq; i++ {
		d, err := ask(locs[0], i%48)
		if err != nil {
			return err
		}
		warm = append(warm, d)
	}
	report("24 h HIGH r=0.25, 1 client, one location, moving window:", warm)
	// Every other location's first request, 8 clients at a time.
	t0, next := time.Now(), atomic.Int64{}
	next.Store(int64(min(nreq, len(locs))))
	var firstWG sync.WaitGroup
	var firstFailed atomic.Int64
	for c := 0; c < clients; c++ {
		firstWG.Add(1)
		go func() {
			defer firstWG.Done()
			for i := next.Add(1) - 1; i < int64(len(locs)); i = next.Add(1) - 1 {
				if _, err := ask(locs[i], int(i%48)); err != nil {
					firstFailed.Add(1)
				}
			}
		}()
	}
	firstWG.Wait()
	first := len(locs) - min(nreq, len(locs))
	fmt.Printf("%d clients, first request of %d locations: %.0f requests/s (%d failed)\n", clients, first,
		float64(first)/time.Since(t0).Seconds(), firstFailed.Load())
	var done, failed atomic.Int64
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(c)))
			for time.Now().Before(deadline) {
				if _, err := ask(locs[r.Intn(len(locs))], r.Intn(48)); err != nil {
					failed.Add(1)
				}
				done.Add(1)
			}
		}(c)
	}
	wg.Wait()
	fmt.Printf("%d clients over %d locations, moving windows: %.0f requests/s (%d failed)\n", clients, len(locs), float64(done.Load())/float64(seconds), failed.Load())
	return a.DB.Exec(ctx, chstore.Tool("DROP DATABASE IF EXISTS kwbench_slots"))
}

// setup creates one market with a week of half-hourly prices and a market tariff per location.
func setup(ctx context.Context, a *app.App, scope kwhouse.Scope, n int) ([]string, error) {
	m, err := a.Tariffs.CreateMarket(ctx, scope, tariffs.MarketInput{DisplayName: "day-ahead", CurrencyCode: "GBP"})
	if err != nil {
		return nil, err
	}
	var prices []tariffs.MarketPrice
	t0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 7*48; i++ {
		s := t0.Add(time.Duration(i) * 30 * time.Minute)
		p := 0.05 + float64((i*37)%48)/100
		prices = append(prices, tariffs.MarketPrice{StartTime: catalog.Timestamp(s), EndTime: catalog.Timestamp(s.Add(30 * time.Minute)), Price: &p})
	}
	if _, err := a.Tariffs.PutPrices(ctx, scope, m.ID, prices); err != nil {
		return nil, err
	}
	tz, cur := "Europe/London", "GBP"
	locs := make([]string, n)
	yes := true
	cs, ce := catalog.Timestamp(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), catalog.Timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	start := time.Now()
	for i := range locs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			l, err := a.Catalog.CreateLocation(ctx, scope, catalog.LocationInput{Timezone: &tz, CurrencyCode: &cur})
			if err != nil {
				errs <- err
				return
			}
			locs[i] = l.ID
			if _, err := a.Tariffs.Create(ctx, scope, tariffs.Input{LocationID: l.ID, Direction: "IMPORT", Type: "COMMODITY",
				MarketRates: &yes, MarketID: &m.ID, ContractStartDate: &cs, ContractEndDate: &ce}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	fmt.Printf("set up %d locations with market tariffs in %.0f s\n", n, time.Since(start).Seconds())
	return locs, nil
}
