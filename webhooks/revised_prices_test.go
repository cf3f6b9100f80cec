package webhooks_test

import (
	"encoding/json"
	"testing"
	"time"
)

// A corrected market price of a closed local day emits one cost.revised per (object,
// direction, day) with the day's money before and after; the same prices again, prices of
// a closed day without readings and tomorrow's prices emit none.
func TestCorrectedMarketPricesEmitCostRevised(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, always(200))
	d := h.dispatcher()
	h.endpoint(rcv.url(), "cost.revised")
	market := h.must("POST", "/markets", map[string]any{"display_name": "spot", "currency_code": "GBP"})["id"].(string)
	london, _ := time.LoadLocation("Europe/London")
	now := h.clock.Now().In(london)
	day := time.Date(now.Year(), now.Month(), now.Day()-3, 0, 0, 0, 0, london)
	prices := func(from, to time.Time, price float64) {
		t.Helper()
		var ps []any
		for s := from; s.Before(to); s = s.Add(30 * time.Minute) {
			ps = append(ps, map[string]any{"start_time": s.UTC().Format(time.RFC3339),
				"end_time": s.Add(30 * time.Minute).UTC().Format(time.RFC3339), "price": price})
		}
		h.must("PUT", "/markets/"+market+"/prices", ps)
	}
	prices(day.AddDate(0, 0, -1), day.AddDate(0, 0, 5), 0.10)
	loc := h.must("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"})["id"].(string)
	h.must("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
		"market_rates": true, "market_id": market,
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2035-01-01T00:00:00Z"})
	var recs []any
	for _, at := range []time.Duration{0, 30 * time.Minute, 10 * time.Hour, 10*time.Hour + 30*time.Minute} {
		s := day.Add(at)
		recs = append(recs, map[string]any{"location_id": loc, "units": "WH", "value": 500,
			"start_time": s.UTC().Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).UTC().Format(time.RFC3339)})
	}
	h.must("PUT", "/meters/interval", recs) // a day's first readings: new, not revised

	// 10:00–11:00 corrected from 0.10 to 0.30: 2 kWh at 0.10 = 0.20 becomes
	// 1 kWh at 0.10 + 1 kWh at 0.30 = 0.40.
	prices(day.Add(10*time.Hour), day.Add(11*time.Hour), 0.30)
	got := h.revised()
	if len(got) != 1 {
		t.Fatalf("%d cost.revised after a price correction, want 1: %v", len(got), got)
	}
	want := `{"after":{"energy":{"value":2000,"value_exact":2000},"tariff":{"confidence":1,"value":0.4}},` +
		`"before":{"energy":{"value":2000,"value_exact":2000},"tariff":{"confidence":1,"value":0.2}},` +
		`"currency_code":"GBP","date":"` + day.Format(time.DateOnly) + `","direction":"IMPORT","location_id":"` + loc + `","timezone":"Europe/London"}`
	if b, _ := json.Marshal(got[0]); string(b) != want {
		t.Errorf("cost.revised data\n%s\nwant\n%s", b, want)
	}

	prices(day.Add(10*time.Hour), day.Add(11*time.Hour), 0.30) // the same prices again
	prices(day.AddDate(0, 0, -1), day, 0.50)                   // a closed day without readings
	prices(day.AddDate(0, 0, 4), day.AddDate(0, 0, 5), 0.70)   // tomorrow: not closed
	if n := len(h.revised()); n != 1 {
		t.Errorf("%d cost.revised in all, want still 1: prices that change no closed day's cost emit none", n)
	}
	drive(t, d, func() bool { return len(rcv.requests()) == 1 })
}

// A tariff change emits cost.revised for the closed days with readings whose money it
// changes: a non-commodity element added to a closed day priced at 0.20/kWh.
func TestTariffChangeEmitsCostRevised(t *testing.T) {
	h := start(t, nil)
	h.endpoint(newReceiver(t, always(200)).url(), "cost.revised")
	loc, day := closedDay(t, h)
	var recs []any
	for _, at := range []time.Duration{0, 5 * time.Hour} {
		s := day.Add(at)
		recs = append(recs, map[string]any{"location_id": loc, "units": "WH", "value": 1000,
			"start_time": s.UTC().Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).UTC().Format(time.RFC3339)})
	}
	h.must("PUT", "/meters/interval", recs)
	if n := len(h.revised()); n != 0 {
		t.Fatalf("%d cost.revised before the tariff change", n)
	}
	// 2 kWh at 0.20 = 0.40; with 0.05/kWh of non-commodity: 2 kWh at 0.25 = 0.50.
	h.must("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "NON_COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2035-01-01T00:00:00Z",
		"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"},
			"hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.05}}}}}}}},
	})
	got := h.revised()
	if len(got) != 1 {
		t.Fatalf("%d cost.revised after a tariff change, want 1: %v", len(got), got)
	}
	b, a := got[0]["before"].(map[string]any), got[0]["after"].(map[string]any)
	if got[0]["date"] != day.Format(time.DateOnly) || b["tariff"].(map[string]any)["value"] != 0.4 ||
		a["tariff"].(map[string]any)["value"] != 0.5 || a["energy"].(map[string]any)["value_exact"] != float64(2000) {
		t.Errorf("tariff change: %v", got[0])
	}
}
