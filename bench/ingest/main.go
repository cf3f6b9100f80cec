// Command ingest benchmarks meter ingestion on this machine, shape by shape (shapes.go):
// (a) records/s through PUT /meters/interval of a separately running `kwhouse serve`,
// (b) ClickHouse's own JSONEachRow ingest over HTTP, the same requests on as many
// keep-alive connections, (c) ClickHouse's Native ingest with clickhouse-client, one file
// per client — the same rows each, the best of -rounds rounds. Run: make bench-ingest.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	if r.a, err = benchAPI(ctx, o, s, db, acc.TestKey, recs, ch); err != nil {
		return r, err
	}
	if o.cluster != "" {
		return r, nil // (b) and (c) measure one server's own insert path; on a cluster only (a) compares
	}
	if r.b, err = benchJSONEachRow(ctx, o, s, db, scope, recs, ch); err != nil {
		return r, err
	}
	r.c, err = benchNative(ctx, o, s, db, ch)
	return r, err
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

// apiBodies are the shape's requests: JSON arrays, or one NDJSON body.
func apiBodies(s shape, recs []record) [][]byte {
	if s.ndjson {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, r := range recs {
			_ = enc.Encode(r) // a record always encodes
		}
		return [][]byte{buf.Bytes()}
	}
	parts := chunks(len(recs), s.perRequest)
	bodies := make([][]byte, len(parts))
	for i, p := range parts {
		bodies[i], _ = json.Marshal(recs[p[0]:p[1]])
	}
	return bodies
}

func benchAPI(ctx context.Context, o options, s shape, db *chstore.DB, key string, recs []record, ch int) (phase, error) {
	cmd := exec.Command(o.bin, "serve")
	cmd.Env = append(os.Environ(), "KWHOUSE_CLICKHOUSE_ADDR="+o.chAddr, "KWHOUSE_CLICKHOUSE_CLUSTER="+o.cluster, "KWHOUSE_CLICKHOUSE_DATABASE="+o.database,
		"KWHOUSE_HTTP_ADDR=127.0.0.1:"+strconv.Itoa(o.port), "KWHOUSE_AUTH_JWT_SECRET=bench-bench-bench-bench-bench-bench-42",
		"KWHOUSE_LOG_LEVEL=warn", "KWHOUSE_HTTP_PPROF_ADDR="+pprofAddr(o))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return phase{}, fmt.Errorf("start %s: %w", o.bin, err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	base := "http://127.0.0.1:" + strconv.Itoa(o.port)
	if err := waitReady(base); err != nil {
		return phase{}, err
	}
	bodies := apiBodies(s, recs)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients}}
	put := func(i int) error {
		req, _ := http.NewRequest("PUT", base+"/meters/interval", bytes.NewReader(bodies[i]))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if s.ndjson {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		var b struct {
			Accepted int `json:"records_accepted"`
		}
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != 200 || b.Accepted != min(s.perRequest, len(recs)-i*s.perRequest) {
			return fmt.Errorf("PUT %d: status %d, accepted %d (%v)", i, res.StatusCode, b.Accepted, err)
		}
		return nil
	}
	var out phase
	for round := 0; round < o.rounds; round++ {
		settle(ctx, db)
		var prof *profile
		if round == o.rounds-1 {
			prof = startProfile(o, s, len(recs))
		}
		cpu := startCPU(ch, cmd.Process.Pid)
		d, err := parallel(s.clients, len(bodies), put)
		if err != nil {
			return phase{}, err
		}
		if prof != nil {
			if err := prof.stop(); err != nil {
				return phase{}, err
			}
		}
		us := cpu.perRow(len(recs))
		kw := cpu.since(1)
		p := phase{rate: float64(len(recs)) / d.Seconds(), chCPU: us[0], kwCPU: us[1], rss: peakRSS(cmd.Process.Pid), kwFaults: kw.faults}
		if kw.user+kw.sys > 0 {
			p.kwSysShare = kw.sys / (kw.user + kw.sys)
		}
		fmt.Printf("  (a) round %d: %9.0f records/s, %.2f + %.2f µs CPU per row (ClickHouse + kwhouse), RSS %.0f MiB\n",
			round+1, p.rate, p.chCPU, p.kwCPU, float64(p.rss)/(1<<20))
		out = best(out, p)
	}
	if n, err := count(ctx, db, "meter_records FINAL"); err != nil || n != uint64(len(recs)) {
		return phase{}, fmt.Errorf("API stored %d of %d records (%v)", n, len(recs), err)
	}
	return out, nil
}

func waitReady(base string) error {
	for i := 0; i < 100; i++ {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("kwhouse did not become ready at %s", base)
}

// peakRSS reads VmHWM (the resident set's high-water mark) of a process, in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchJSONEachRow sends the same records in the same requests, shaped as rows of a copy
// of meter_records, to ClickHouse's HTTP interface (keep-alive connections, as a Go
// client of ClickHouse would hold).
func benchJSONEachRow(ctx context.Context, o options, s shape, db *chstore.DB, scope kwhouse.Scope, recs []record, ch int) (phase, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_json AS meter_records")); err != nil {
		return phase{}, err
	}
	parts := chunks(len(recs), s.perRequest)
	bodies := make([][]byte, len(parts))
	for i, p := range parts {
		var buf bytes.Buffer
		for j, r := range recs[p[0]:p[1]] {
			st, _ := time.Parse(time.RFC3339, r.Start)
			en, _ := time.Parse(time.RFC3339, r.End)
			row := map[string]any{"account_id": scope.AccountID, "live_mode": 0, "location_id": r.Location, "device_id": "",
				"direction": "IMPORT", "tariff_rate": "IMPORT", "start_time": st.Format(time.DateTime), "end_time": en.Format(time.DateTime),
				"energy_wh": r.Value, "confidence": 1, "session_reference_id": "", "record_reference_id": r.Ref,
				"batch_id": "bat_0", "version": p[0] + j}
			line, _ := json.Marshal(row)
			buf.Write(append(line, '\n'))
		}
		bodies[i] = buf.Bytes()
	}
	url := o.chHTTP + "/?database=" + o.database + "&query=" + strings.ReplaceAll("INSERT INTO bench_json FORMAT JSONEachRow", " ", "%20")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients}}
	post := func(i int) error {
		res, err := client.Post(url, "application/x-ndjson", bytes.NewReader(bodies[i]))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			msg, _ := io.ReadAll(res.Body)
			return fmt.Errorf("ClickHouse: %d %s", res.StatusCode, msg)
		}
		return nil
	}
	var out phase
	for round := 0; round < o.rounds; round++ {
		if round > 0 {
			if err := db.Exec(ctx, chstore.Tool("TRUNCATE TABLE bench_json")); err != nil {
				return phase{}, err
			}
		}
		settle(ctx, db)
		cpu := startCPU(ch)
		d, err := parallel(s.clients, len(bodies), post)
		if err != nil {
			return phase{}, err
		}
		p := phase{rate: float64(len(recs)) / d.Seconds(), chCPU: cpu.perRow(len(recs))[0]}
		fmt.Printf("  (b) round %d: %9.0f rows/s, %.2f µs ClickHouse CPU per row\n", round+1, p.rate, p.chCPU)
		out = best(out, p)
	}
	if n, err := count(ctx, db, "bench_json"); err != nil || n != uint64(len(recs)) {
		return phase{}, fmt.Errorf("JSONEachRow stored %d of %d (%v)", n, len(recs), err)
	}
	return out, nil
}

// benchNative exports bench_json in Native format, one file per client, and inserts the
// files with clickhouse-client: ClickHouse's ceiling for these rows.
func benchNative(ctx context.Context, o options, s shape, db *chstore.DB, ch int) (phase, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_native AS meter_records")); err != nil {
		return phase{}, err
	}
	host, port, _ := strings.Cut(o.chAddr, ":")
	dir, err := os.MkdirTemp("", "kwbench")
	if err != nil {
		return phase{}, err
	}
	defer os.RemoveAll(dir)
	files := make([]string, s.clients)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("part%d.native", i))
		q := fmt.Sprintf("SELECT * FROM %s.bench_json WHERE cityHash64(record_reference_id) %% %d = %d FORMAT Native", o.database, s.clients, i)
		out, err := os.Create(files[i])
		if err != nil {
			return phase{}, err
		}
		cmd := exec.Command("clickhouse-client", "--host", host, "--port", port, "--query", q)
		cmd.Stdout = out
		err = cmd.Run()
		out.Close()
		if err != nil {
			return phase{}, fmt.Errorf("export native: %w", err)
		}
	}
	insert := func(i int) error {
		in, err := os.Open(files[i])
		if err != nil {
			return err
		}
		defer in.Close()
		cmd := exec.Command("clickhouse-client", "--host", host, "--port", port, "--database", o.database,
			"--query", "INSERT INTO bench_native FORMAT Native")
		cmd.Stdin = in
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("clickhouse-client: %v: %s", err, out)
		}
		return nil
	}
	var out phase
	for round := 0; round < o.rounds; round++ {
		if round > 0 {
			if err := db.Exec(ctx, chstore.Tool("TRUNCATE TABLE bench_native")); err != nil {
				return phase{}, err
			}
		}
		settle(ctx, db)
		cpu := startCPU(ch)
		d, err := parallel(s.clients, len(files), insert)
		if err != nil {
			return phase{}, err
		}
		n, err := count(ctx, db, "bench_native")
		if err != nil {
			return phase{}, err
		}
		p := phase{rate: float64(n) / d.Seconds(), chCPU: cpu.perRow(int(n))[0]}
		fmt.Printf("  (c) round %d: %9.0f rows/s, %.2f µs ClickHouse CPU per row\n", round+1, p.rate, p.chCPU)
		out = best(out, p)
	}
	return out, nil
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
