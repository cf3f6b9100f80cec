package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// meterEnv is an API with an account, a location and a device.
type meterEnv struct {
	api *apitest.API
	acc apitest.Account
	loc string
	dev string
}

func newMeterEnv(t *testing.T, opts ...apitest.Options) *meterEnv {
	opt := apitest.Options{}
	if len(opts) > 0 {
		opt = opts[0]
	}
	api := apitest.Start(t, opt)
	acc := api.NewAccount("fleet")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	dev := api.Do(apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(),
		Body: map[string]any{"reference_id": "ev-charger"}}).Map(t)["id"].(string)
	return &meterEnv{api: api, acc: acc, loc: loc, dev: dev}
}

func (e *meterEnv) put(t *testing.T, body any, header map[string]string) apitest.Response {
	t.Helper()
	return e.api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: e.acc.Test(), Body: body, Header: header})
}

// stored returns the count and Wh sum of the account's current readings, as cost queries
// will see them (replaced readings collapsed).
func (e *meterEnv) stored(t *testing.T) (uint64, float64) {
	t.Helper()
	var n uint64
	var wh float64
	err := e.api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT count(), sum(energy_wh) FROM meter_records FINAL WHERE account_id = ?"), e.acc.ID).Scan(&n, &wh)
	if err != nil {
		t.Fatal(err)
	}
	return n, wh
}

type batchBody struct {
	ID               string `json:"id"`
	RecordsSubmitted int    `json:"records_submitted"`
	RecordsAccepted  int    `json:"records_accepted"`
	RecordsProcessed int    `json:"records_processed"`
	FailedCount      int    `json:"failed_records_count"`
	FailedRecords    []struct {
		RecordNum         int    `json:"record_num"`
		RecordReferenceID string `json:"record_reference_id"`
		Error             string `json:"error"`
	} `json:"failed_records"`
}

func rec(loc, start, end string, units string, value float64, extra map[string]any) map[string]any {
	r := map[string]any{"location_id": loc, "start_time": start, "end_time": end, "units": units, "value": value}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

func TestIntervalRecordsGoodStoredBadReported(t *testing.T) {
	e := newMeterEnv(t)
	other := e.api.NewAccount("other")
	foreignLoc := e.api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: other.Test(),
		Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	body := []map[string]any{
		// 1: straddles midnight, 1.2 kWh.
		rec(e.loc, "2024-01-01T23:30:00Z", "2024-01-02T00:30:00Z", "KWH", 1.2, map[string]any{"record_reference_id": "r1"}),
		// 2: 2000 W for 15 minutes = 500 Wh, device level.
		rec(e.loc, "2024-01-02T10:00:00Z", "2024-01-02T10:15:00Z", "W", 2000, map[string]any{"device_id": e.dev}),
		// 3: bad: end before start.
		rec(e.loc, "2024-01-02T10:15:00Z", "2024-01-02T10:00:00Z", "WH", 5, map[string]any{"record_reference_id": "r3"}),
		// 4: another account's location.
		rec(foreignLoc, "2024-01-02T10:00:00Z", "2024-01-02T10:30:00Z", "WH", 7, nil),
		// 5: unknown device.
		rec(e.loc, "2024-01-02T10:00:00Z", "2024-01-02T10:30:00Z", "WH", 7, map[string]any{"device_id": "dev_000000000000000000000000"}),
		// 6: export, LOCAL tariff rate, 300 Wh.
		rec(e.loc, "2024-01-02T11:00:00Z", "2024-01-02T11:30:00Z", "WH", 300, map[string]any{"direction": "EXPORT", "tariff_rate": "LOCAL"}),
	}
	r := e.put(t, body, nil)
	if r.Status != 200 {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	var b batchBody
	r.JSON(t, &b)
	if b.RecordsSubmitted != 6 || b.RecordsAccepted != 3 || b.RecordsProcessed != 6 || len(b.FailedRecords) != 3 {
		t.Fatalf("batch %+v", b)
	}
	// record_num is the 0-based position in the array (FlatPeak): records 3, 4, 5 above are 2, 3, 4.
	wantFailed := map[int]string{2: "end_time must be after start_time", 3: "no such location", 4: "no such device"}
	for _, f := range b.FailedRecords {
		if !strings.Contains(f.Error, wantFailed[f.RecordNum]) {
			t.Errorf("record %d failed with %q, want %q", f.RecordNum, f.Error, wantFailed[f.RecordNum])
		}
	}
	if b.FailedRecords[0].RecordReferenceID != "r3" {
		t.Errorf("failed record 3 lost its record_reference_id: %+v", b.FailedRecords[0])
	}
	n, wh := e.stored(t)
	if n != 3 || math.Abs(wh-(1200+500+300)) > 1e-9 {
		t.Fatalf("stored %d records, %v Wh; want 3 and 2000 Wh", n, wh)
	}
	var dir, rate string
	if err := e.api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT toString(direction), toString(tariff_rate) FROM meter_records WHERE account_id = ? AND energy_wh = 300"), e.acc.ID).Scan(&dir, &rate); err != nil || dir != "EXPORT" || rate != "LOCAL" {
		t.Errorf("export record stored as %s/%s (%v)", dir, rate, err)
	}
	got := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + b.ID, Auth: e.acc.Test()})
	var gb batchBody
	got.JSON(t, &gb)
	if got.Status != 200 || gb.ID != b.ID || gb.RecordsAccepted != 3 || len(gb.FailedRecords) != 3 {
		t.Errorf("GET /meters/batch: %d %s", got.Status, got.Body)
	}
	if r := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + b.ID, Auth: other.Test()}); r.Status != 404 {
		t.Errorf("another account reads the batch: %d", r.Status)
	}
	dev := e.api.Do(apitest.Request{Method: "GET", Path: "/devices/" + e.dev, Auth: e.acc.Test()}).Map(t)
	if ls, ok := dev["last_seen"].(string); !ok || ls == "" {
		t.Errorf("device last_seen not set after ingestion: %v", dev)
	}
	// A body whose every record fails still gets a stored summary, and stores no record.
	r = e.put(t, []map[string]any{rec(e.loc, "2024-01-03T00:30:00Z", "2024-01-03T00:00:00Z", "WH", 1, nil)}, nil)
	var none batchBody
	r.JSON(t, &none)
	if r.Status != 200 || none.RecordsAccepted != 0 || len(none.FailedRecords) != 1 {
		t.Fatalf("all-failed body: %d %s", r.Status, r.Body)
	}
	if got := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + none.ID, Auth: e.acc.Test()}); got.Status != 200 {
		t.Errorf("summary of an all-failed body: %d", got.Status)
	}
	if n, _ := e.stored(t); n != 3 {
		t.Errorf("stored %d records after an all-failed body, want still 3", n)
	}
}

func TestResentReadingReplacesTheEarlierOne(t *testing.T) {
	e := newMeterEnv(t)
	one := rec(e.loc, "2024-05-01T00:00:00Z", "2024-05-01T00:30:00Z", "WH", 100, nil)
	e.put(t, []any{one}, nil)
	one["value"] = 250.0
	e.put(t, []any{one, rec(e.loc, "2024-05-01T00:30:00Z", "2024-05-01T01:00:00Z", "WH", 50, nil)}, nil)
	// The same reading twice in one body: the later one wins.
	e.put(t, []any{rec(e.loc, "2024-05-01T01:00:00Z", "2024-05-01T01:30:00Z", "WH", 1, nil),
		rec(e.loc, "2024-05-01T01:00:00Z", "2024-05-01T01:30:00Z", "WH", 2, nil)}, nil)
	n, wh := e.stored(t)
	if n != 3 || wh != 250+50+2 {
		t.Fatalf("stored %d readings, %v Wh; want 3 readings, 302 Wh", n, wh)
	}
}

func TestIntervalBodyLimitsAndFraming(t *testing.T) {
	e := newMeterEnv(t)
	var big []map[string]any
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10001; i++ {
		s := start.Add(time.Duration(i) * time.Minute)
		big = append(big, rec(e.loc, s.Format(time.RFC3339), s.Add(time.Minute).Format(time.RFC3339), "WH", 1, nil))
	}
	if r := e.put(t, big, nil); r.Status != 413 || r.Map(t)["code"] != "too_many_records" {
		t.Errorf("10,001 records: %d %s", r.Status, r.Body)
	}
	good := rec(e.loc, "2024-01-01T00:00:00Z", "2024-01-01T00:30:00Z", "WH", 1, nil)
	line, _ := json.Marshal(good)
	for name, tc := range map[string]struct {
		body   string
		header map[string]string
		code   string
	}{
		"object, not array":    {string(line), nil, "invalid_body"},
		"truncated array":      {"[" + string(line), nil, "invalid_json"},
		"ndjson with bad line": {string(line) + "\n{\"location_id\":\n" + string(line), map[string]string{"Content-Type": "application/x-ndjson"}, "invalid_json"},
		"ndjson with array":    {string(line) + "\n[1]\n", map[string]string{"Content-Type": "application/x-ndjson"}, "invalid_json"},
		"gzip that is not":     {"[]", map[string]string{"Content-Encoding": "gzip"}, "invalid_encoding"},
	} {
		r := e.put(t, tc.body, tc.header)
		if r.Status != 400 || r.Map(t)["code"] != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", name, r.Status, r.Body, tc.code)
		}
	}
	if n, _ := e.stored(t); n != 0 {
		t.Fatalf("refused bodies stored %d records", n)
	}
}

func TestNDJSONGzipOneYearBackfillInOneRequest(t *testing.T) {
	e := newMeterEnv(t)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for s := start; s.Before(start.AddDate(1, 0, 0)); s = s.Add(30 * time.Minute) {
		line, _ := json.Marshal(rec(e.loc, s.Format(time.RFC3339), s.Add(30*time.Minute).Format(time.RFC3339), "WH", 10, map[string]any{"device_id": e.dev}))
		zw.Write(append(line, '\n'))
		n++
	}
	zw.Close()
	before := e.api.App.Writer.Stats()
	r := e.put(t, buf.Bytes(), map[string]string{"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
	if r.Status != 200 {
		t.Fatalf("year of NDJSON: %d %s", r.Status, r.Body)
	}
	var b batchBody
	r.JSON(t, &b)
	if b.RecordsAccepted != n || n != 17520 {
		t.Fatalf("accepted %d of %d", b.RecordsAccepted, n)
	}
	got, wh := e.stored(t)
	if got != uint64(n) || wh != float64(n*10) {
		t.Fatalf("stored %d records %v Wh, want %d and %d", got, wh, n, n*10)
	}
	// 365 day-partitions cannot go in one insert (ClickHouse refuses more than 100).
	if d := e.api.App.Writer.Stats().Inserts - before.Inserts; d < 4 {
		t.Errorf("a year went in %d insert blocks; want at least 4 of at most 100 days", d)
	}
}

func TestConcurrentRequestsShareInserts(t *testing.T) {
	// A 100 ms window: requests that arrive together share a flush even on a slow machine.
	e := newMeterEnv(t, apitest.Options{Configure: func(c *config.Config) { c.Ingest.FlushInterval = 100 * time.Millisecond }})
	before := e.api.App.Writer.Stats()
	const clients = 16
	batches := make([]string, clients)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			// Hours of the last day: a closed local day's readings are written one request
			// at a time per location (cost.revised prices the day before and after).
			s := time.Now().UTC().Truncate(time.Hour).Add(-time.Duration(c+1) * time.Hour)
			r := e.put(t, []any{rec(e.loc, s.Format(time.RFC3339), s.Add(time.Hour).Format(time.RFC3339), "WH", 1, map[string]any{"device_id": e.dev})}, nil)
			if r.Status != 200 {
				t.Errorf("client %d: %d", c, r.Status)
				return
			}
			var b batchBody
			r.JSON(t, &b)
			batches[c] = b.ID
		}(c)
	}
	wg.Wait()
	after := e.api.App.Writer.Stats()
	if n, _ := e.stored(t); n != clients {
		t.Fatalf("stored %d, want %d", n, clients)
	}
	if flushes := after.Flushes - before.Flushes; flushes >= clients {
		t.Errorf("%d concurrent requests took %d flushes: no group commit", clients, flushes)
	}
	// The summaries and last_seen are stored with the records' flush, and readable at once.
	for _, id := range batches {
		if r := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + id, Auth: e.acc.Test()}); r.Status != 200 {
			t.Errorf("batch %s after its 200: %d", id, r.Status)
		}
	}
	if dev := e.api.Do(apitest.Request{Method: "GET", Path: "/devices/" + e.dev, Auth: e.acc.Test()}).Map(t); dev["last_seen"] == nil {
		t.Errorf("device last_seen not set: %v", dev)
	}
}

func TestClickHouseLostMidStreamKeepsEveryAcknowledgedRecord(t *testing.T) {
	testkit.SkipEmbedded(t, "ClickHouse is inside the process: there is no connection to take down")
	e := newMeterEnv(t)
	type result struct {
		start  time.Time
		status int
	}
	results := make(chan result, 1000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c*100000+i) * time.Minute)
				r := e.put(t, []any{rec(e.loc, s.Format(time.RFC3339), s.Add(time.Minute).Format(time.RFC3339), "WH", 1, nil)}, nil)
				results <- result{s, r.Status}
				if r.Status != 200 && r.Status != 503 {
					t.Errorf("status %d: %s", r.Status, r.Body)
				}
				if i > 200 {
					return
				}
			}
		}(c)
	}
	time.Sleep(300 * time.Millisecond)
	e.api.ClickHouse.Down()
	time.Sleep(500 * time.Millisecond)
	e.api.ClickHouse.Up()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(results)
	acked, refused := map[int64]bool{}, 0
	for r := range results {
		if r.status == 200 {
			acked[r.start.Unix()] = true
		} else {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no request saw ClickHouse down; the test proved nothing")
	}
	rows, err := e.api.App.DB.Query(context.Background(), chstore.Tool("SELECT toUnixTimestamp(start_time) FROM meter_records FINAL WHERE account_id = ?"), e.acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[int64]bool{}
	for rows.Next() {
		var s uint32
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stored[int64(s)] = true
	}
	for s := range acked {
		if !stored[s] {
			t.Errorf("acknowledged record starting %s is missing", time.Unix(s, 0).UTC())
		}
	}
	t.Logf("%d acknowledged, %d refused with 503, %d stored", len(acked), refused, len(stored))
}

func TestCumulativeRegisterContinuesAcrossRequests(t *testing.T) {
	e := newMeterEnv(t)
	put := func(data []map[string]any) batchBody {
		t.Helper()
		r := e.api.Do(apitest.Request{Method: "PUT", Path: "/meters/cumulative/epoch", Auth: e.acc.Test(), Body: map[string]any{
			"location_id": e.loc, "device_id": e.dev, "units": "KWH", "data": data}})
		if r.Status != 200 {
			t.Fatalf("cumulative: %d %s", r.Status, r.Body)
		}
		var b batchBody
		r.JSON(t, &b)
		return b
	}
	t0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	// Unsorted on purpose: readings are sorted by time. 100.0 → 100.5 → 101.5 kWh.
	b := put([]map[string]any{{"time": t0 + 3600, "value": 101.5}, {"time": t0, "value": 100.0}, {"time": t0 + 1800, "value": 100.5}})
	if b.RecordsAccepted != 3 || len(b.FailedRecords) != 0 {
		t.Fatalf("first request %+v", b)
	}
	// The stored summary counts readings as the response does: 3 sent, 3 accepted (two
	// intervals stored, the first reading starts the register).
	var summary batchBody
	e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + b.ID, Auth: e.acc.Test()}).JSON(t, &summary)
	if summary.RecordsSubmitted != 3 || summary.RecordsAccepted != 3 {
		t.Errorf("GET /meters/batch %+v, want 3 submitted and 3 accepted as the PUT answered", summary)
	}
	// Continues from 101.5 kWh at t0+3600; a decrease and a repeated time fail.
	b = put([]map[string]any{
		{"time": t0 + 5400, "value": 102.0, "record_reference_id": "ok"},
		{"time": t0 + 7200, "value": 90.0, "record_reference_id": "reset"},
		{"time": t0 + 5400, "value": 103.0, "record_reference_id": "repeat"},
		{"time": t0 + 9000, "value": 102.25},
	})
	failed := map[string]string{}
	for _, f := range b.FailedRecords {
		failed[f.RecordReferenceID] = fmt.Sprintf("%d: %s", f.RecordNum, f.Error)
	}
	// record_num is the reading's 0-based position in data.
	if !strings.HasPrefix(failed["reset"], "1: ") || !strings.HasPrefix(failed["repeat"], "2: ") || b.RecordsAccepted != 2 {
		t.Errorf("second request: failures %v, accepted %d, want reset at 1, repeat at 2, 2 accepted", failed, b.RecordsAccepted)
	}
	if !strings.Contains(failed["reset"], "went down") || !strings.Contains(failed["repeat"], "already exists") || len(failed) != 2 {
		t.Fatalf("second request failures %v", failed)
	}
	rows, err := e.api.App.DB.Query(context.Background(), chstore.Tool(`SELECT toUnixTimestamp(start_time), toUnixTimestamp(end_time), energy_wh
		FROM meter_records FINAL WHERE account_id = ? ORDER BY start_time`), e.acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s, en uint32
		var wh float64
		rows.Scan(&s, &en, &wh)
		got = append(got, fmt.Sprintf("+%d..+%d=%g", int64(s)-t0, int64(en)-t0, wh))
	}
	// 100.0→100.5 = 500 Wh; 100.5→101.5 = 1000; 101.5→102.0 = 500 (across requests); 102.0→102.25 = 250.
	want := "[+0..+1800=500 +1800..+3600=1000 +3600..+5400=500 +5400..+9000=250]"
	if fmt.Sprint(got) != want {
		t.Fatalf("interval records %v, want %s", got, want)
	}
}

func TestNDJSONRecordNumIsTheZeroBasedLine(t *testing.T) {
	e := newMeterEnv(t)
	good, _ := json.Marshal(rec(e.loc, "2024-01-02T10:00:00Z", "2024-01-02T10:30:00Z", "WH", 5, nil))
	bad, _ := json.Marshal(rec(e.loc, "2024-01-02T10:30:00Z", "2024-01-02T10:00:00Z", "WH", 5, map[string]any{"record_reference_id": "bad"}))
	// Line 0 good, line 1 blank, line 2 bad, line 3 good: the failure is record_num 2.
	body := string(good) + "\n\n" + string(bad) + "\n" + strings.NewReplacer("10:00:00Z", "09:30:00Z", "10:30:00Z", "10:00:00Z").Replace(string(good)) + "\n"
	r := e.put(t, body, map[string]string{"Content-Type": "application/x-ndjson"})
	var b batchBody
	r.JSON(t, &b)
	if r.Status != 200 || len(b.FailedRecords) != 1 || b.FailedRecords[0].RecordNum != 2 || b.RecordsAccepted != 2 {
		t.Fatalf("NDJSON with a blank line: %d %s, want one failure at record_num 2 and 2 accepted", r.Status, r.Body)
	}
}

func TestCumulativeDirectionErrorsNameTheirField(t *testing.T) {
	e := newMeterEnv(t)
	for _, c := range []struct{ field, value string }{{"direction", "UP"}, {"tariff_rate", "SOMETIMES"}} {
		r := e.api.Do(apitest.Request{Method: "PUT", Path: "/meters/cumulative/epoch", Auth: e.acc.Test(), Body: map[string]any{
			"location_id": e.loc, "units": "KWH", c.field: c.value, "data": []map[string]any{{"time": 1717200000, "value": 1.0}}}})
		m := r.Map(t)
		if r.Status != 400 || m["code"] != "invalid_value" || m["param"] != c.field {
			t.Errorf("%s %s: %d %s, want 400 invalid_value param %s", c.field, c.value, r.Status, r.Body, c.field)
		}
	}
}
