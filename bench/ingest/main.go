// Command ingest benchmarks meter ingestion on this machine: (a) records/s through
// PUT /meters/interval of a separately running `kwhouse serve`, (b) ClickHouse's own
// JSONEachRow ingest over HTTP with curl, (c) ClickHouse's Native ingest with
// clickhouse-client — the same records, 4 concurrent clients each. Run: make bench-ingest.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
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
	locations, slots, clients, arraySize int
	chAddr, chHTTP, bin, database        string
	cluster                              string
	port, repeat                         int
	cpuProfile                           string
}

func main() {
	var o options
	flag.IntVar(&o.locations, "locations", 10000, "fleet size")
	flag.IntVar(&o.slots, "slots", 50, "half-hour readings per location")
	flag.IntVar(&o.clients, "clients", 4, "concurrent clients on each side")
	flag.IntVar(&o.arraySize, "array", 10000, "records per PUT")
	flag.StringVar(&o.chAddr, "clickhouse", "127.0.0.1:9000", "ClickHouse native address (a comma-separated list on a cluster)")
	flag.StringVar(&o.cluster, "cluster", "", "ClickHouse cluster name: measure (a) only, into the cluster (e.g. kw with make cluster-up)")
	flag.StringVar(&o.chHTTP, "clickhouse-http", "http://127.0.0.1:8123", "ClickHouse HTTP address")
	flag.StringVar(&o.bin, "bin", "bin/kwhouse", "kwhouse binary")
	flag.StringVar(&o.database, "database", "kwbench_ingest", "database (dropped and recreated)")
	flag.IntVar(&o.port, "port", 18080, "port for the kwhouse under test")
	flag.IntVar(&o.repeat, "repeat", 1, "send the records this many times (longer runs for profiling)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write kwhouse's CPU profile over phase (a) to this file")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	ctx := context.Background()
	cfg := config.ClickHouse{Addr: o.chAddr, Cluster: o.cluster, Database: o.database, Username: "default", DialTimeout: 5 * time.Second,
		MaxOpenConns: 8, MaxExecutionTime: 10 * time.Minute, MaxMemoryUsage: 8 << 30}
	if err := benchkit.DropDatabase(ctx, cfg); err != nil {
		return err
	}
	db, err := chstore.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := schema.Apply(ctx, db, slog.Default()); err != nil {
		return err
	}
	acc, err := accounts.NewStore(db, nil).Create(ctx, "bench")
	if err != nil {
		return err
	}
	scope := kwhouse.Scope{AccountID: acc.AccountID}
	locs, err := makeLocations(ctx, db, scope, o.locations)
	if err != nil {
		return err
	}
	recs := makeRecords(locs, o.slots)
	fmt.Printf("fleet: %d locations × %d half-hours = %d records; %d clients each side\n", len(locs), o.slots, len(recs), o.clients)

	ch := clickhousePID()
	a, err := benchAPI(o, acc.TestKey, recs, ch)
	if err != nil {
		return err
	}
	if n, err := count(ctx, db, "meter_records FINAL"); err != nil || n != uint64(len(recs)) {
		return fmt.Errorf("API stored %d of %d records (%v)", n, len(recs), err)
	}
	if o.cluster != "" {
		// (b) and (c) measure one server's own insert path; on a cluster only (a) compares.
		fmt.Printf("\n(a) kwhouse PUT /meters/interval into cluster %s: %9.0f records/s, kwhouse %.2f µs CPU per row, peak RSS %.0f MiB\n",
			o.cluster, a.rate, a.kwCPU, float64(a.rss)/(1<<20))
		return benchkit.DropDatabase(ctx, cfg)
	}
	settle(ctx, db)
	b, err := benchJSONEachRow(ctx, o, db, scope, recs, ch)
	if err != nil {
		return err
	}
	settle(ctx, db)
	c, err := benchNative(ctx, o, db, ch)
	if err != nil {
		return err
	}
	fmt.Printf("\n(a) kwhouse PUT /meters/interval (%d-record JSON arrays): %9.0f records/s\n", o.arraySize, a.rate)
	fmt.Printf("(b) ClickHouse JSONEachRow over HTTP (curl, %d rows/request): %9.0f rows/s\n", o.arraySize, b.rate)
	fmt.Printf("(c) ClickHouse Native (clickhouse-client, 1 file/client):       %9.0f rows/s\n", c.rate)
	fmt.Printf("a/b = %.2f (target ≥ 1.00)   a/c = %.2f (target ≥ 0.55)   kwhouse peak RSS %.0f MiB\n",
		a.rate/b.rate, a.rate/c.rate, float64(a.rss)/(1<<20))
	fmt.Printf("CPU per row, µs (ClickHouse server / kwhouse): (a) %.2f / %.2f   (b) %.2f   (c) %.2f\n",
		a.chCPU, a.kwCPU, b.chCPU, c.chCPU)
	fmt.Printf("kwhouse in (a): %.0f%% of its CPU in the kernel, %d page faults\n", 100*a.kwSysShare, a.kwFaults)
	return benchkit.DropDatabase(ctx, cfg)
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

// makeRecords gives every location one reading per half-hour slot, slot by slot: what a
// fleet pushing every half hour sends.
func makeRecords(locs []string, slots int) []record {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]record, 0, len(locs)*slots)
	for s := 0; s < slots; s++ {
		st := t0.Add(time.Duration(s) * 30 * time.Minute)
		for i, l := range locs {
			out = append(out, record{Location: l, Ref: "r" + strconv.Itoa(s*len(locs)+i), Units: "WH",
				Value: float64(100 + (i*7+s*13)%900), Start: st.Format(time.RFC3339), End: st.Add(30 * time.Minute).Format(time.RFC3339)})
		}
	}
	return out
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

func benchAPI(o options, key string, recs []record, ch int) (phase, error) {
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
	parts := chunks(len(recs), o.arraySize)
	bodies := make([][]byte, len(parts))
	for i, p := range parts {
		bodies[i], _ = json.Marshal(recs[p[0]:p[1]])
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.clients}}
	put := func(i int) error {
		req, _ := http.NewRequest("PUT", base+"/meters/interval", bytes.NewReader(bodies[i]))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		var b struct {
			Accepted int `json:"records_accepted"`
		}
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != 200 || b.Accepted != parts[i][1]-parts[i][0] {
			return fmt.Errorf("PUT %d: status %d, accepted %d (%v)", i, res.StatusCode, b.Accepted, err)
		}
		return nil
	}
	prof := startProfile(o)
	cpu := startCPU(ch, cmd.Process.Pid)
	d, err := parallel(o.clients, len(bodies)*o.repeat, func(i int) error { return put(i % len(bodies)) })
	if err != nil {
		return phase{}, err
	}
	if err := prof.stop(); err != nil {
		return phase{}, err
	}
	n := len(recs) * o.repeat
	us := cpu.perRow(n)
	kw := cpu.since(1)
	p := phase{rate: float64(n) / d.Seconds(), chCPU: us[0], kwCPU: us[1], rss: peakRSS(cmd.Process.Pid), kwFaults: kw.faults}
	if kw.user+kw.sys > 0 {
		p.kwSysShare = kw.sys / (kw.user + kw.sys)
	}
	return p, nil
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

// benchJSONEachRow sends the same records, shaped as rows of a copy of meter_records,
// to ClickHouse's HTTP interface with curl.
func benchJSONEachRow(ctx context.Context, o options, db *chstore.DB, scope kwhouse.Scope, recs []record, ch int) (phase, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_json AS meter_records")); err != nil {
		return phase{}, err
	}
	dir, err := os.MkdirTemp("", "kwbench")
	if err != nil {
		return phase{}, err
	}
	defer os.RemoveAll(dir)
	parts := chunks(len(recs), o.arraySize)
	files := make([]string, len(parts))
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
		files[i] = filepath.Join(dir, fmt.Sprintf("chunk%03d.ndjson", i))
		if err := os.WriteFile(files[i], buf.Bytes(), 0o600); err != nil {
			return phase{}, err
		}
	}
	url := o.chHTTP + "/?database=" + o.database + "&query=" + strings.ReplaceAll("INSERT INTO bench_json FORMAT JSONEachRow", " ", "%20")
	cpu := startCPU(ch)
	d, err := parallel(o.clients, len(files), func(i int) error {
		out, err := exec.Command("curl", "-sS", "--fail-with-body", "--data-binary", "@"+files[i], url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("curl: %v: %s", err, out)
		}
		return nil
	})
	if err != nil {
		return phase{}, err
	}
	if n, err := count(ctx, db, "bench_json"); err != nil || n != uint64(len(recs)) {
		return phase{}, fmt.Errorf("JSONEachRow stored %d of %d (%v)", n, len(recs), err)
	}
	return phase{rate: float64(len(recs)) / d.Seconds(), chCPU: cpu.perRow(len(recs))[0]}, nil
}

// benchNative exports bench_json in Native format, one file per client, and inserts the
// files with clickhouse-client: ClickHouse's ceiling for these rows.
func benchNative(ctx context.Context, o options, db *chstore.DB, ch int) (phase, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_native AS meter_records")); err != nil {
		return phase{}, err
	}
	host, port, _ := strings.Cut(o.chAddr, ":")
	dir, err := os.MkdirTemp("", "kwbench")
	if err != nil {
		return phase{}, err
	}
	defer os.RemoveAll(dir)
	files := make([]string, o.clients)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("part%d.native", i))
		q := fmt.Sprintf("SELECT * FROM %s.bench_json WHERE cityHash64(record_reference_id) %% %d = %d FORMAT Native", o.database, o.clients, i)
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
	cpu := startCPU(ch)
	d, err := parallel(o.clients, len(files), func(i int) error {
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
	})
	if err != nil {
		return phase{}, err
	}
	n, err := count(ctx, db, "bench_native")
	if err != nil {
		return phase{}, err
	}
	return phase{rate: float64(n) / d.Seconds(), chCPU: cpu.perRow(int(n))[0]}, nil
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
