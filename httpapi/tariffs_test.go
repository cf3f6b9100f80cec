package httpapi_test

import (
	"testing"
)

func TestTariffElementLifecycle(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	id := e.tariff(map[string]any{"display_name": "Go", "schedule": peakSchedule()})
	got := e.do("GET", "/tariffs/elements/"+id, nil).Map(t)
	if got["object"] != "tariff" || got["status"] != "CONNECTED" || got["connection_type"] != "MANUAL" || got["timezone"] != "Europe/London" || got["tier_period"] != "MONTH" {
		t.Fatalf("tariff %v", got)
	}
	loc := e.do("GET", "/locations/"+e.loc, nil).Map(t)
	if st := loc["tariff_status"].(map[string]any); st["commodity_import"] != "CONNECTED" || st["commodity_export"] != "NOT_CONNECTED" {
		t.Errorf("location tariff_status %v", st)
	}
	if els := loc["tariff_elements"].([]any); len(els) != 1 || els[0] != id {
		t.Errorf("location tariff_elements %v", els)
	}
	sm := e.do("GET", "/locations/"+e.loc+"/status", nil).Map(t)
	// Today's import timeline (in the location's zone) exists; no export tariff: null.
	rates := sm["rates"].(map[string]any)
	if imp, ok := rates["import"].(map[string]any); !ok || len(imp["today"].([]any)) == 0 || rates["export"] != nil {
		t.Errorf("status rates %v", rates)
	}
	status := sm["tariff_status"].(map[string]any)
	ci := status["commodity_import"].(map[string]any)
	if ci["status"] != "CONNECTED" || ci["tariff"].(map[string]any)["structure_type"] != "TIME_OF_DAY" {
		t.Errorf("status detail %v", ci)
	}
	// An overlapping contract of the same location, direction and type is a conflict.
	r := e.do("POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2025-01-01T00:00:00Z", "contract_end_date": "2026-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 1})})
	if r.Status != 409 || r.Map(t)["code"] != "overlapping_contract" {
		t.Errorf("overlapping contract: %d %s", r.Status, r.Body)
	}
	// PATCH: display name and an earlier end make room for a follow-on contract.
	up := e.do("PATCH", "/tariffs/elements/"+id, map[string]any{"display_name": "Go 2", "contract_end_date": "2025-01-01T00:00:00Z"}).Map(t)
	if up["display_name"] != "Go 2" || up["contract_end_date"] != "2025-01-01T00:00:00Z" {
		t.Errorf("patched %v", up)
	}
	if r := e.do("POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2025-01-01T00:00:00Z", "contract_end_date": "2026-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 1})}); r.Status != 200 {
		t.Errorf("follow-on contract: %d %s", r.Status, r.Body)
	}
	list := e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t)
	if n := len(list["data"].([]any)); n != 2 {
		t.Errorf("%d tariffs listed, want 2", n)
	}
	if r := e.do("GET", "/tariffs/elements", nil); r.Status != 400 || r.Map(t)["param"] != "location_id" {
		t.Errorf("list without location_id: %d %s", r.Status, r.Body)
	}
	events := e.do("GET", "/events?object_id="+id, nil).Map(t)["data"].([]any)
	if len(events) != 2 || events[0].(map[string]any)["type"] != "tariff.update" || events[1].(map[string]any)["type"] != "tariff.create" {
		t.Errorf("tariff events %v", events)
	}
	if r := e.do("DELETE", "/tariffs/elements/"+id, nil); r.Status != 202 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := e.do("GET", "/tariffs/elements/"+id, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
	// Deleting the location deletes its remaining tariff with it.
	rest := e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	e.do("DELETE", "/locations/"+e.loc, nil)
	if r := e.do("GET", "/tariffs/elements/"+rest, nil); r.Status != 404 {
		t.Errorf("tariff of a deleted location: %d", r.Status)
	}
}

func TestTariffValidationNamesRuleAndPath(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
			"contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2025-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.2})}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	gap := []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "07:00:00", "valid_to": "23:00:00", "rate": []any{map[string]any{"fixed": 0.3}}}}}}}}
	badTime := []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{
		map[string]any{"days": []string{"All"}, "hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.3}}}}},
		map[string]any{"days": []string{"Mon"}, "hours": []any{map[string]any{"valid_from": "01:00:00", "valid_to": "26:00:00", "rate": []any{map[string]any{"fixed": 0.3}}}}}}}}
	for _, tc := range []struct {
		body        map[string]any
		status      int
		code, param string
	}{
		{base(map[string]any{"schedule": gap}), 400, "incomplete_time_period", "schedule"},
		{base(map[string]any{"schedule": badTime}), 400, "invalid_time", "schedule[0].days_and_hours[1].hours[0].valid_to"},
		{base(map[string]any{"type": "NON_COMMODITY", "direction": "EXPORT"}), 400, "unsupported_combination", "type"},
		{base(map[string]any{"contract_end_date": "2023-01-01T00:00:00Z"}), 400, "invalid_contract", "contract_end_date"},
		{base(map[string]any{"location_id": "loc_000000000000000000000000"}), 400, "resource_missing", "location_id"},
		{base(map[string]any{"market_rates": true}), 400, "no_default_market", "market_id"},
		{base(map[string]any{"tier_period": "WEEK"}), 400, "invalid_value", "tier_period"},
		{base(map[string]any{"direction": "UP"}), 400, "invalid_value", "direction"},
	} {
		r := e.do("POST", "/tariffs/elements", tc.body)
		m := r.Map(t)
		if r.Status != tc.status || m["code"] != tc.code || m["param"] != tc.param {
			t.Errorf("%d %v/%v, want %d %s/%s (%s)", r.Status, m["code"], m["param"], tc.status, tc.code, tc.param, m["message"])
		}
	}
	if list := e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t); len(list["data"].([]any)) != 0 {
		t.Errorf("refused tariffs were stored: %v", list["data"])
	}
}

// A client generated from FlatPeak's document sends market_rates on every PATCH (its schema
// gives the field a default): the stored value is accepted, a real change of an immutable
// field is refused and changes nothing.
func TestTariffPatchAcceptsUnchangedImmutableFields(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	id := e.tariff(map[string]any{"display_name": "Go", "schedule": peakSchedule()})
	stored := e.do("GET", "/tariffs/elements/"+id, nil).Map(t)
	r := e.do("PATCH", "/tariffs/elements/"+id, map[string]any{"display_name": "Go 2", "market_rates": false,
		"contract_start_date": stored["contract_start_date"]})
	if r.Status != 200 || r.Map(t)["display_name"] != "Go 2" {
		t.Fatalf("PATCH with unchanged market_rates: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct {
		field string
		value any
	}{{"market_rates", true}, {"contract_start_date", "2021-06-01T00:00:00Z"}} {
		r := e.do("PATCH", "/tariffs/elements/"+id, map[string]any{"display_name": "Go 3", tc.field: tc.value})
		if m := r.Map(t); r.Status != 400 || m["code"] != "immutable_field" || m["param"] != tc.field {
			t.Errorf("PATCH changing %s: %d %s", tc.field, r.Status, r.Body)
		}
	}
	if got := e.do("GET", "/tariffs/elements/"+id, nil).Map(t); got["display_name"] != "Go 2" || got["market_rates"] != false {
		t.Errorf("after refused PATCHes: %v", got)
	}
}
