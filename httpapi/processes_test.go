package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// Two kwhouse processes on the same ClickHouse and Redis behave as one service: what one
// deletes the other's ingest refuses at once, and a tariff changed through one is priced
// by the other at once.
func TestTwoProcessesActAsOneService(t *testing.T) {
	a := apitest.Start(t, apitest.Options{})
	b := apitest.Start(t, apitest.Options{ShareWith: a})
	acc := a.NewAccount("fleet")
	doA, doB := a.As(acc.Test()), b.As(acc.Test())
	loc := doA("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	tariff := func(price float64) string {
		r := doA("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
			"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": price})})
		if r.Status != 200 {
			t.Fatalf("tariff: %d %s", r.Status, r.Body)
		}
		return r.Map(t)["id"].(string)
	}
	push := func(do func(string, string, any) apitest.Response, start, end string) batchBody {
		t.Helper()
		r := do("PUT", "/meters/interval", []any{map[string]any{"location_id": loc, "units": "WH", "value": 1000, "start_time": start, "end_time": end}})
		var bb batchBody
		r.JSON(t, &bb)
		if r.Status != 200 {
			t.Fatalf("push: %d %s", r.Status, r.Body)
		}
		return bb
	}
	cost := func(do func(string, string, any) apitest.Response) float64 {
		t.Helper()
		r := do("POST", "/costs/interval/"+loc, map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"})
		if r.Status != 200 {
			t.Fatalf("cost: %d %s", r.Status, r.Body)
		}
		return r.Map(t)["tariff"].(map[string]any)["value"].(float64)
	}
	first := tariff(0.20)
	if bb := push(doB, "2024-01-10T10:00:00Z", "2024-01-10T10:30:00Z"); bb.RecordsAccepted != 1 {
		t.Fatalf("B's first push: %+v", bb)
	}
	if got := cost(doB); !near(got, 0.2) {
		t.Fatalf("B's cost %v, want 0.2", got)
	}
	// The tariff changes through A: B prices the new one at once (1 kWh at 0.30).
	if r := doA("DELETE", "/tariffs/elements/"+first, nil); r.Status != 202 {
		t.Fatalf("delete tariff: %d %s", r.Status, r.Body)
	}
	tariff(0.30)
	if got := cost(doB); !near(got, 0.3) {
		t.Errorf("B's cost after A changed the tariff: %v, want 0.3", got)
	}
	// The location goes through A: B's next push is refused (B knew the id a moment ago).
	if r := doA("DELETE", "/locations/"+loc, nil); r.Status != 202 {
		t.Fatalf("delete location: %d %s", r.Status, r.Body)
	}
	bb := push(doB, "2024-01-10T11:00:00Z", "2024-01-10T11:30:00Z")
	if bb.RecordsAccepted != 0 || len(bb.FailedRecords) != 1 || !strings.Contains(bb.FailedRecords[0].Error, "no such location") {
		t.Errorf("B's push after A deleted the location: %+v, want it refused", bb)
	}
}

// Two processes whose clocks disagree by ten minutes re-send the same reading in turn,
// each time with a new value: the stored reading is always the last request's, since row
// versions come from the clock the processes share, not from their own.
func TestLastResendWinsWhateverTheProcessesClocks(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(5 * time.Minute) }
	behind := func() time.Time { return time.Now().Add(-5 * time.Minute) }
	a := apitest.Start(t, apitest.Options{Now: ahead})
	b := apitest.Start(t, apitest.Options{Now: behind, ShareWith: a})
	acc := a.NewAccount("resend")
	loc := a.As(acc.Test())("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	for i := 0; i < 100; i++ {
		api := []*apitest.API{a, b}[i%2]
		value := float64(1000 + i)
		r := api.As(acc.Test())("PUT", "/meters/interval", []any{map[string]any{"location_id": loc, "units": "WH", "value": value,
			"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:30:00Z"}})
		if r.Status != 200 || r.Map(t)["records_accepted"] != 1.0 {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Body)
		}
		var stored float64
		err := a.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT argMax(energy_wh, version) FROM meter_records
			WHERE account_id = ? AND location_id = ?`), acc.ID, loc).Scan(&stored)
		if err != nil {
			t.Fatal(err)
		}
		if stored != value {
			t.Fatalf("after send %d (through process %d): stored %v Wh, want the last request's %v", i, i%2+1, stored, value)
		}
	}
}

// The checks a user behind a load balancer makes, through two processes connected to
// different nodes (on a cluster; on one server, to the same one).
func TestTwoProcessesOnDifferentNodesActAsOneService(t *testing.T) {
	a := apitest.Start(t, apitest.Options{})
	b := apitest.Start(t, apitest.Options{ShareWith: a, ClickHouse: apitest.OtherNodeFirst})
	apitest.CheckOneService(t, a, b, "fresh")
	// A second account with the same tariff product: its rate periods are its own rows,
	// which the processes' memory of expanded years must not take as already stored.
	apitest.CheckOneService(t, a, b, "a second account")
}
