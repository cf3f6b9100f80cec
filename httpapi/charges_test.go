package httpapi_test

import (
	"testing"
)

// Standing, demand and tax fields are stored and returned; bad values are 400 naming the
// field, and nothing is stored (docs/costs.md, "Bill charges").
func TestTariffChargeFieldsStoredAndChecked(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	id := e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.2}), "standing_charge": 0.5, "tax_percentage": 5,
		"demand_charges": []any{map[string]any{"rate_per_kw": 3.5, "minimum_kw": 2.5},
			map[string]any{"months": []string{"Jun", "Jul"}, "rate_per_kw": 10, "interval_minutes": 30,
				"days_and_hours": []any{map[string]any{"days": []string{"Weekday"}, "hours": []any{map[string]any{"valid_from": "12:00:00", "valid_to": "18:00:00"}}}}}}})
	got := e.do("GET", "/tariffs/elements/"+id, nil).Map(t)
	dc, _ := got["demand_charges"].([]any)
	if got["standing_charge"] != 0.5 || got["tax_percentage"] != 5.0 || len(dc) != 2 {
		t.Fatalf("tariff %v", got)
	}
	if first := dc[0].(map[string]any); first["interval_minutes"] != 15.0 || first["minimum_kw"] != 2.5 || first["rate_per_kw"] != 3.5 {
		t.Errorf("first demand charge (interval default 15) %v", first)
	}
	// A tariff without them shows none of the fields (FlatPeak clients see nothing new).
	plain := e.do("POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "EXPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.1})}).Map(t)
	for _, f := range []string{"standing_charge", "demand_charges", "tax_percentage"} {
		if _, ok := plain[f]; ok {
			t.Errorf("plain tariff has %s: %v", f, plain)
		}
	}
	bad := []struct {
		fields map[string]any
		param  string
	}{
		{map[string]any{"standing_charge": -0.1}, "standing_charge"},
		{map[string]any{"standing_charge": 0.3, "direction": "EXPORT"}, "standing_charge"},
		{map[string]any{"tax_percentage": 101}, "tax_percentage"},
		{map[string]any{"tax_percentage": -1}, "tax_percentage"},
		{map[string]any{"demand_charges": []any{map[string]any{"rate_per_kw": -1}}}, "demand_charges[0].rate_per_kw"},
		{map[string]any{"demand_charges": []any{map[string]any{}}}, "demand_charges[0].rate_per_kw"},
		{map[string]any{"demand_charges": []any{map[string]any{"rate_per_kw": 1, "interval_minutes": 20}}}, "demand_charges[0].interval_minutes"},
		{map[string]any{"demand_charges": []any{map[string]any{"rate_per_kw": 1, "minimum_kw": -2}}}, "demand_charges[0].minimum_kw"},
		{map[string]any{"demand_charges": []any{map[string]any{"rate_per_kw": 1, "months": []string{"Smarch"}}}}, "demand_charges[0].months"},
		{map[string]any{"demand_charges": []any{map[string]any{"rate_per_kw": 1, "days_and_hours": []any{map[string]any{"days": []string{"All"},
			"hours": []any{map[string]any{"valid_from": "25:00:00", "valid_to": "00:00:00"}}}}}}}, "demand_charges[0].days_and_hours[0].hours[0].valid_from"},
	}
	before := len(e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t)["data"].([]any))
	for _, b := range bad {
		body := map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "NON_COMMODITY",
			"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.1})}
		for k, v := range b.fields {
			body[k] = v
		}
		if b.fields["direction"] == "EXPORT" {
			body["type"] = "COMMODITY"
		}
		r := e.do("POST", "/tariffs/elements", body)
		if r.Status != 400 || r.Map(t)["param"] != b.param {
			t.Errorf("%v: %d %s, want 400 naming %s", b.fields, r.Status, r.Body, b.param)
		}
	}
	if after := len(e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t)["data"].([]any)); after != before {
		t.Errorf("bad tariffs stored: %d tariffs, %d before", after, before)
	}
}
