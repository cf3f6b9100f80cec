package httpapi_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A new location's first tariff of a direction and type is created without reading the
// location's tariffs (the fresh marker), and the marker is trusted once: of concurrent
// overlapping creates exactly one succeeds, the rest answer 409 (overlapping_contract).
func TestFreshLocationFirstTariff(t *testing.T) {
	var lists atomic.Int64
	api := apitest.Start(t, apitest.Options{Observe: func(st chstore.Statement) {
		if st.Name == "docstore.list" {
			lists.Add(1)
		}
	}, Configure: func(c *config.Config) { c.Webhooks.EndpointCacheTTL = time.Hour }})
	acc := api.NewAccount("fresh")
	as := api.As(acc.Test())
	newLoc := func() string {
		return as("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	}
	body := func(loc, dir string) map[string]any {
		return map[string]any{"location_id": loc, "direction": dir, "type": "COMMODITY",
			"contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
			"schedule": flat(map[string]any{"fixed": 0.2})}
	}

	// A tariff write asks once whether the account takes cost.revised (its webhook
	// endpoints, reused for webhooks.endpoint_cache_ttl): asked here, before counting.
	if r := as("POST", "/tariffs/elements", body(newLoc(), "IMPORT")); r.Status != 200 {
		t.Fatalf("first tariff of the account: %d %s", r.Status, r.Body)
	}
	loc := newLoc()
	before := lists.Load()
	if r := as("POST", "/tariffs/elements", body(loc, "IMPORT")); r.Status != 200 {
		t.Fatalf("first import tariff: %d %s", r.Status, r.Body)
	}
	if r := as("POST", "/tariffs/elements", body(loc, "EXPORT")); r.Status != 200 {
		t.Fatalf("first export tariff: %d %s", r.Status, r.Body)
	}
	if n := lists.Load() - before; n != 0 {
		t.Errorf("the first tariffs of a new location read its tariffs %d times, want 0", n)
	}
	// The markers are gone: an overlapping tariff reads the list and is refused.
	if r := as("POST", "/tariffs/elements", body(loc, "IMPORT")); r.Status != 409 || r.Map(t)["code"] != "overlapping_contract" {
		t.Errorf("overlapping import tariff: %d %s", r.Status, r.Body)
	}
	if lists.Load() == before {
		t.Error("the overlapping create did not read the location's tariffs")
	}

	// Concurrent creates on a fresh location: one wins, the others see it.
	loc = newLoc()
	var wg sync.WaitGroup
	var mu sync.Mutex
	status := map[int]int{}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := as("POST", "/tariffs/elements", body(loc, "IMPORT"))
			mu.Lock()
			status[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if status[200] != 1 || status[409] != 7 {
		t.Errorf("8 concurrent overlapping creates on a fresh location answered %v, want one 200 and seven 409", status)
	}
	list := as("GET", "/tariffs/elements?location_id="+loc, nil).Map(t)["data"].([]any)
	if len(list) != 1 {
		t.Errorf("%d tariffs stored, want 1", len(list))
	}
}
