package httpapi_test

import "testing"

func TestCostSessionAndInstant(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10, "to_kwh": 10}, map[string]any{"fixed": 0.50})})
	charger := e.do("POST", "/devices", map[string]any{"reference_id": "charger"}).Map(t)["id"].(string)
	e.reads(
		map[string]any{"device_id": charger, "session_reference_id": "S1", "start_time": "2024-01-10T18:00:00Z", "end_time": "2024-01-10T19:00:00Z", "value": 4, "units": "KWH"},
		map[string]any{"device_id": charger, "session_reference_id": "S1", "start_time": "2024-01-10T19:00:00Z", "end_time": "2024-01-10T20:00:00Z", "value": 4, "units": "KWH"},
		map[string]any{"device_id": charger, "session_reference_id": "S2", "start_time": "2024-01-11T18:00:00Z", "end_time": "2024-01-11T19:00:00Z", "value": 4, "units": "KWH"},
	)
	r := e.do("POST", "/costs/session/S1", nil)
	var s costBody
	r.JSON(t, &s)
	// The session's window: its first record's start to its last record's end.
	if w := r.Map(t); w["start_time"] != "2024-01-10T18:00:00Z" || w["end_time"] != "2024-01-10T20:00:00Z" {
		t.Errorf("session S1 window %v–%v, want 18:00–20:00", w["start_time"], w["end_time"])
	}
	// S1: 8 kWh, all within the first 10 kWh of January: 0.8.
	if r.Status != 200 || len(s.Data) != 2 || !near(s.Tariff.Value, 0.8) {
		t.Fatalf("session S1: %d %s", r.Status, r.Body)
	}
	r = e.do("POST", "/costs/session/S2", nil)
	r.JSON(t, &s)
	// S2 comes after S1's 8 kWh: 2 kWh at 0.10 + 2 kWh at 0.50 = 1.2.
	if r.Status != 200 || !near(s.Tariff.Value, 1.2) {
		t.Fatalf("session S2: %d %s", r.Status, r.Body)
	}
	if r := e.do("POST", "/costs/session/NOPE", nil); r.Status != 404 {
		t.Errorf("unknown session: %d", r.Status)
	}

	// Instant: 12 kWh already used this month, so 1 kWh more is all band 2: 0.50.
	instant := map[string]any{"location_id": e.loc, "device_id": charger, "start_time": "2024-01-12T18:00:00Z",
		"end_time": "2024-01-12T19:00:00Z", "units": "KWH", "value": 1, "non_persistent": true}
	r = e.do("POST", "/costs/instant?include_tariff=true", instant)
	m := r.Map(t)
	data, _ := m["data"].(map[string]any)
	if r.Status != 200 || m["persisted"] != false || data == nil || !near(data["tariff"].(map[string]any)["value"].(float64), 0.5) {
		t.Fatalf("instant non-persistent: %d %s", r.Status, r.Body)
	}
	// FlatPeak's meter_record echoes the record sent and names the carbon unit.
	if req, _ := m["request"].(map[string]any); m["carbon_units"] != "gCO2eq" || req["location_id"] != e.loc || req["start_time"] != "2024-01-12T18:00:00Z" {
		t.Errorf("instant echo: carbon_units %v, request %v", m["carbon_units"], m["request"])
	}
	if c := e.cost(charger, "", "2024-01-12T00:00:00Z", "2024-01-13T00:00:00Z"); len(c.Data) != 0 {
		t.Fatalf("a non-persistent record was stored: %+v", c.Data)
	}
	delete(instant, "non_persistent")
	r = e.do("POST", "/costs/instant", instant)
	if r.Status != 200 || r.Map(t)["persisted"] != true {
		t.Fatalf("instant persistent: %d %s", r.Status, r.Body)
	}
	if c := e.cost(charger, "", "2024-01-12T00:00:00Z", "2024-01-13T00:00:00Z"); len(c.Data) != 1 || !near(c.Tariff.Value, 0.5) {
		t.Fatalf("persisted instant record: %+v", c)
	}
	if r := e.do("POST", "/costs/instant", map[string]any{"location_id": e.loc, "units": "WH", "value": -1,
		"start_time": "2024-01-12T18:00:00Z", "end_time": "2024-01-12T19:00:00Z"}); r.Status != 400 {
		t.Errorf("bad instant record: %d %s", r.Status, r.Body)
	}
}
