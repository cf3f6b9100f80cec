package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestRedisDownEverythingStillAnswersFromClickHouse(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	do := api.As(acc.Test())
	loc := do("POST", "/locations", map[string]any{"reference_id": "R1", "postal_address": map[string]any{"country_code": "GB"}}).Map(t)
	id := loc["id"].(string)
	do("GET", "/locations/"+id, nil) // now cached in Redis

	api.Redis.Down()
	start := time.Now()
	if r := do("PATCH", "/locations/"+id, map[string]any{"reference_id": "R2"}); r.Status != 200 {
		t.Fatalf("PATCH with Redis down: %d %s", r.Status, r.Body)
	}
	if got := do("GET", "/locations/"+id, nil).Map(t); got["reference_id"] != "R2" {
		t.Fatalf("GET with Redis down: %v", got)
	}
	cus := do("POST", "/customers", map[string]any{"reference_id": "C1"})
	if cus.Status != 201 {
		t.Fatalf("create with Redis down: %d %s", cus.Status, cus.Body)
	}
	if r := do("POST", "/customers", map[string]any{"reference_id": "C1"}); r.Status != 409 {
		t.Errorf("duplicate with Redis down: %d, want 409", r.Status)
	}
	for _, p := range []string{"/locations", "/customers", "/events", "/devices"} {
		if r := do("GET", p, nil); r.Status != 200 {
			t.Errorf("GET %s with Redis down: %d", p, r.Status)
		}
	}
	ready := api.Do(apitest.Request{Method: "GET", Path: "/readyz"})
	if m := ready.Map(t); ready.Status != 200 || m["status"] != "degraded" || m["redis"] != "down" {
		t.Errorf("readyz with Redis down: %d %v", ready.Status, m)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("requests with Redis down took %v in all: the cache is not skipped", d)
	}

	// Redis comes back still holding the pre-outage copy: it must not be served.
	api.Redis.Up()
	time.Sleep(2500 * time.Millisecond) // past the cache's back-off
	if got := do("GET", "/locations/"+id, nil).Map(t); got["reference_id"] != "R2" {
		t.Fatalf("after Redis returns: reference_id %v, want R2 (stale cache served)", got["reference_id"])
	}
	if m := api.Do(apitest.Request{Method: "GET", Path: "/readyz"}).Map(t); m["status"] != "ok" {
		t.Errorf("readyz after Redis returns: %v", m)
	}
}

func TestClickHouseDownWritesAnswer503AndLeaveNothingHalfWritten(t *testing.T) {
	testkit.SkipEmbedded(t, "ClickHouse is inside the process: there is no connection to take down")
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	do := api.As(acc.Test())
	dev := do("POST", "/devices", map[string]any{"reference_id": "D1"}).Map(t)["id"].(string)

	api.ClickHouse.Down()
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/customers", map[string]any{}},
		{"POST", "/devices", map[string]any{"reference_id": "D2"}},
		{"PATCH", "/devices/" + dev, map[string]any{"reference_id": "D3"}},
		{"DELETE", "/devices/" + dev, nil},
		{"POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}},
	} {
		r := do(req.method, req.path, req.body)
		m := r.Map(t)
		if r.Status != 503 || m["type"] != "api_error" || m["code"] != "store_unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with ClickHouse down: %d %s, want 503 store_unavailable with Retry-After", req.method, req.path, r.Status, r.Body)
		}
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/readyz"}); r.Status != 503 || r.Map(t)["clickhouse"] != "down" {
		t.Errorf("readyz with ClickHouse down: %d %s", r.Status, r.Body)
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
		t.Errorf("healthz with ClickHouse down: %d", r.Status)
	}

	api.ClickHouse.Up()
	waitReady(t, api)
	got := do("GET", "/devices/"+dev, nil).Map(t)
	if got["reference_id"] != "D1" {
		t.Errorf("device after failed PATCH/DELETE: %v, want unchanged D1", got)
	}
	for _, p := range []string{"/customers", "/locations"} {
		if list := do("GET", p, nil).Map(t); len(list["data"].([]any)) != 0 {
			t.Errorf("GET %s: failed creates left %v", p, list["data"])
		}
	}
	if list := do("GET", "/devices?reference_id=D2", nil).Map(t); len(list["data"].([]any)) != 0 {
		t.Errorf("failed device create left %v", list["data"])
	}
	// Every stored document version has its event, and no event lacks its document.
	var docs, events uint64
	ctx := context.Background()
	if err := api.App.DB.QueryRow(ctx, chstore.Tool("SELECT countIf(kind != 'event'), countIf(kind = 'event') FROM documents")).Scan(&docs, &events); err != nil {
		t.Fatal(err)
	}
	if docs != events {
		t.Errorf("%d document versions but %d events: a change was stored without its event", docs, events)
	}
}

func waitReady(t *testing.T, api *apitest.API) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if api.Do(apitest.Request{Method: "GET", Path: "/readyz"}).Status == 200 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("service not ready again after ClickHouse returned")
}
