package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// ndjsonLimits streams NDJSON in 256 KiB chunks with lines of at most 4 KiB.
var ndjsonLimits = apitest.Options{Configure: func(c *config.Config) {
	c.Ingest.StreamChunkBytes, c.Ingest.MaxLineBytes = 256<<10, 4096
}}

// putChunked sends body as an NDJSON stream of unknown length (streamed whatever its size).
func putChunked(t *testing.T, e *meterEnv, body io.Reader) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("PUT", e.api.URL+"/meters/interval", io.MultiReader(body))
	req.Header.Set("Authorization", e.acc.Test())
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// 300,000 failing lines: the batch lists the first 1,000 failures by line — the ten
// records of a missing location (found after decoding) before the unreadable ones —
// and counts all of them, whether the body is read whole or streamed in chunks.
func TestManyFailingLinesListTheFirstThousand(t *testing.T) {
	e := newMeterEnv(t, ndjsonLimits)
	var b strings.Builder
	missing := kwhouse.NewID(kwhouse.PrefixLocation)
	for i := 0; i < 20; i++ {
		loc := map[bool]string{true: missing, false: e.loc}[i < 10]
		fmt.Fprintf(&b, `{"location_id":%q,"units":"WH","value":1,"start_time":"2024-01-01T%02d:00:00Z","end_time":"2024-01-01T%02d:30:00Z"}`+"\n", loc, i, i)
	}
	b.WriteString(strings.Repeat("{}\n", 300_000))
	body := b.String()
	check := func(how string, status int, raw []byte) {
		t.Helper()
		var got batchBody
		if err := json.Unmarshal(raw, &got); status != 200 || err != nil {
			t.Fatalf("%s: %d %.300s", how, status, raw)
		}
		if got.RecordsSubmitted != 300_020 || got.RecordsAccepted != 10 || got.FailedCount != 300_010 || len(got.FailedRecords) != 1000 {
			t.Fatalf("%s: submitted %d accepted %d failed_records_count %d listed %d; want 300020, 10, 300010, 1000",
				how, got.RecordsSubmitted, got.RecordsAccepted, got.FailedCount, len(got.FailedRecords))
		}
		for i, f := range got.FailedRecords {
			want := i // lines 0–9, then the bad lines from 20 on
			if i >= 10 {
				want = i + 10
			}
			if f.RecordNum != want || (i < 10) != strings.Contains(f.Error, "no such location") {
				t.Fatalf("%s: failed_records[%d] = %+v, want line %d", how, i, f, want)
			}
		}
		if len(raw) > 200<<10 {
			t.Errorf("%s: a %d KiB answer", how, len(raw)>>10)
		}
	}
	var r apitest.Response
	n := allocated(func() { r = e.put(t, body, map[string]string{"Content-Type": "application/x-ndjson"}) })
	check("read whole", r.Status, r.Body)
	t.Logf("read whole: %.1f MiB allocated", float64(n)/(1<<20))
	var status int
	var raw []byte
	n = allocated(func() { status, raw = putChunked(t, e, strings.NewReader(body)) })
	check("streamed", status, raw)
	t.Logf("streamed: %.1f MiB allocated", float64(n)/(1<<20))
	// The stored summary says the same.
	var stored batchBody
	var id struct{ ID string }
	_ = json.Unmarshal(raw, &id)
	g := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + id.ID, Auth: e.acc.Test()})
	g.JSON(t, &stored)
	if stored.FailedCount != 300_010 || len(stored.FailedRecords) != 1000 || stored.FailedRecords[10].RecordNum != 20 {
		t.Errorf("GET /meters/batch: count %d, %d listed", stored.FailedCount, len(stored.FailedRecords))
	}
}

// repeat is an io.Reader of n copies of byte c.
type repeat struct {
	c byte
	n int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return k, nil
}

// A line over ingest.max_line_bytes fails as one record of a stream (skipped as it
// arrives, never held: a 64 MiB line costs no 64 MiB), and refuses a body read whole (400).
func TestOverlongNDJSONLinesFail(t *testing.T) {
	e := newMeterEnv(t, ndjsonLimits)
	line := func(h int) string {
		return fmt.Sprintf(`{"location_id":%q,"units":"WH","value":1,"start_time":"2024-01-01T%02d:00:00Z","end_time":"2024-01-01T%02d:30:00Z"}`+"\n", e.loc, h, h)
	}
	var status int
	var raw []byte
	n := allocated(func() {
		status, raw = putChunked(t, e, io.MultiReader(strings.NewReader(line(0)), &repeat{'x', 64 << 20}, strings.NewReader("\n"+line(1)),
			&repeat{' ', 1 << 20}, &repeat{'y', 64 << 20})) // the last line has no newline
	})
	var got batchBody
	if err := json.Unmarshal(raw, &got); status != 200 || err != nil {
		t.Fatalf("stream with long lines: %d %.300s", status, raw)
	}
	if got.RecordsSubmitted != 4 || got.RecordsAccepted != 2 || got.FailedCount != 2 || len(got.FailedRecords) != 2 ||
		got.FailedRecords[0].RecordNum != 1 || got.FailedRecords[1].RecordNum != 3 || !strings.Contains(got.FailedRecords[1].Error, "longer than") {
		t.Fatalf("stream with long lines: %s", raw)
	}
	t.Logf("two 64 MiB lines: %.1f MiB allocated", float64(n)/(1<<20))
	if n > 32<<20 {
		t.Errorf("two 64 MiB lines: %d MiB allocated, want < 32 MiB", n>>20)
	}
	r := e.put(t, line(2)+strings.Repeat("z", 5000)+"\n", map[string]string{"Content-Type": "application/x-ndjson"})
	if m := r.Map(t); r.Status != 400 || m["code"] != "invalid_json" || !strings.Contains(m["message"].(string), "line 2") {
		t.Errorf("a body read whole with a 5,000-byte line: %d %s, want 400 invalid_json naming line 2", r.Status, r.Body)
	}
}
