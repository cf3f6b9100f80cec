package httpapi_test

import (
	"testing"
)

// FlatPeak declares energy.value an integer: it is the exact energy rounded half away from
// zero, value_exact keeps the exact Wh, and money comes from the exact energy.
func TestEnergyValueIsWholeWhMoneyFromExact(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.30})})
	e.reads(
		// 1000 W for one minute = 16.666667 Wh → value 17; money 0.0166667 kWh × 0.30 = 0.005.
		map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:01:00Z", "value": 1000, "units": "W"},
		// 2.5 Wh → value 3 (half away from zero); money 0.00075.
		map[string]any{"start_time": "2024-01-10T11:00:00Z", "end_time": "2024-01-10T11:30:00Z", "value": 2.5},
	)
	r := e.do("POST", "/costs/interval/"+e.loc, map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"})
	m := r.Map(t)
	items := m["data"].([]any)
	if r.Status != 200 || len(items) != 2 {
		t.Fatalf("cost: %d %s", r.Status, r.Body)
	}
	want := []struct{ value, exact, money float64 }{{17, 16.666667, 0.005}, {3, 2.5, 0.00075}}
	for i, it := range items {
		en := it.(map[string]any)["energy"].(map[string]any)
		money := it.(map[string]any)["tariff"].(map[string]any)["value"].(float64)
		if en["value"] != want[i].value || en["value_exact"] != want[i].exact || !near(money, want[i].money) {
			t.Errorf("item %d: energy %v money %v, want %+v", i, en, money, want[i])
		}
	}
	// Totals: 19.166667 Wh → 19; money 0.00575 (not 0.3 × 20 / 1000 = 0.006 from rounded items).
	tot := m["energy"].(map[string]any)
	if tot["value"] != 19.0 || tot["value_exact"] != 19.166667 || !near(m["tariff"].(map[string]any)["value"].(float64), 0.00575) {
		t.Errorf("totals: energy %v tariff %v, want 19 / 19.166667 Wh and 0.00575", tot, m["tariff"])
	}
	// The same holds per DAY bucket.
	day := e.do("POST", "/costs/interval/"+e.loc+"?aggregation=DAY", map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}).Map(t)
	if en := day["data"].([]any)[0].(map[string]any)["energy"].(map[string]any); en["value"] != 19.0 || en["value_exact"] != 19.166667 {
		t.Errorf("DAY bucket energy %v, want 19 / 19.166667", en)
	}
}
