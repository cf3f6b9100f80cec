package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/config"
)

// kwhouse is the service under test, its own process (`kwhouse serve`): its memory is
// its own, apart from the bench's bookkeeping of every event and delivery.
type kwhouse struct {
	*benchkit.Process
	pprof string // its net/http/pprof, for heap samples after a GC
}

func startKwhouse(o options, cfg *config.Config) (*kwhouse, error) {
	addr, pprof := "127.0.0.1:"+strconv.Itoa(o.port), "127.0.0.1:"+strconv.Itoa(o.port+1)
	p, err := benchkit.StartProcess(o.bin, addr, "KWHOUSE_CLICKHOUSE_ADDR="+cfg.ClickHouse.Addr, "KWHOUSE_CLICKHOUSE_DATABASE="+database,
		"KWHOUSE_REDIS_ADDR="+cfg.Redis.Addr, "KWHOUSE_REDIS_KEY_PREFIX=kwbenchhooks:", "KWHOUSE_HTTP_PPROF_ADDR="+pprof,
		"KWHOUSE_AUTH_JWT_SECRET=bench-bench-bench-bench-bench-bench-42", "KWHOUSE_LOG_LEVEL=warn")
	if err != nil {
		return nil, err
	}
	return &kwhouse{Process: p, pprof: "http://" + pprof}, nil
}

// heapProfile saves kwhouse's heap profile, after a GC, to file.suffix ("" file: none);
// `go tool pprof -base FILE.start FILE.end` shows what the run left behind.
func (k *kwhouse) heapProfile(file, suffix string) error {
	if file == "" {
		return nil
	}
	return benchkit.SaveURL(k.pprof+"/debug/pprof/heap?gc=1", file+"."+suffix)
}

// memSample is kwhouse's memory at one moment: its Go heap after a GC, and its RSS.
type memSample struct {
	at                  time.Duration // since the sampling started
	label               string
	heapAlloc, heapUsed float64 // MiB: live objects, and the spans holding them
	rss                 float64 // MiB
	goroutines          int
}

func (s memSample) String() string {
	return fmt.Sprintf("%6.0f s  heap live %6.1f MiB  heap in use %6.1f MiB  RSS %6.1f MiB  goroutines %5d  %s",
		s.at.Seconds(), s.heapAlloc, s.heapUsed, s.rss, s.goroutines, s.label)
}

// memory samples kwhouse's memory at an interval, and when marked.
type memory struct {
	k       *kwhouse
	start   time.Time
	mu      sync.Mutex
	samples []memSample
}

func (k *kwhouse) sampleMemory(every time.Duration) *memory {
	m := &memory{k: k, start: time.Now()}
	m.mark("start")
	go func() {
		for range time.Tick(every) {
			m.mark("")
		}
	}()
	return m
}

// mark takes a sample now (after a GC in kwhouse) and prints it.
func (m *memory) mark(label string) {
	s, err := m.k.memory()
	if err != nil {
		fmt.Printf("memory sample: %v\n", err)
		return
	}
	s.at, s.label = time.Since(m.start), label
	m.mu.Lock()
	m.samples = append(m.samples, s)
	m.mu.Unlock()
	fmt.Println("  memory:", s)
}

func (m *memory) print() {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Println("kwhouse memory (heap after a GC; every sample):")
	for _, s := range m.samples {
		fmt.Println(" ", s)
	}
}

// memory reads the heap figures of a heap profile taken after a GC (its text form ends
// with runtime.MemStats), the goroutine count and the process's RSS.
func (k *kwhouse) memory() (memSample, error) {
	var s memSample
	stats, err := k.get("/debug/pprof/heap?gc=1&debug=1", "# HeapAlloc = ", "# HeapInuse = ")
	if err != nil {
		return s, err
	}
	g, err := k.get("/debug/pprof/goroutine?debug=1", "goroutine profile: total ")
	if err != nil {
		return s, err
	}
	s.heapAlloc, s.heapUsed, s.goroutines = stats[0]/(1<<20), stats[1]/(1<<20), int(g[0])
	s.rss = float64(benchkit.ProcStatusKiB(k.PID(), "VmRSS")) / 1024
	return s, nil
}

// get reads path from pprof and returns the number after each prefix, at the start of a
// line.
func (k *kwhouse) get(path string, prefixes ...string) ([]float64, error) {
	res, err := http.Get(k.pprof + path)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := make([]float64, len(prefixes))
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		for i, p := range prefixes {
			if v, ok := strings.CutPrefix(sc.Text(), p); ok {
				out[i], _ = strconv.ParseFloat(strings.Fields(v)[0], 64)
			}
		}
	}
	return out, sc.Err()
}
