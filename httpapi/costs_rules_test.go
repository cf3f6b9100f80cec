package httpapi_test

import (
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestCostLocalAtZeroAndNoTariff422(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.reads(map[string]any{"start_time": "2024-01-10T12:00:00Z", "end_time": "2024-01-10T13:00:00Z", "value": 500, "tariff_rate": "LOCAL"})
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	if len(c.Data) != 1 || c.Tariff.Value != 0 || !near(c.Energy.Value, 500) {
		t.Fatalf("LOCAL record without any tariff: %+v", c)
	}
	e.reads(map[string]any{"start_time": "2024-01-10T13:00:00Z", "end_time": "2024-01-10T14:00:00Z", "value": 500})
	r := e.do("POST", "/costs/interval/"+e.loc, map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"})
	if m := r.Map(t); r.Status != 422 || m["code"] != "no_tariff_connected" {
		t.Fatalf("IMPORT record without an import tariff: %d %s", r.Status, r.Body)
	}
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3})})
	c = e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// LOCAL 0.5 kWh at 0, IMPORT 0.5 kWh at 0.30 = 0.15.
	if !near(c.Tariff.Value, 0.15) || !near(c.Energy.Value, 1000) {
		t.Fatalf("with a tariff: %+v", c)
	}
}

func TestCostOutsideContractIsExtrapolatedWithLowerConfidence(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.2})})
	e.reads(
		// 31 days after the contract ended: priced by it, confidence 0.8.
		map[string]any{"start_time": "2024-02-01T12:00:00Z", "end_time": "2024-02-01T13:00:00Z", "value": 1000, "record_reference_id": "31d"},
		// 200 days after: ⌊200/90⌋ = 2 steps, 0.8 − 0.4 = 0.4.
		map[string]any{"start_time": "2024-07-19T12:00:00Z", "end_time": "2024-07-19T13:00:00Z", "value": 1000, "record_reference_id": "200d"},
	)
	c := e.cost(e.loc, "", "2024-01-15T00:00:00Z", "2024-08-01T00:00:00Z")
	want := map[string]float64{"31d": 0.8, "200d": 0.4}
	for _, it := range c.Data {
		if !near(it.Tariff.Value, 0.2) || !near(it.Tariff.Confidence, want[it.RecordReferenceID]) {
			t.Errorf("%s: %v conf %v, want 0.2 conf %v", it.RecordReferenceID, it.Tariff.Value, it.Tariff.Confidence, want[it.RecordReferenceID])
		}
	}
	if len(c.Data) != 2 || !near(c.Tariff.Confidence, 0.4) {
		t.Errorf("%d items, total confidence %v", len(c.Data), c.Tariff.Confidence)
	}
}

func TestCostSolarSavingsPlusEarnings(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": peakSchedule()})
	e.tariff(map[string]any{"direction": "EXPORT", "schedule": flat(map[string]any{"fixed": 0.15})})
	inverter := e.do("POST", "/devices", map[string]any{"reference_id": "inverter"}).Map(t)["id"].(string)
	e.reads(
		// Supplied to the home by the inverter: device level, EXPORT, priced at the import tariff.
		map[string]any{"device_id": inverter, "direction": "EXPORT", "tariff_rate": "IMPORT",
			"start_time": "2024-06-01T11:00:00Z", "end_time": "2024-06-01T12:00:00Z", "value": 2000},
		map[string]any{"device_id": inverter, "direction": "EXPORT", "tariff_rate": "IMPORT",
			"start_time": "2024-06-01T15:00:00Z", "end_time": "2024-06-01T16:00:00Z", "value": 1000},
		// Exported to the grid: location level, EXPORT, priced at the export tariff.
		map[string]any{"direction": "EXPORT", "start_time": "2024-06-01T12:00:00Z", "end_time": "2024-06-01T13:00:00Z", "value": 3000},
	)
	supplied := e.cost(inverter, "?direction=EXPORT&aggregation=DAY", "2024-06-01T00:00:00Z", "2024-06-02T00:00:00Z")
	exported := e.cost(e.loc, "?direction=EXPORT&aggregation=DAY", "2024-06-01T00:00:00Z", "2024-06-02T00:00:00Z")
	// Supplied: 2 kWh at 12:00–13:00 BST (0.20) = 0.40, 1 kWh at 16:00–17:00 BST (peak 0.40) = 0.40.
	// Exported: 3 kWh × 0.15 = 0.45. Savings plus earnings: 0.80 + 0.45 = 1.25.
	if !near(supplied.Tariff.Value, 0.8) || !near(exported.Tariff.Value, 0.45) || !near(supplied.Tariff.Value+exported.Tariff.Value, 1.25) {
		t.Fatalf("supplied %v, exported %v", supplied.Tariff.Value, exported.Tariff.Value)
	}
	// The location-level IMPORT view sees neither (different direction, device records apart).
	if c := e.cost(e.loc, "", "2024-06-01T00:00:00Z", "2024-06-02T00:00:00Z"); len(c.Data) != 0 {
		t.Errorf("location IMPORT shows %d items, want 0", len(c.Data))
	}
}

func TestCostDeviceAtTwoLocationsIsAmbiguous(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	other := e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	dev := e.do("POST", "/devices", map[string]any{"reference_id": "ev"}).Map(t)["id"].(string)
	e.reads(
		map[string]any{"device_id": dev, "start_time": "2024-01-10T12:00:00Z", "end_time": "2024-01-10T13:00:00Z", "value": 1},
		map[string]any{"device_id": dev, "location_id": other, "start_time": "2024-01-11T12:00:00Z", "end_time": "2024-01-11T13:00:00Z", "value": 1},
	)
	r := e.do("POST", "/costs/interval/"+dev, map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-12T00:00:00Z"})
	if r.Status != 400 || r.Map(t)["code"] != "ambiguous_location" {
		t.Fatalf("device at two locations: %d %s", r.Status, r.Body)
	}
}

func TestCostRequestErrors(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	for _, tc := range []struct {
		path  string
		body  any
		code  string
		param string
	}{
		{"/costs/interval/" + e.loc, map[string]any{"end_time": "2024-01-02T00:00:00Z"}, "parameter_missing", "start_time"},
		{"/costs/interval/" + e.loc, map[string]any{"start_time": "2024-01-02T00:00:00Z", "end_time": "2024-01-01T00:00:00Z"}, "invalid_window", "end_time"},
		{"/costs/interval/" + e.loc, map[string]any{"start_time": "2023-01-01T00:00:00Z", "end_time": "2024-03-01T00:00:00Z"}, "window_too_long", "end_time"},
		{"/costs/interval/" + e.loc + "?direction=SIDEWAYS", map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-02T00:00:00Z"}, "invalid_value", "direction"},
		{"/costs/interval/" + e.loc + "?aggregation=WEEK", map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-02T00:00:00Z"}, "invalid_value", "aggregation"},
		{"/costs/interval/" + e.loc, map[string]any{"start_time": "yesterday", "end_time": "2024-01-02T00:00:00Z"}, "invalid_value", "start_time"},
	} {
		r := e.do("POST", tc.path, tc.body)
		m := r.Map(t)
		if r.Status != 400 || m["code"] != tc.code || m["param"] != tc.param {
			t.Errorf("%s %v: %d %v/%v, want 400 %s/%s", tc.path, tc.body, r.Status, m["code"], m["param"], tc.code, tc.param)
		}
	}
	other := e.api.NewAccount("other")
	r := e.api.Do(apitest.Request{Method: "POST", Path: "/costs/interval/" + e.loc, Auth: other.Test(),
		Body: map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-02T00:00:00Z"}})
	if r.Status != 404 {
		t.Errorf("another account's location: %d", r.Status)
	}
}
