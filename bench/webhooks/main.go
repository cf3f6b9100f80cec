// Command webhooks benchmarks webhook delivery: events made through the API at a steady
// rate (device.create, 10,000 a minute by default) fanned out to three endpoints on
// loopback, then the same with a fourth endpoint that never answers. kwhouse runs as its
// own process (`bin/kwhouse serve`), so its memory is measured apart from the bench's
// bookkeeping. It prints the p50, p99 and max event-to-delivery time per phase and
// kwhouse's Go heap after a GC, RSS and goroutines through the run. Run: make
// bench-webhooks.
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
	"strconv"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/schema"
)

func main() {
	var o options
	flag.IntVar(&o.perMinute, "per-minute", 10000, "events a minute")
	flag.DurationVar(&o.phase, "phase", 4*time.Minute, "length of the phase with 3 endpoints")
	flag.DurationVar(&o.deadPhase, "dead-phase", 2*time.Minute, "length of the phase beside an endpoint that never answers")
	flag.DurationVar(&o.sample, "sample", 15*time.Second, "interval of kwhouse's memory samples")
	flag.StringVar(&o.bin, "bin", "bin/kwhouse", "kwhouse binary, run as its own process (kwhouse serve)")
	flag.IntVar(&o.port, "port", 18090, "loopback port of the kwhouse under test (its pprof on the next one)")
	flag.StringVar(&o.heapProfile, "heapprofile", "", "write kwhouse's heap profiles (after a GC) at the start and the end to FILE.start and FILE.end")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// options are the flags.
type options struct {
	perMinute        int
	phase, deadPhase time.Duration
	sample           time.Duration
	bin, heapProfile string
	port             int
}

// database is the bench's own, dropped and made afresh each run.
const database = "kwbench_webhooks"

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

func run(o options) error {
	ctx := context.Background()
	cfg := benchkit.Config(database)
	if err := benchkit.DropDatabase(ctx, cfg.ClickHouse); err != nil {
		return err
	}
	db, err := chstore.Open(ctx, cfg.ClickHouse)
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
	kw, err := startKwhouse(o, cfg)
	if err != nil {
		return err
	}
	defer kw.Stop()
	base := kw.Base
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
	mem := kw.sampleMemory(o.sample)
	if err := kw.heapProfile(o.heapProfile, "start"); err != nil {
		return err
	}
	fmt.Printf("webhooks: %d events/min, 3 loopback endpoints for %v, then beside one that never answers for %v; kwhouse pid %d (%s serve)\n",
		o.perMinute, o.phase, o.deadPhase, kw.PID(), o.bin)
	sent := produce(base, acc.TestKey, "a", o.perMinute, o.phase)
	report("3 endpoints", sent, live, created(ctx, db))
	mem.mark("after phase 1")
	dead, err := newReceiver(true)
	if err != nil {
		return err
	}
	if err := benchkit.Call(base, acc.TestKey, "POST", "/webhooks", map[string]any{"url": dead.url}, nil); err != nil {
		return err
	}
	sent = produce(base, acc.TestKey, "b", o.perMinute, o.deadPhase)
	report("3 endpoints + 1 that never answers", sent, live, created(ctx, db))
	mem.mark("after phase 2")
	if err := kw.heapProfile(o.heapProfile, "end"); err != nil {
		return err
	}
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
func created(ctx context.Context, db *chstore.DB) map[string]time.Time {
	out := map[string]time.Time{}
	rows, err := db.Query(ctx, createdStmt)
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
