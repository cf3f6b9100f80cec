package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
)

// hostile is one misbehaving tenant (slow bodies, stalled readers, oversized bodies and NDJSON failures), as two accounts: a owns a
// fleet large enough for a multi-megabyte CSV answer, a market, a carbon series and a
// location for register readings; b only sends slow bodies.
type hostile struct {
	a, b                  account
	market, series, meter string
	prices, ivs, readings []byte // gzip bodies that inflate to 200 MiB
	emptyLines            []byte // 3 M lines "{}"
	mu                    sync.Mutex
	outcomes              map[string]map[string]int // attack → status (or error) → count
}

func newHostile(ctx context.Context, a *app.App, base string, fleet int) (*hostile, error) {
	h := &hostile{outcomes: map[string]map[string]int{}}
	var err error
	if h.a, err = newAccount(ctx, a, base, 0, false); err != nil {
		return nil, err
	}
	if h.b, err = newAccount(ctx, a, base, 0, false); err != nil {
		return nil, err
	}
	var lines bytes.Buffer
	for i := 0; i < fleet; i++ { // a year of daily readings per priced location: ≈ 38 KB of CSV each
		var loc struct{ ID string }
		if err := benchkit.Call(base, h.a.key, "POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}, &loc); err != nil {
			return nil, err
		}
		if err := benchkit.Call(base, h.a.key, "POST", "/tariffs/elements", map[string]any{"location_id": loc.ID, "direction": "IMPORT",
			"type": "COMMODITY", "contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
			"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"},
				"hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.25}}}}}}}}}, nil); err != nil {
			return nil, err
		}
		for d := 0; d < 366; d++ {
			s := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, d)
			fmt.Fprintf(&lines, `{"location_id":%q,"units":"WH","value":%d,"start_time":%q,"end_time":%q}`+"\n",
				loc.ID, 100+d, s.Format(time.RFC3339), s.Add(time.Hour).Format(time.RFC3339))
		}
		h.meter = loc.ID
	}
	if got := put(base, h.a.key, "/meters/interval", "application/x-ndjson", "", &lines, int64(lines.Len())); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, " of 0)") {
		return nil, fmt.Errorf("hostile readings: %s", got)
	}
	var m, se struct{ ID string }
	if err := benchkit.Call(base, h.a.key, "POST", "/markets", map[string]any{"display_name": "m", "currency_code": "GBP"}, &m); err != nil {
		return nil, err
	}
	if err := benchkit.Call(base, h.a.key, "POST", "/carbon/series", map[string]any{"display_name": "c", "country_code": "GB"}, &se); err != nil {
		return nil, err
	}
	h.market, h.series = m.ID, se.ID
	span := `"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z"`
	h.prices = inflating("[", "{"+span+`,"price":0.1},`, "{"+span+`,"price":0.1}]`)
	h.ivs = inflating("[", "{"+span+`,"intensity":100},`, "{"+span+`,"intensity":100}]`)
	h.readings = inflating(`{"location_id":"`+h.meter+`","units":"WH","data":[`, `{"time":1704067200,"value":1},`, `{"time":1704067200,"value":1}]}`)
	h.emptyLines = bytes.Repeat([]byte("{}\n"), 3_000_000)
	return h, nil
}

// inflating is prefix, item repeated to 200 MiB, suffix: gzip-compressed, under 1 MB.
func inflating(prefix, item, suffix string) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(prefix))
	block := []byte(strings.Repeat(item, (1<<20)/len(item)))
	for n := 0; n < 200<<20; n += len(block) {
		zw.Write(block)
	}
	zw.Write([]byte(suffix))
	zw.Close()
	return buf.Bytes()
}

// run sends every attack in a loop, each in its own goroutine, until the deadline.
func (h *hostile) run(base string, until time.Time) {
	host := strings.TrimPrefix(base, "http://")
	missing := "/markets/" + kwhouse.NewID(kwhouse.PrefixMarket) + "/prices"
	attacks := map[string]func() string{
		"slow body (a)":                func() string { return slowBody(host, h.a.key, until) },
		"slow body (b)":                func() string { return slowBody(host, h.b.key, until) },
		"stalled reader":               func() string { return stalledReader(host, h.a.key, until) },
		"200 MiB gzip, missing market": func() string { return h.gz(base, missing, h.prices) },
		"200 MiB gzip, own market":     func() string { return h.gz(base, "/markets/"+h.market+"/prices", h.prices) },
		"200 MiB gzip, intensities":    func() string { return h.gz(base, "/carbon/series/"+h.series+"/intensities", h.ivs) },
		"200 MiB gzip, register reads": func() string { return h.gz(base, "/meters/cumulative/epoch", h.readings) },
		"100 MB plain prices": func() string {
			return put(base, h.a.key, "/markets/"+h.market+"/prices", "application/json", "", endless("[", price), 100<<20)
		},
		"3 M lines {}": func() string {
			return put(base, h.a.key, "/meters/interval", "application/x-ndjson", "", bytes.NewReader(h.emptyLines), int64(len(h.emptyLines)))
		},
		"256 MiB line, no newline": func() string {
			return put(base, h.a.key, "/meters/interval", "application/x-ndjson", "", endless("", "x"), -1)
		},
	}
	var wg sync.WaitGroup
	for name, attack := range attacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(until) {
				h.count(name, attack())
			}
		}()
	}
	wg.Wait()
}

const price = `{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z","price":0.1},`

func (h *hostile) gz(base, path string, body []byte) string {
	return put(base, h.a.key, path, "application/json", "gzip", bytes.NewReader(body), int64(len(body)))
}

func (h *hostile) count(attack, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.outcomes[attack] == nil {
		h.outcomes[attack] = map[string]int{}
	}
	h.outcomes[attack][outcome]++
}

// report prints each attack's outcomes.
func (h *hostile) report() {
	names := make([]string, 0, len(h.outcomes))
	for n := range h.outcomes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var parts []string
		for o, k := range h.outcomes[n] {
			parts = append(parts, fmt.Sprintf("%s ×%d", o, k))
		}
		sort.Strings(parts)
		fmt.Printf("  %-30s %s\n", n, strings.Join(parts, ", "))
	}
}

var hostileClient = &http.Client{Timeout: 15 * time.Minute}

// put sends body (length n, -1: chunked up to 256 MiB) and returns the status or the error.
func put(base, key, path, contentType, encoding string, body io.Reader, n int64) string {
	if n < 0 {
		body = io.LimitReader(body, 256<<20)
	}
	req, err := http.NewRequest("PUT", base+path, body)
	if err != nil {
		return "request: " + err.Error()
	}
	req.ContentLength = n
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	res, err := hostileClient.Do(req)
	if err != nil {
		return "connection closed"
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	var batch struct {
		Listed []json.RawMessage `json:"failed_records"`
		Count  *int              `json:"failed_records_count"`
	}
	if res.StatusCode == 200 && json.Unmarshal(answer, &batch) == nil && batch.Count != nil {
		return fmt.Sprintf("200 (%d KB, %d failures listed of %d)", len(answer)>>10, len(batch.Listed), *batch.Count)
	}
	return strconv.Itoa(res.StatusCode)
}

// endless is prefix then item forever.
func endless(prefix, item string) io.Reader {
	block := []byte(strings.Repeat(item, max(1, (64<<10)/len(item))))
	return io.MultiReader(strings.NewReader(prefix), &repeating{block: block})
}

// repeating reads block over and over.
type repeating struct {
	block []byte
	off   int
}

func (r *repeating) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.block[r.off:])
		n, r.off = n+k, (r.off+k)%len(r.block)
	}
	return n, nil
}

// slowBody announces a 100,000-byte fleet-cost body and sends a byte every 100 ms until
// the server gives up on it (or the deadline).
func slowBody(host, key string, until time.Time) string {
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /costs/fleet HTTP/1.1\r\nHost: kwhouse\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", key)
	for time.Now().Before(until) {
		time.Sleep(100 * time.Millisecond)
		if _, err := conn.Write([]byte(" ")); err != nil {
			return "cut off by the server"
		}
	}
	return "still sending at the end"
}

// stalledReader asks for the hostile fleet's year of days as CSV (megabytes), reads the
// status line, then reads nothing more until the phase ends or the server gives up.
func stalledReader(host, key string, until time.Time) string {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", host)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	body := `{"start_time":"2024-01-01T00:00:00Z","end_time":"2025-01-01T00:00:00Z","aggregation":"DAY","group_by":"location"}`
	fmt.Fprintf(conn, "POST /costs/fleet HTTP/1.1\r\nHost: kwhouse\r\nAuthorization: Bearer %s\r\nAccept: text/csv\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, len(body), body)
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "no answer"
	}
	time.Sleep(time.Until(until))
	return strings.TrimSpace(strings.TrimPrefix(status, "HTTP/1.1 ")) + ", then stalled"
}

// rssSampler records the process's largest resident set while it runs.
type rssSampler struct {
	stop chan struct{}
	done chan int64 // KiB
}

func sampleRSS() *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var peak int64
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, benchkit.ProcStatusKiB(0, "VmRSS"))
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// peakMiB ends the sampling and returns the peak in MiB.
func (s *rssSampler) peakMiB() int64 {
	close(s.stop)
	return <-s.done >> 10
}
