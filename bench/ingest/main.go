// Command ingest benchmarks meter ingestion on this machine, shape by shape (shapes.go):
// (a) records/s through PUT /meters/interval of a separately running `kwhouse serve`,
// (b) ClickHouse's own JSONEachRow ingest over HTTP, the same requests on as many
// keep-alive connections, (c) ClickHouse's Native ingest with clickhouse-client, one file
// per client — the same rows each, the best of -rounds rounds. Run: make bench-ingest.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/schema"
)

type options struct {
	shapes                        string
	rounds                        int
	chAddr, chHTTP, bin, database string
	cluster                       string
	port                          int
	cpuProfile                    string
}

func main() {
	var o options
	flag.StringVar(&o.shapes, "shapes", "all", "comma-separated shapes: realtime, daily, fleet-daily, small, ndjson")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds per side and shape; the best counts (a settled server each time)")
	flag.StringVar(&o.chAddr, "clickhouse", "127.0.0.1:9000", "ClickHouse native address (a comma-separated list on a cluster)")
	flag.StringVar(&o.cluster, "cluster", "", "ClickHouse cluster name: measure (a) only, into the cluster (e.g. kw with make cluster-up)")
	flag.StringVar(&o.chHTTP, "clickhouse-http", "http://127.0.0.1:8123", "ClickHouse HTTP address")
	flag.StringVar(&o.bin, "bin", "bin/kwhouse", "kwhouse binary")
	flag.StringVar(&o.database, "database", "kwbench_ingest", "database (dropped and recreated)")
	flag.IntVar(&o.port, "port", 18080, "port for the kwhouse under test")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write kwhouse's CPU profile over the last round of (a) to FILE.SHAPE")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// result is one shape's three sides.
type result struct {
	shape   shape
	records int
	a, b, c phase
}

func run(o options) error {
	picked, err := pickShapes(o.shapes)
	if err != nil {
		return err
	}
	var results []result
	for _, s := range picked {
		fmt.Printf("== %s: %s\n", s.name, s.about)
		r, err := runShape(context.Background(), o, s)
		if err != nil {
			fmt.Printf("%s: %v\n", s.name, err)
			continue
		}
		results = append(results, r)
	}
	printResults(o, results)
	return nil
}

func runShape(ctx context.Context, o options, s shape) (result, error) {
	cfg := config.ClickHouse{Addr: o.chAddr, Cluster: o.cluster, Database: o.database, Username: "default", DialTimeout: 5 * time.Second,
		MaxOpenConns: 8, MaxExecutionTime: 10 * time.Minute, MaxMemoryUsage: 8 << 30}
	if err := benchkit.DropDatabase(ctx, cfg); err != nil {
		return result{}, err
	}
	db, err := chstore.Open(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	defer func() { _ = benchkit.DropDatabase(ctx, cfg) }()
	if err := schema.Apply(ctx, db, slog.Default()); err != nil {
		return result{}, err
	}
	acc, err := accounts.NewStore(db, nil).Create(ctx, "bench")
	if err != nil {
		return result{}, err
	}
	scope := kwhouse.Scope{AccountID: acc.AccountID}
	locs, err := makeLocations(ctx, db, scope, s.locations)
	if err != nil {
		return result{}, err
	}
	recs := s.records(locs)
	r := result{shape: s, records: len(recs)}
	ch := clickhousePID()
	api, err := startAPI(o, s, db, acc.TestKey, recs, ch)
	if err != nil {
		return r, err
	}
	defer api.close()
	var js *jsonSide
	var native *nativeSide
	if o.cluster == "" { // (b) and (c) measure one server's own insert path; on a cluster only (a) compares
		if js, err = newJSONSide(ctx, o, s, db, scope, recs, ch); err != nil {
			return r, err
		}
	}
	// The sides take turns, round by round: a machine whose speed drifts over minutes
	// (shared cores) then slows every side alike.
	for round := 0; round < o.rounds; round++ {
		p, err := api.round(ctx, round)
		if err != nil {
			return r, err
		}
		r.a = best(r.a, p)
		if js == nil {
			continue
		}
		if p, err = js.round(ctx, round); err != nil {
			return r, err
		}
		r.b = best(r.b, p)
		if native == nil {
			if native, err = newNativeSide(ctx, o, s, db, ch); err != nil {
				return r, err
			}
			defer native.close()
		}
		if p, err = native.round(ctx, round); err != nil {
			return r, err
		}
		r.c = best(r.c, p)
	}
	if n, err := count(ctx, db, "meter_records FINAL"); err != nil || n != uint64(len(recs)) {
		return r, fmt.Errorf("API stored %d of %d records (%v)", n, len(recs), err)
	}
	return r, nil
}

func printResults(o options, results []result) {
	fmt.Printf("\n| shape | records | (a) kwhouse rec/s | (b) JSONEachRow rows/s | (c) Native rows/s | a/b | a/c | kwhouse peak RSS | CPU µs/row: (a) ClickHouse + kwhouse, (b), (c) |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range results {
		if o.cluster != "" {
			fmt.Printf("| %s | %d | %.0f | | | | | %.0f MiB | %.2f + %.2f |\n", r.shape.name, r.records, r.a.rate,
				float64(r.a.rss)/(1<<20), r.a.chCPU, r.a.kwCPU)
			continue
		}
		fmt.Printf("| %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f MiB | %.2f + %.2f, %.2f, %.2f |\n", r.shape.name, r.records,
			r.a.rate, r.b.rate, r.c.rate, r.a.rate/r.b.rate, r.a.rate/r.c.rate, float64(r.a.rss)/(1<<20),
			r.a.chCPU, r.a.kwCPU, r.b.chCPU, r.c.chCPU)
	}
	fmt.Println("targets: a/b ≥ 1.00, a/c ≥ 0.55, peak RSS < 256 MiB")
}

// makeLocations writes location documents straight to the store (the API would take
// 10,000 requests); ingestion only checks that they exist.
func makeLocations(ctx context.Context, db *chstore.DB, scope kwhouse.Scope, n int) ([]string, error) {
	docs := docstore.New(db, docstore.NoCache{}, time.Now)
	ids := make([]string, n)
	batch := make([]docstore.Doc, 0, n)
	for i := range ids {
		ids[i] = kwhouse.NewID(kwhouse.PrefixLocation)
		body, _ := json.Marshal(map[string]any{"id": ids[i], "object": "location", "timezone": "Europe/London", "currency_code": "GBP"})
		batch = append(batch, docstore.Doc{Kind: "location", ID: ids[i], Scope: scope, CreatedUS: time.Now().UnixMicro(), Body: body})
	}
	return ids, docs.Write(ctx, batch...)
}

type record struct {
	Location string  `json:"location_id"`
	Ref      string  `json:"record_reference_id"`
	Units    string  `json:"units"`
	Value    float64 `json:"value"`
	Start    string  `json:"start_time"`
	End      string  `json:"end_time"`
}

func chunks(n, size int) [][2]int {
	var out [][2]int
	for from := 0; from < n; from += size {
		out = append(out, [2]int{from, min(from+size, n)})
	}
	return out
}

// parallel runs work(i) for i in [0,n) on c goroutines and returns the wall time.
func parallel(c, n int, work func(i int) error) (time.Duration, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	start := time.Now()
	for g := 0; g < c; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := work(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), first
}

// phase is what one side of the benchmark measured: rows/s, and CPU µs per row of the
// ClickHouse server and (for the API) of kwhouse, over the timed window.
type phase struct {
	rate, chCPU, kwCPU float64
	rss                int64
	kwSysShare         float64 // of kwhouse's CPU, the part spent in the kernel
	kwFaults           int64   // kwhouse's minor page faults in the window
}

// best keeps the faster of two measurements of one side.
func best(p, q phase) phase {
	if q.rate > p.rate {
		q.rss = max(p.rss, q.rss)
		return q
	}
	p.rss = max(p.rss, q.rss)
	return p
}

func count(ctx context.Context, db *chstore.DB, table string) (uint64, error) {
	var n uint64
	err := db.QueryRow(ctx, chstore.Tool("SELECT count() FROM "+table)).Scan(&n)
	return n, err
}

// settle waits (up to a minute) for background merges of the previous phase to end, so
// that one phase's merging does not slow the next.
func settle(ctx context.Context, db *chstore.DB) {
	for i := 0; i < 600; i++ {
		var n uint64
		if err := db.QueryRow(ctx, chstore.Tool("SELECT count() FROM system.merges")).Scan(&n); err != nil || n == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
