package apitest

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
)

// OtherNodeFirst lists c's nodes in reverse order, so that a second process connects to
// another node than the first (on a cluster of 9101–9104: 9104, the other shard); on one
// server it changes nothing.
func OtherNodeFirst(c *config.ClickHouse) {
	nodes := c.Addrs()
	slices.Reverse(nodes)
	c.Addr = strings.Join(nodes, ",")
}

// CheckOneService makes, through two processes of one deployment, the checks a user
// behind a load balancer would: every change acknowledged by one is seen by the other's
// next request. tag names the round (one test may check several times).
func CheckOneService(t *testing.T, one, two *API, tag string) {
	t.Helper()
	acc := newAccountRetrying(t, one, "one-service-"+tag) // an account made through 1 works through 2
	do1, do2 := retrying(one.As(acc.Test())), retrying(two.As(acc.Test()))
	loc := do1("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	if got := pushOne(t, do2, loc); got != "" {
		t.Errorf("%s: a reading via 2 for a location created via 1: %s, want accepted", tag, got)
	}
	first := createFlatTariff(t, do1, loc, 0.20)
	if got := costOf(t, do2, loc); got != 0.2 {
		t.Errorf("%s: a tariff set via 1 priced via 2 at %v, want 0.2", tag, got)
	}
	if r := do2("DELETE", "/tariffs/elements/"+first, nil); r.Status != 202 {
		t.Fatalf("%s: delete the tariff via 2: %d %s", tag, r.Status, r.Body)
	}
	createFlatTariff(t, do2, loc, 0.30)
	if got := costOf(t, do1, loc); got != 0.3 {
		t.Errorf("%s: a tariff replaced via 2 priced via 1 at %v, want 0.3", tag, got)
	}
	if r := do1("DELETE", "/locations/"+loc, nil); r.Status != 202 {
		t.Fatalf("%s: delete the location via 1: %d %s", tag, r.Status, r.Body)
	}
	if r := do2("GET", "/locations/"+loc, nil); r.Status != 404 {
		t.Errorf("%s: a location deleted via 1, read via 2: %d, want 404", tag, r.Status)
	}
	if got := pushOne(t, do2, loc); !strings.Contains(got, "no such location") {
		t.Errorf("%s: a reading via 2 for a location deleted via 1: %q, want refused", tag, got)
	}
}

type caller = func(method, path string, body any) Response

// newAccountRetrying creates an account as NewAccount does, again after a 503-like
// failure (a pooled connection to a node that was restarted).
func newAccountRetrying(t *testing.T, a *API, name string) Account {
	t.Helper()
	for try := 0; ; try++ {
		c, err := a.App.Accounts.Create(context.Background(), name)
		if err == nil {
			return Account{ID: c.AccountID, TestKey: c.TestKey, LiveKey: c.LiveKey}
		}
		if kwhouse.KindOf(err) != kwhouse.KindUnavailable || try == 40 {
			t.Fatalf("create account: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// retrying sends a request again after a 503, as a client behind a load balancer would:
// a request caught by a node's failure is refused whole and safe to repeat.
func retrying(do caller) caller {
	return func(method, path string, body any) Response {
		for try := 0; ; try++ {
			r := do(method, path, body)
			if r.Status != 503 || try == 40 {
				return r
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// pushOne sends one reading of 1 kWh on 2024-01-10 and returns its failure ("" when accepted).
func pushOne(t *testing.T, do caller, loc string) string {
	t.Helper()
	r := do("PUT", "/meters/interval", []any{map[string]any{"location_id": loc, "units": "WH", "value": 1000,
		"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:30:00Z"}})
	var b struct {
		Accepted int `json:"records_accepted"`
		Failed   []struct {
			Error string `json:"error"`
		} `json:"failed_records"`
	}
	r.JSON(t, &b)
	if r.Status != 200 {
		t.Fatalf("push: %d %s", r.Status, r.Body)
	}
	if b.Accepted == 1 {
		return ""
	}
	if len(b.Failed) == 0 {
		return "neither accepted nor failed"
	}
	return b.Failed[0].Error
}

func createFlatTariff(t *testing.T, do caller, loc string, price float64) string {
	t.Helper()
	schedule := []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{
		"days": []string{"All"}, "hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00",
			"rate": []any{map[string]any{"fixed": price}}}}}}}}
	r := do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": schedule})
	if r.Status != 200 {
		t.Fatalf("tariff: %d %s", r.Status, r.Body)
	}
	return r.Map(t)["id"].(string)
}

// costOf prices the location's 2024-01-10 (one reading of 1 kWh), rounded to the cent; -1
// for an answer other than 200.
func costOf(t *testing.T, do caller, loc string) float64 {
	t.Helper()
	r := do("POST", "/costs/interval/"+loc, map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"})
	if r.Status != 200 {
		t.Logf("cost: %d %s", r.Status, r.Body)
		return -1
	}
	return math.Round(r.Map(t)["tariff"].(map[string]any)["value"].(float64)*100) / 100
}
