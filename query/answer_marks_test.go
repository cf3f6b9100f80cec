package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
	"github.com/kwhouse/kwhouse/writemarks"
)

// walk asks every page of w once the answers before it are stored: whether each was
// served, and the ClickHouse statements the asks ran; then each page must equal the page
// priced now.
func (w *pagedWalk) walk(t *testing.T, what string) ([]bool, map[string]int) {
	t.Helper()
	w.f.count.take()
	var served []bool
	var pages []fleetPage[bucketRow]
	for i := range w.cursors {
		page, hit := w.ask(t, i)
		pages, served = append(pages, page), append(served, hit)
	}
	query.WaitAnswerStores(w.f.api.App.Pricer)
	ran := w.f.count.take()
	for i, page := range pages {
		w.same(t, fmt.Sprintf("%s, page %d", what, i), i, page)
	}
	return served, ran
}

// ndjson is n hourly readings of wh Wh of loc from start, as NDJSON lines.
func ndjson(loc string, start time.Time, n int, wh float64) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		s := start.Add(time.Duration(i) * time.Hour)
		line, _ := json.Marshal(map[string]any{"location_id": loc, "start_time": s.Format(time.RFC3339),
			"end_time": s.Add(time.Hour).Format(time.RFC3339), "value": wh, "units": "WH"})
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// TestFleetAnswerCacheWalksWithNoStatementUntilAWriteOfEachWriter: a walk of every page
// asked again runs no ClickHouse statement. After a write of the second location through
// each writer — a stream of readings (NDJSON), `kwhouse ingest` (the loader, a process of
// its own), a document (the location's zone), a reading API write — the
// pages holding it are computed again, every page equals the pages priced now, and the
// walk asked again runs no statement.
func TestFleetAnswerCacheWalksWithNoStatementUntilAWriteOfEachWriter(t *testing.T) {
	w := newPagedWalkWith(t, 7, func(c *config.Config) {
		answerCacheOn(c)
		c.Ingest.StreamFrom, c.Ingest.StreamChunkBytes = 1024, 4096 // a day of readings is streamed
	})
	f := w.f
	ctx := context.Background()
	second := w.ids[1]
	if _, ran := w.walk(t, "asked again"); len(ran) != 0 {
		t.Errorf("walk asked again ran %v, want no statement", ran)
	}
	writes := []struct {
		name  string
		write func()
	}{
		{"a stream of readings", func() {
			r := f.api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: f.auth,
				Body:   ndjson(second, time.Date(2024, 3, 2, 0, 30, 0, 0, time.UTC), 24, 321),
				Header: map[string]string{"Content-Type": "application/x-ndjson"}})
			if r.Status != 200 {
				t.Fatalf("stream: %d %s", r.Status, r.Body)
			}
		}},
		{"kwhouse ingest", func() {
			l, err := app.OpenLoader(ctx, f.api.App.Config, testkit.Logger(), app.Options{RedisPrefix: f.api.RedisPrefix()})
			if err != nil {
				t.Fatal(err)
			}
			body := ndjson(second, time.Date(2024, 3, 3, 0, 30, 0, 0, time.UTC), 24, 654)
			if _, err := l.Ingest.Load(ctx, f.scope, bytes.NewReader(body), ingest.FileNDJSON, ingest.BulkOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"a location's zone", func() {
			f.must(f.do("PATCH", "/locations/"+second, map[string]any{"timezone": "Europe/Paris"}))
		}},
		{"a reading", func() { f.readings(second, time.Date(2024, 3, 4, 5, 30, 0, 0, time.UTC), 1, 77) }},
	}
	for _, wr := range writes {
		wr.write()
		served, _ := w.walk(t, "after "+wr.name)
		if served[0] || served[1] {
			t.Errorf("after %s of the second location: pages served %v, want the first two computed", wr.name, served)
		}
		if _, ran := w.walk(t, "after "+wr.name+", asked again"); len(ran) != 0 {
			t.Errorf("after %s, the walk asked again ran %v, want no statement", wr.name, ran)
		}
	}
}

// TestFleetAnswerCacheWriteWithoutEndReadsTokensUntilItsDeadline: a writer that marked its
// write begun, inserted a reading and never ended (it died) leaves every answer of the
// scope read under its token: the page holding the reading is computed with it, and asked
// again it is served by its token's statement, not without one. Once the write's deadline
// passed, a reader removes it and moves the epoch: the walk is confirmed by the tokens
// once, then runs no statement.
func TestFleetAnswerCacheWriteWithoutEndReadsTokensUntilItsDeadline(t *testing.T) {
	w := newPagedWalk(t, 7)
	f := w.f
	ctx := context.Background()
	// The two walks while the write is pending, the first computing pages, must end before
	// its deadline: the hold is 3 s, or four times the walk that priced every page where
	// that took longer (a loaded machine; a CI run's cached walk took far less than the
	// computing one, and a hold of four cached walks expired mid-walk).
	hold := max(3*time.Second, 4*w.priced)
	marks := writemarks.New(f.api.App.Cache.Scripter(), f.api.App.Cache.Key(""), hold)
	if _, err := marks.Begin(ctx, f.scope); err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	at := time.Date(2024, 3, 2, 5, 30, 0, 0, time.UTC)
	err := f.api.App.DB.InsertRows(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
		device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
		record_reference_id, batch_id, version) VALUES`), 1, func(int) []any {
		return []any{f.scope.AccountID, uint8(0), w.ids[1], "", "IMPORT", "IMPORT", at, at.Add(30 * time.Minute),
			900., 1., "", "", "", uint64(time.Now().UnixNano())}
	})
	if err != nil {
		t.Fatal(err)
	}
	if served, _ := w.walk(t, "after a write that never ended"); served[0] || served[1] {
		t.Errorf("after a write that never ended: pages served %v, want the first two computed", served)
	}
	if served, ran := w.walk(t, "asked again while it is pending"); ran["query.fleet_token"] != 1 ||
		ran["query.fleet_page_token"] != len(w.cursors)-1 || fmt.Sprint(served) != fmt.Sprint([]bool{true, true, true}) {
		t.Errorf("asked again while the write is pending: served %v, ran %v (want every page served by its token)", served, ran)
	}
	time.Sleep(time.Until(begun.Add(hold + 500*time.Millisecond)))
	if _, ran := w.walk(t, "past the deadline"); ran["query.fleet_token"] != 1 || ran["query.fleet_page_token"] != len(w.cursors)-1 {
		t.Errorf("past the write's deadline: ran %v, want each page confirmed by its token once", ran)
	}
	if _, ran := w.walk(t, "past the deadline, asked again"); len(ran) != 0 {
		t.Errorf("past the write's deadline, asked again: ran %v, want no statement", ran)
	}
}

// TestFleetAnswerCacheRefusesAWriteRedisCannotMark: with the answer cache on and Redis
// down, a reading and a location change are refused (503 store_unavailable) and leave
// nothing stored: once Redis is back, every page equals the pages priced before.
func TestFleetAnswerCacheRefusesAWriteRedisCannotMark(t *testing.T) {
	w := newPagedWalk(t, 7)
	f := w.f
	before := make([]map[string]bucketRow, len(w.cursors))
	for i := range w.cursors {
		before[i] = costRows(w.fresh(t, i))
	}
	f.api.Redis.Down()
	recs := []any{map[string]any{"location_id": w.ids[1], "start_time": "2024-03-02T05:30:00Z",
		"end_time": "2024-03-02T06:30:00Z", "value": 5000, "units": "WH"}}
	for _, r := range []apitest.Response{f.do("PUT", "/meters/interval", recs),
		f.do("PATCH", "/locations/"+w.ids[1], map[string]any{"timezone": "Europe/Paris"})} {
		if m := r.Map(t); r.Status != 503 || m["code"] != "store_unavailable" {
			t.Errorf("a write with Redis down: %d %s, want 503 store_unavailable", r.Status, r.Body)
		}
	}
	f.api.Redis.Up()
	time.Sleep(2500 * time.Millisecond) // the caches' backoff after Redis failed
	for i := range w.cursors {
		page, _ := w.ask(t, i)
		sameRows(t, fmt.Sprintf("page %d after the refused writes", i), pageRows(page), before[i])
	}
}
