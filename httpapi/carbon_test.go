package httpapi_test

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// carbonEnv is a GB location with a flat 0.20 tariff and a default GB carbon series.
func carbonEnv(t *testing.T) (*costEnv, string) {
	e := newCostEnv(t, "Europe/London")
	e.loc = e.do("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.20})})
	e.tariff(map[string]any{"direction": "EXPORT", "schedule": flat(map[string]any{"fixed": 0.05})})
	r := e.do("POST", "/carbon/series", map[string]any{"display_name": "GB grid", "country_code": "GB", "default": true})
	if r.Status != 200 {
		t.Fatalf("create series: %d %s", r.Status, r.Body)
	}
	return e, r.Map(t)["id"].(string)
}

func (e *costEnv) intensities(series string, ivs ...any) {
	e.t.Helper()
	if r := e.do("PUT", "/carbon/series/"+series+"/intensities", ivs); r.Status != 200 {
		e.t.Fatalf("intensities: %d %s", r.Status, r.Body)
	}
}

func iv(start, end string, g float64) map[string]any {
	return map[string]any{"start_time": start, "end_time": end, "intensity": g}
}

// carbonOf reads {value, confidence} of a carbon object.
func carbonOf(t *testing.T, obj any) string {
	t.Helper()
	m, ok := obj.(map[string]any)["carbon"].(map[string]any)
	if !ok {
		t.Fatalf("no carbon object in %v", obj)
	}
	return fmt.Sprintf("%gg~%g", m["value"], m["confidence"])
}

func TestCarbonOfCostsHandComputed(t *testing.T) {
	e, series := carbonEnv(t)
	e.intensities(series,
		iv("2024-01-10T09:30:00Z", "2024-01-10T10:00:00Z", 300),
		iv("2024-01-10T10:00:00Z", "2024-01-10T10:30:00Z", 200),
		iv("2024-01-10T10:30:00Z", "2024-01-10T11:00:00Z", 100),
		// 11:00–11:30 unknown
		iv("2024-01-10T11:30:00Z", "2024-01-10T12:00:00Z", 50))
	e.reads(
		// 1 kWh over 09:45–10:15: 0.5 kWh at 300 + 0.5 kWh at 200 = 250 g.
		map[string]any{"start_time": "2024-01-10T09:45:00Z", "end_time": "2024-01-10T10:15:00Z", "value": 1000, "record_reference_id": "straddle"},
		// 2 kWh over 10:30–11:30: 1 kWh at 100, 1 kWh unknown: 100 g, confidence 0.
		map[string]any{"start_time": "2024-01-10T10:30:00Z", "end_time": "2024-01-10T11:30:00Z", "value": 2000, "record_reference_id": "gap"},
		// LOCAL energy draws nothing from the grid: 0 g, confidence 1.
		map[string]any{"start_time": "2024-01-10T11:30:00Z", "end_time": "2024-01-10T12:00:00Z", "value": 500, "tariff_rate": "LOCAL"},
		// Exported 1 kWh over 11:30–12:00 at 50: 50 g (priced with the EXPORT records).
		map[string]any{"start_time": "2024-01-10T11:30:00Z", "end_time": "2024-01-10T12:00:00Z", "value": 1000, "direction": "EXPORT"},
	)
	w := map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}
	r := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true", w)
	m := r.Map(t)
	if r.Status != 200 || m["carbon_units"] != "gCO2eq" {
		t.Fatalf("cost with carbon: %d %s", r.Status, r.Body)
	}
	var got []string
	for _, it := range m["data"].([]any) {
		got = append(got, carbonOf(t, it))
	}
	if fmt.Sprint(got) != "[250g~1 100g~0 0g~1]" {
		t.Errorf("record carbon %v, want [250g~1 100g~0 0g~1]", got)
	}
	if got := carbonOf(t, m); got != "350g~0" {
		t.Errorf("total carbon %s, want 350g~0", got)
	}
	// Money is unchanged by include_carbon: 3.5 kWh at 0.20 (LOCAL at 0) = 0.6.
	if v := m["tariff"].(map[string]any)["value"].(float64); !near(v, 0.6) {
		t.Errorf("money with carbon %v, want 0.6", v)
	}
	day := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true&aggregation=DAY", w).Map(t)
	if got := carbonOf(t, day["data"].([]any)[0]); got != "350g~0" {
		t.Errorf("DAY carbon %s, want 350g~0", got)
	}
	exp := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true&direction=EXPORT", w).Map(t)
	if got := carbonOf(t, exp); got != "50g~1" {
		t.Errorf("EXPORT carbon %s, want 50g~1", got)
	}
	// Without include_carbon nothing is added.
	if plain := e.do("POST", "/costs/interval/"+e.loc, w).Map(t); plain["carbon"] != nil || plain["carbon_units"] != nil {
		t.Errorf("carbon without include_carbon: %v", plain)
	}
}

// On London's fall-back day (25 h) a DAY bucket holds every hour's carbon, the repeated
// hour twice; MONTH folds the days.
func TestCarbonAcrossTheFallBackDay(t *testing.T) {
	e, series := carbonEnv(t)
	london, _ := time.LoadLocation("Europe/London")
	start := time.Date(2024, 10, 27, 0, 0, 0, 0, london)
	var ivs, recs []any
	for h := 0; h < 25; h++ { // 25 hours of 1 kWh at 100 + h g/kWh: Σ = 25 × 100 + 300 = 2,800 g
		s, en := start.Add(time.Duration(h)*time.Hour).UTC().Format(time.RFC3339), start.Add(time.Duration(h+1)*time.Hour).UTC().Format(time.RFC3339)
		ivs = append(ivs, iv(s, en, float64(100+h)))
		recs = append(recs, map[string]any{"start_time": s, "end_time": en, "value": 1000})
	}
	e.intensities(series, ivs...)
	for _, r := range recs {
		e.reads(r.(map[string]any))
	}
	w := map[string]any{"start_time": "2024-10-01T00:00:00Z", "end_time": "2024-11-01T00:00:00Z"}
	day := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true&aggregation=DAY", w).Map(t)
	items := day["data"].([]any)
	if len(items) != 1 || carbonOf(t, items[0]) != "2800g~1" || items[0].(map[string]any)["start_time"] != "2024-10-26T23:00:00Z" {
		t.Errorf("fall-back DAY: %v, want one day from 2024-10-26T23:00Z with 2800g~1", items)
	}
	month := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true&aggregation=MONTH", w).Map(t)
	if got := carbonOf(t, month["data"].([]any)[0]); got != "2800g~1" {
		t.Errorf("MONTH carbon %s, want 2800g~1", got)
	}
}

func TestCarbonOfRatesInstantAndSession(t *testing.T) {
	e, series := carbonEnv(t)
	e.intensities(series, iv("2024-01-10T00:00:00Z", "2024-01-10T12:00:00Z", 300), iv("2024-01-10T12:00:00Z", "2024-01-10T18:00:00Z", 100))
	// The flat tariff is one period; with carbon it is cut at 12:00 and at 18:00 (after
	// which no intensity is known).
	r := e.do("GET", "/tariffs/rates/"+e.loc+"?include_carbon=true&start_time=2024-01-10T00:00:00Z&end_time=2024-01-11T00:00:00Z", nil)
	m := r.Map(t)
	if r.Status != 200 || m["carbon_units"] != "gCO2eq" || m["request"].(map[string]any)["include_carbon"] != true {
		t.Fatalf("rates with carbon: %d %s", r.Status, r.Body)
	}
	var got []string
	for _, it := range m["data"].([]any) {
		c := it.(map[string]any)["carbon"].(map[string]any)
		got = append(got, fmt.Sprintf("%s-%s:%g/%g~%g", it.(map[string]any)["valid_from"].(string)[11:16], it.(map[string]any)["valid_to"].(string)[11:16],
			c["intensity"], c["relative"], c["confidence"]))
	}
	if want := "[00:00-12:00:300/1~1 12:00-18:00:100/0~1 18:00-00:00:0/0~0]"; fmt.Sprint(got) != want {
		t.Errorf("rates carbon %v, want %s", got, want)
	}
	// Instant: 2 kWh over 11:00–13:00 = 1 kWh at 300 + 1 kWh at 100 = 400 g.
	rec := map[string]any{"location_id": e.loc, "start_time": "2024-01-10T11:00:00Z", "end_time": "2024-01-10T13:00:00Z",
		"units": "KWH", "value": 2, "session_reference_id": "S1"}
	in := e.do("POST", "/costs/instant?include_carbon=true", rec).Map(t)
	if got := carbonOf(t, in["data"]); got != "400g~1" || in["carbon_units"] != "gCO2eq" {
		t.Errorf("instant carbon %s (%v), want 400g~1", got, in["carbon_units"])
	}
	// The instant record was stored: its session prices the same.
	s := e.do("POST", "/costs/session/S1?include_carbon=true", nil).Map(t)
	if got := carbonOf(t, s); got != "400g~1" || math.Abs(s["tariff"].(map[string]any)["value"].(float64)-0.4) > 1e-9 {
		t.Errorf("session carbon %s money %v, want 400g~1 and 0.4", got, s["tariff"])
	}
}

func TestCarbonWithoutSeriesAndBadInput(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.20})})
	e.reads(map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:30:00Z", "value": 1000})
	// No series for the location: every figure is 0 with confidence 0, money unchanged.
	m := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true", map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}).Map(t)
	if got := carbonOf(t, m); got != "0g~0" || !near(m["tariff"].(map[string]any)["value"].(float64), 0.2) {
		t.Errorf("no series: carbon %s, money %v", got, m["tariff"])
	}
	if r := e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=maybe", map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}); r.Status != 400 || r.Map(t)["param"] != "include_carbon" {
		t.Errorf("include_carbon=maybe: %d %s", r.Status, r.Body)
	}
	series := e.do("POST", "/carbon/series", map[string]any{"display_name": "x", "country_code": "GB"}).Map(t)["id"].(string)
	for _, tc := range []struct {
		body        any
		code, param string
	}{
		{[]any{iv("2024-01-10T00:00:00Z", "2024-01-10T01:00:00Z", -1)}, "invalid_number", "[0].intensity"},
		{[]any{iv("2024-01-10T01:00:00Z", "2024-01-10T00:00:00Z", 1)}, "invalid_interval", "[0].end_time"},
		{[]any{iv("2024-01-10T00:00:00Z", "2024-01-10T02:00:00Z", 1), iv("2024-01-10T01:00:00Z", "2024-01-10T03:00:00Z", 1)}, "overlapping_intensities", "[1].start_time"},
		{[]any{map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z"}}, "parameter_missing", "[0].intensity"},
	} {
		r := e.do("PUT", "/carbon/series/"+series+"/intensities", tc.body)
		if got := r.Map(t); r.Status != 400 || got["code"] != tc.code || got["param"] != tc.param {
			t.Errorf("%v: %d %v/%v, want 400 %s/%s", tc.body, r.Status, got["code"], got["param"], tc.code, tc.param)
		}
	}
	if r := e.do("POST", "/carbon/series", map[string]any{"display_name": "x", "country_code": "XX"}); r.Status != 400 || r.Map(t)["param"] != "country_code" {
		t.Errorf("bad country: %d %s", r.Status, r.Body)
	}
	if r := e.do("GET", "/carbon/series/cis_000000000000000000000000", nil); r.Status != 404 {
		t.Errorf("unknown series: %d", r.Status)
	}
}

// A location may name its own series instead of its country's default; "" goes back.
func TestCarbonSeriesNamedByTheLocation(t *testing.T) {
	e, def := carbonEnv(t)
	own := e.do("POST", "/carbon/series", map[string]any{"display_name": "on-site PPA", "country_code": "GB"}).Map(t)["id"].(string)
	e.intensities(def, iv("2024-01-10T10:00:00Z", "2024-01-10T11:00:00Z", 200))
	e.intensities(own, iv("2024-01-10T10:00:00Z", "2024-01-10T11:00:00Z", 20))
	e.reads(map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 1000})
	grams := func() string {
		return carbonOf(t, e.do("POST", "/costs/interval/"+e.loc+"?include_carbon=true",
			map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}).Map(t))
	}
	if got := grams(); got != "200g~1" {
		t.Fatalf("with the country's default: %s, want 200g~1", got)
	}
	if r := e.do("PATCH", "/locations/"+e.loc, map[string]any{"carbon_series_id": own}); r.Status != 200 || r.Map(t)["carbon_series_id"] != own {
		t.Fatalf("naming a series: %d %s", r.Status, r.Body)
	}
	if got := grams(); got != "20g~1" {
		t.Errorf("with the location's own series: %s, want 20g~1", got)
	}
	if r := e.do("PATCH", "/locations/"+e.loc, map[string]any{"carbon_series_id": "cis_000000000000000000000000"}); r.Status != 400 || r.Map(t)["param"] != "carbon_series_id" {
		t.Errorf("an unknown series: %d %s, want 400 carbon_series_id", r.Status, r.Body)
	}
	e.do("PATCH", "/locations/"+e.loc, map[string]any{"carbon_series_id": ""})
	if got := grams(); got != "200g~1" {
		t.Errorf("after clearing: %s, want the default's 200g~1", got)
	}
}
