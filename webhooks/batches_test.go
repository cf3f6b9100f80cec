package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kwhouse/kwhouse/config"
)

// Every request body of readings — a JSON array, and an NDJSON body streamed in many
// chunks — is reported by one signed meter.batch.completed delivery with its batch id,
// counts, locations and time range.
func TestBodiesOfReadingsEmitOneBatchCompletedEach(t *testing.T) {
	h := startConfig(t, func(c *config.Config) {
		c.Ingest.StreamFrom, c.Ingest.StreamChunkBytes = 1024, 2048 // the stream below is ≈ 20 chunks
	})
	rcv := newReceiver(t, always(204))
	d := h.dispatcher()
	_, secret := h.endpoint(rcv.url(), "meter.batch.completed")
	location := func() string {
		r := h.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"})
		if r.Status != 201 {
			t.Fatalf("location: %d %s", r.Status, r.Body)
		}
		return r.Map(t)["id"].(string)
	}
	a, b := location(), location()
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	rec := func(loc string, i int) map[string]any {
		s := t0.Add(time.Duration(i) * 30 * time.Minute)
		return map[string]any{"location_id": loc, "units": "WH", "value": 100,
			"start_time": s.Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).Format(time.RFC3339)}
	}

	// A JSON array: two locations, one record of an unknown location (failed).
	arr := h.do("PUT", "/meters/interval", []any{rec(b, 3), rec(a, 0), rec("loc_00000000000000000000000a", 1), rec(a, 5)})
	if arr.Status != 200 {
		t.Fatalf("array: %d %s", arr.Status, arr.Body)
	}
	arrID := arr.Map(t)["id"].(string)

	// An NDJSON body of unknown length (streamed), 200 records of location b.
	var body bytes.Buffer
	for i := range 200 {
		line, _ := json.Marshal(rec(b, 100+i))
		body.Write(append(line, '\n'))
	}
	req, _ := http.NewRequest("PUT", h.api.URL+"/meters/interval", io.MultiReader(&body))
	req.Header.Set("Authorization", h.auth)
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var streamed struct{ ID string }
	json.NewDecoder(res.Body).Decode(&streamed)
	res.Body.Close()
	if res.StatusCode != 200 || streamed.ID == "" {
		t.Fatalf("stream: %d", res.StatusCode)
	}

	drive(t, d, func() bool { return len(rcv.requests()) >= 2 })
	for range 3 {
		turn(t, d)
	}
	got := map[string]string{}
	wh, _ := standardwebhooks.NewWebhook(secret)
	node := nodeVerifier(t)
	for _, r := range rcv.requests() {
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Errorf("delivery refused by the Go Standard Webhooks library: %v", err)
		}
		if node != nil {
			if err := node(secret, r.header, r.body); err != nil {
				t.Errorf("delivery refused by the npm standardwebhooks package: %v", err)
			}
		}
		var e struct {
			Type string
			Data map[string]any
		}
		json.Unmarshal(r.body, &e)
		if e.Type != "meter.batch.completed" {
			t.Errorf("delivered a %s event", e.Type)
		}
		data, _ := json.Marshal(e.Data)
		got[fmt.Sprint(e.Data["batch_id"])] = string(data)
	}
	if len(got) != 2 || len(rcv.requests()) != 2 {
		t.Fatalf("%d deliveries of %d batches, want one of each of 2 bodies: %v", len(rcv.requests()), len(got), got)
	}
	first, second := a, b
	if b < a {
		first, second = b, a
	}
	created := func(id string) string {
		return h.do("GET", "/meters/batch?batch_id="+id, nil).Map(t)["time_created"].(string)
	}
	want := map[string]string{
		arrID: `{"batch_id":"` + arrID + `","end_time":"2024-03-01T03:00:00Z","failed_records_count":1,` +
			`"location_count":2,"location_ids":["` + first + `","` + second + `"],"records_accepted":3,"records_submitted":4,` +
			`"start_time":"2024-03-01T00:00:00Z","time_created":"` + created(arrID) + `"}`,
		streamed.ID: `{"batch_id":"` + streamed.ID + `","end_time":"2024-03-07T06:00:00Z","failed_records_count":0,` +
			`"location_count":1,"location_ids":["` + b + `"],"records_accepted":200,"records_submitted":200,` +
			`"start_time":"2024-03-03T02:00:00Z","time_created":"` + created(streamed.ID) + `"}`,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("batch %s\n%s\nwant\n%s", id, got[id], w)
		}
	}
}
