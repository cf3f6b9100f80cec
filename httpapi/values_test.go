package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// Readings beyond the energy range are failed records; the others of the push are kept.
func TestHugeReadingsAreFailedRecords(t *testing.T) {
	e := newMeterEnv(t)
	day := "2024-01-10T"
	b := e.put(t, []any{
		rec(e.loc, day+"00:00:00Z", day+"01:00:00Z", "WH", 1e308, nil),
		rec(e.loc, day+"01:00:00Z", day+"02:00:00Z", "KWH", 1.7e305, nil),
		rec(e.loc, day+"02:00:00Z", day+"03:00:00Z", "WH", 1e12, nil), // the largest reading
	}, nil)
	var got batchBody
	b.JSON(t, &got)
	if b.Status != 200 || got.RecordsAccepted != 1 || len(got.FailedRecords) != 2 {
		t.Fatalf("push: %d %s, want 1 accepted and 2 failed", b.Status, b.Body)
	}
	for _, f := range got.FailedRecords {
		if !strings.Contains(f.Error, "at most 1e+12 Wh") {
			t.Errorf("record %d: %q, want the limit named", f.RecordNum, f.Error)
		}
	}
	// A register reading past its range, and a step past the reading range, fail too.
	t0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	r := e.api.Do(apitest.Request{Method: "PUT", Path: "/meters/cumulative/epoch", Auth: e.acc.Test(), Body: map[string]any{
		"location_id": e.loc, "device_id": e.dev, "units": "KWH", "data": []map[string]any{
			{"time": t0, "value": 100.0}, {"time": t0 + 1800, "value": 1e308}, {"time": t0 + 3600, "value": 5e9}}}})
	var cum batchBody
	r.JSON(t, &cum)
	if r.Status != 200 || len(cum.FailedRecords) != 2 || cum.FailedRecords[0].RecordNum != 1 || cum.FailedRecords[1].RecordNum != 2 {
		t.Fatalf("register readings: %d %s, want readings 1 and 2 failed", r.Status, r.Body)
	}
}

// Prices, surcharges and intensities beyond their ranges are refused, naming the field.
func TestHugePricesAndIntensitiesAreRefused(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	for field, v := range map[string]float64{"fixed": 1e308, "surcharge_fixed": -2e6, "surcharge_percentage": 1e5, "to_kwh": 1e300} {
		bands := []map[string]any{{"fixed": 0.2, field: v}}
		if field == "to_kwh" {
			bands = append(bands, map[string]any{"fixed": 0.1})
		}
		r := e.do("POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
			"contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2025-01-01T00:00:00Z",
			"schedule": flat(bands...)})
		want := "schedule[0].days_and_hours[0].hours[0].rate[0]." + field
		if r.Status != 400 || r.Map(t)["param"] != want {
			t.Errorf("%s %g: %d %s, want 400 naming %s", field, v, r.Status, r.Body, want)
		}
	}
	m := e.do("POST", "/markets", map[string]any{"display_name": "m", "currency_code": "GBP"}).Map(t)["id"].(string)
	r := e.do("PUT", "/markets/"+m+"/prices", []any{map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "price": 1e308}})
	if r.Status != 400 || r.Map(t)["param"] != "[0].price" {
		t.Errorf("market price 1e308: %d %s, want 400 naming [0].price", r.Status, r.Body)
	}
	s := e.do("POST", "/carbon/series", map[string]any{"display_name": "x", "country_code": "GB"}).Map(t)["id"].(string)
	r = e.do("PUT", "/carbon/series/"+s+"/intensities", []any{map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "intensity": 1e308}})
	if r.Status != 400 || r.Map(t)["param"] != "[0].intensity" {
		t.Errorf("intensity 1e308: %d %s, want 400 naming [0].intensity", r.Status, r.Body)
	}
}

// A cost that cannot be encoded (a price stored before the value ranges existed makes
// it infinite) is a 500 with the error body, never a 200 with an empty body: the
// interval answer, the fleet answer and its CSV.
func TestUnencodableCostIsA500WithTheErrorBody(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "m", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"market_rates": true, "market_id": m})
	b, err := e.api.App.DB.Insert(context.Background(), chstore.Tool(
		"INSERT INTO market_prices (account_id, live_mode, market_id, start_time, end_time, price, confidence, version) VALUES"))
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)
	if err := b.Append(e.acc.ID, uint8(0), m, day, day.Add(24*time.Hour), 1e308, 1.0, uint64(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	e.reads(map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 5000})
	window := map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}
	fleet := map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z", "aggregation": "DAY", "group_by": "location"}
	for _, req := range []apitest.Request{
		{Method: "POST", Path: "/costs/interval/" + e.loc, Body: window},
		{Method: "POST", Path: "/costs/interval/" + e.loc + "?aggregation=DAY", Body: window},
		{Method: "POST", Path: "/costs/fleet", Body: fleet},
		{Method: "POST", Path: "/costs/fleet", Body: fleet, Header: map[string]string{"Accept": "text/csv"}},
	} {
		req.Auth = e.acc.Test()
		r := e.api.Do(req)
		if r.Status != 500 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %q %s, want 500 with the error body", req.Method, req.Path, r.Status, r.Header.Get("Content-Type"), r.Body)
			continue
		}
		if m := r.Map(t); m["object"] != "error" || m["code"] != "internal_error" || m["request_id"] == "" {
			t.Errorf("%s %s: body %s, want the error body", req.Method, req.Path, r.Body)
		}
	}
}
