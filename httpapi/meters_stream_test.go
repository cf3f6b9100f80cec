package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// streamBody is n half-hour NDJSON records of loc from 2024-01-01 (record i: i+1 Wh), with
// line 500 cut short (not a JSON object), line 1000 in bad units and a blank last line.
func streamBody(loc string, n int) (body []byte, wantWh float64) {
	var buf bytes.Buffer
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		st := t0.Add(time.Duration(i) * 30 * time.Minute)
		r := rec(loc, st.Format(time.RFC3339), st.Add(30*time.Minute).Format(time.RFC3339), "WH", float64(i+1), nil)
		switch i {
		case 500:
			buf.WriteString(`{"location_id":` + "\n")
			continue
		case 1000:
			r["units"] = "BTU"
		default:
			wantWh += float64(i + 1)
		}
		b, _ := json.Marshal(r)
		buf.Write(append(b, '\n'))
	}
	buf.WriteString("\n")
	return buf.Bytes(), wantWh
}

func TestLargeNDJSONBodiesAreStoredAsTheyArrive(t *testing.T) {
	e := newMeterEnv(t, apitest.Options{Configure: func(c *config.Config) {
		c.Ingest.StreamFrom, c.Ingest.StreamChunkBytes = 1024, 4096 // ≈ 90 chunks of ≈ 22 records
	}})
	body, wantWh := streamBody(e.loc, 2000)
	r := e.put(t, body, map[string]string{"Content-Type": "application/x-ndjson"})
	if r.Status != 200 {
		t.Fatalf("stream: %d %s", r.Status, r.Body)
	}
	var b batchBody
	r.JSON(t, &b)
	if b.RecordsSubmitted != 2000 || b.RecordsAccepted != 1998 || b.RecordsProcessed != 2000 || len(b.FailedRecords) != 2 ||
		b.FailedRecords[0].RecordNum != 500 || b.FailedRecords[1].RecordNum != 1000 {
		t.Fatalf("batch %s", r.Body)
	}
	if n, wh := e.stored(t); n != 1998 || wh != wantWh {
		t.Fatalf("stored %d records, %v Wh; want 1998, %v", n, wh, wantWh)
	}
	// The whole body is one batch, and its summary is stored with the last chunk.
	got := e.api.Do(apitest.Request{Method: "GET", Path: "/meters/batch?batch_id=" + b.ID, Auth: e.acc.Test()})
	var again batchBody
	got.JSON(t, &again)
	if got.Status != 200 || again.RecordsAccepted != 1998 || len(again.FailedRecords) != 2 {
		t.Fatalf("GET batch: %d %s", got.Status, got.Body)
	}

	// Sent again gzip-encoded and of unknown length (chunked): the same readings replace
	// themselves, nothing is counted twice.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	req, _ := http.NewRequest("PUT", e.api.URL+"/meters/interval", io.MultiReader(&gz))
	req.Header.Set("Authorization", e.acc.Test())
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Content-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var second batchBody
	if err := json.NewDecoder(res.Body).Decode(&second); err != nil || res.StatusCode != 200 || second.RecordsAccepted != 1998 {
		t.Fatalf("chunked gzip stream: %d %+v (%v)", res.StatusCode, second, err)
	}
	if n, wh := e.stored(t); n != 1998 || wh != wantWh {
		t.Fatalf("after a second send: %d records, %v Wh", n, wh)
	}
}

func TestSmallNDJSONBodiesAreStillAllOrNothing(t *testing.T) {
	e := newMeterEnv(t) // stream_from 16 MiB: a small body is read whole
	body, _ := streamBody(e.loc, 600)
	if r := e.put(t, body, map[string]string{"Content-Type": "application/x-ndjson"}); r.Status != 400 || r.Map(t)["code"] != "invalid_json" {
		t.Fatalf("small body with a bad line: %d %s", r.Status, r.Body)
	}
	if n, _ := e.stored(t); n != 0 {
		t.Fatalf("a refused body stored %d records", n)
	}
}
