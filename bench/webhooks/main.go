// Command webhooks benchmarks webhook delivery: events made through the API at a steady
// rate (device.create, 10,000 a minute by default) fanned out to three endpoints on
// loopback, then the same with a fourth endpoint that never answers. It prints the p50,
// p99 and max event-to-delivery time per phase (from the creating request's start to the
// endpoint receiving the event) and the process's heap and RSS through the run.
// Run: make bench-webhooks.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
)

func main() {
	perMinute := flag.Int("per-minute", 10000, "events a minute")
	seconds := flag.Int("seconds", 60, "length of each phase")
	pprofAddr := flag.String("pprof", "", "serve Go pprof on this loopback address")
	flag.Parse()
	if *pprofAddr != "" {
		go func() { log.Println(http.ListenAndServe(*pprofAddr, nil)) }()
	}
	if err := run(*perMinute, time.Duration(*seconds)*time.Second); err != nil {
		log.Fatal(err)
	}
}

// receiver is a loopback endpoint that notes when each event arrives.
type receiver struct {
	mu     sync.Mutex
	at     map[string]time.Time // by the device's reference_id
	events map[string]string    // the reference_id of each event id (webhook-id)
	dups   int
	url    string
}

func newReceiver(hang bool) (*receiver, error) {
	r := &receiver{at: map[string]time.Time{}, events: map[string]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + ln.Addr().String() + "/hook"
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if hang {
				<-req.Context().Done()
				return
			}
			body, _ := io.ReadAll(req.Body)
			now := time.Now()
			var e struct {
				Data struct {
					ReferenceID string `json:"reference_id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(body, &e)
			r.mu.Lock()
			if _, ok := r.at[e.Data.ReferenceID]; ok {
				r.dups++
			} else {
				r.at[e.Data.ReferenceID] = now
				r.events[req.Header.Get("webhook-id")] = e.Data.ReferenceID
			}
			r.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
	}()
	return r, nil
}

func run(perMinute int, phase time.Duration) error {
	ctx := context.Background()
	cfg := benchkit.Config("kwbench_webhooks")
	if err := benchkit.DropDatabase(ctx, cfg.ClickHouse); err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		app.Options{RedisPrefix: "kwbenchhooks:"})
	if err != nil {
		return err
	}
	defer a.Close()
	acc, err := a.Accounts.Create(ctx, "bench")
	if err != nil {
		return err
	}
	base, stop, err := benchkit.Serve(ctx, a)
	if err != nil {
		return err
	}
	defer stop()
	var live []*receiver
	for range 3 {
		r, err := newReceiver(false)
		if err != nil {
			return err
		}
		if err := benchkit.Call(base, acc.TestKey, "POST", "/webhooks", map[string]any{"url": r.url}, nil); err != nil {
			return err
		}
		live = append(live, r)
	}
	mem := startMemory()
	fmt.Printf("webhooks: %d events/min for %v per phase, 3 loopback endpoints; webhooks.timeout %v\n", perMinute, phase, cfg.Webhooks.Timeout)
	sent := produce(base, acc.TestKey, "a", perMinute, phase)
	report("3 endpoints", sent, live, created(ctx, a))
	mem.mark("after phase 1")
	dead, err := newReceiver(true)
	if err != nil {
		return err
	}
	if err := benchkit.Call(base, acc.TestKey, "POST", "/webhooks", map[string]any{"url": dead.url}, nil); err != nil {
		return err
	}
	sent = produce(base, acc.TestKey, "b", perMinute, phase)
	report("3 endpoints + 1 that never answers", sent, live, created(ctx, a))
	mem.mark("after phase 2")
	mem.print()
	return nil
}

// sent is when a creating request started and when it was answered (its event stored).
type sent struct{ start, stored time.Time }

// produce creates devices at the rate for d and returns when each request started and
// ended, by reference_id; it then waits 5 s for the deliveries to land.
func produce(base, key, phase string, perMinute int, d time.Duration) map[string]sent {
	made := map[string]sent{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	every := time.Minute / time.Duration(perMinute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		ref := phase + "-" + strconv.Itoa(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			if err := benchkit.Call(base, key, "POST", "/devices", map[string]any{"reference_id": ref}, nil); err != nil {
				log.Printf("create device: %v", err)
				return
			}
			t1 := time.Now()
			mu.Lock()
			made[ref] = sent{start: t0, stored: t1}
			mu.Unlock()
		}()
	}
	wg.Wait()
	time.Sleep(5 * time.Second)
	return made
}

// createdStmt reads when each event was created (its documents row, copied to the outbox).
var createdStmt = chstore.Register("bench.webhooks.created", "SELECT id, created_us FROM webhook_outbox")

// created returns the creation time of every event, by id.
func created(ctx context.Context, a *app.App) map[string]time.Time {
	out := map[string]time.Time{}
	rows, err := a.DB.Query(ctx, createdStmt)
	if err != nil {
		log.Printf("read event creation times: %v", err)
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var us uint64
		if err := rows.Scan(&id, &us); err != nil {
			log.Printf("scan event creation time: %v", err)
			return out
		}
		out[id] = time.UnixMicro(int64(us))
	}
	return out
}

// report prints, per delivery, the time from the creating request's start (the API
// request included), from the event's creation (before its insert) and from the request's
// answer (the event stored) to the endpoint receiving it.
func report(name string, made map[string]sent, rs []*receiver, createdAt map[string]time.Time) {
	var lat, fromStored, fromCreated []time.Duration
	missing, dups := 0, 0
	for _, r := range rs {
		r.mu.Lock()
		for ref, s := range made {
			at, ok := r.at[ref]
			if !ok {
				missing++
				continue
			}
			lat, fromStored = append(lat, at.Sub(s.start)), append(fromStored, at.Sub(s.stored))
		}
		for id, ref := range r.events {
			if c, ok := createdAt[id]; ok && !made[ref].start.IsZero() {
				fromCreated = append(fromCreated, r.at[ref].Sub(c))
			}
		}
		dups += r.dups
		r.mu.Unlock()
	}
	if len(lat) == 0 {
		fmt.Printf("%s: nothing delivered\n", name)
		return
	}
	ms := func(l []time.Duration, p int) float64 { return benchkit.Millis(benchkit.Percentile(l, p)) }
	fmt.Printf("%s: %d events, %d deliveries, missing %d, duplicates %d\n", name, len(made), len(lat), missing, dups)
	fmt.Printf("  request start → delivery: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", ms(lat, 50), ms(lat, 99), ms(lat, 100))
	fmt.Printf("  event stored (answered) → delivery: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
		ms(fromStored, 50), ms(fromStored, 99), ms(fromStored, 100))
	if len(fromCreated) > 0 {
		fmt.Printf("  event created (its created_us, before the insert) → delivery: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d deliveries)\n",
			ms(fromCreated, 50), ms(fromCreated, 99), ms(fromCreated, 100), len(fromCreated))
	}
}

// memory samples the heap and RSS every second.
type memory struct {
	mu      sync.Mutex
	samples []string
	peak    uint64
}

func startMemory() *memory {
	m := &memory{}
	m.mark("start")
	go func() {
		for range time.Tick(time.Second) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m.mu.Lock()
			m.peak = max(m.peak, ms.HeapInuse)
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *memory) mark(label string) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, fmt.Sprintf("%s: heap in use %.1f MiB, RSS %s", label, float64(ms.HeapInuse)/(1<<20), rss()))
}

func (m *memory) print() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.samples {
		fmt.Println(s)
	}
	fmt.Printf("peak heap in use %.1f MiB\n", float64(m.peak)/(1<<20))
}

func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "?"
}
