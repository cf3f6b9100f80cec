package httpapi_test

import (
	"testing"
)

func hourly(from string, n int, wh float64, extra map[string]any) []map[string]any {
	var out []map[string]any
	t0 := mustTime(from)
	for i := 0; i < n; i++ {
		r := map[string]any{"start_time": t0.Add(hoursDur(i)).Format(rfc), "end_time": t0.Add(hoursDur(i + 1)).Format(rfc), "value": wh}
		for k, v := range extra {
			r[k] = v
		}
		out = append(out, r)
	}
	return out
}

// peakSchedule: 16:00–19:00 local at 0.40, otherwise 0.20.
func peakSchedule() []any {
	return []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "00:00:00", "valid_to": "16:00:00", "rate": []any{map[string]any{"fixed": 0.20}}},
		map[string]any{"valid_from": "16:00:00", "valid_to": "19:00:00", "rate": []any{map[string]any{"fixed": 0.40}}},
		map[string]any{"valid_from": "19:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.20}}},
	}}}}}
}

func TestCostLondonSpringForwardDays(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": peakSchedule()})
	e.reads(hourly("2024-03-30T00:00:00Z", 48, 1000, nil)...) // 1 kWh every UTC hour, Mar 30 and 31
	c := e.cost(e.loc, "?aggregation=DAY", "2024-03-30T00:00:00Z", "2024-04-01T00:00:00Z")
	// Mar 30 (GMT, 24 h): peak 16–19Z: 3 × 0.40 + 21 × 0.20 = 5.4.
	// Mar 31 (23 h, 00:00Z–23:00Z): peak 16–19 BST = 15–18Z: 3 × 0.40 + 20 × 0.20 = 5.2.
	// Apr 1 starts 23:00Z; the 23:00Z reading is 00:00–01:00 BST: 0.20.
	want := []struct {
		start, end    string
		energy, money float64
	}{
		{"2024-03-30T00:00:00Z", "2024-03-31T00:00:00Z", 24000, 5.4},
		{"2024-03-31T00:00:00Z", "2024-03-31T23:00:00Z", 23000, 5.2},
		{"2024-03-31T23:00:00Z", "2024-04-01T23:00:00Z", 1000, 0.2},
	}
	checkItems(t, c, len(want), func(i int) (string, string, float64, float64) {
		return want[i].start, want[i].end, want[i].energy, want[i].money
	})
	if !near(c.Tariff.Value, 10.8) || !near(c.Energy.Value, 48000) {
		t.Errorf("totals %v Wh %v, want 48000 Wh 10.8", c.Energy.Value, c.Tariff.Value)
	}
}

func TestCostLondonFallBackDay(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": peakSchedule()})
	// Oct 27 local runs 2024-10-26T23:00Z (00:00 BST) to 2024-10-28T00:00Z (00:00 GMT): 25 h.
	e.reads(hourly("2024-10-26T23:00:00Z", 25, 1000, nil)...)
	c := e.cost(e.loc, "?aggregation=DAY", "2024-10-26T23:00:00Z", "2024-10-28T00:00:00Z")
	// Peak 16–19 GMT = 16–19Z: 3 × 0.40 + 22 × 0.20 = 1.2 + 4.4 = 5.6.
	checkItems(t, c, 1, func(int) (string, string, float64, float64) {
		return "2024-10-26T23:00:00Z", "2024-10-28T00:00:00Z", 25000, 5.6
	})
}

func TestCostReadingAcrossHalfHourPriceChange(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "00:00:00", "valid_to": "12:00:00", "rate": []any{map[string]any{"fixed": 0.10}}},
		map[string]any{"valid_from": "12:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.30}}}}}}}}})
	e.reads(map[string]any{"start_time": "2024-01-10T11:30:00Z", "end_time": "2024-01-10T12:30:00Z", "value": 2000})
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// Half the 2 kWh before noon at 0.10, half after at 0.30: 0.1 + 0.3 = 0.4.
	if len(c.Data) != 1 || !near(c.Data[0].Tariff.Value, 0.4) || !near(c.Data[0].Energy.Value, 2000) {
		t.Fatalf("straddling reading: %+v", c.Data)
	}
}

func TestCostEconomy7OvernightWrap(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "00:30:00", "valid_to": "07:30:00", "rate": []any{map[string]any{"fixed": 0.08}}},
		map[string]any{"valid_from": "07:30:00", "valid_to": "00:30:00", "rate": []any{map[string]any{"fixed": 0.30}}}}}}}}})
	e.reads(
		map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "value": 1000, "record_reference_id": "a"},
		map[string]any{"start_time": "2024-01-10T07:00:00Z", "end_time": "2024-01-10T08:00:00Z", "value": 1000, "record_reference_id": "b"},
		map[string]any{"start_time": "2024-01-10T23:30:00Z", "end_time": "2024-01-11T00:30:00Z", "value": 1000, "record_reference_id": "c"},
	)
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// a: 00:00–00:30 day (wrap tail) 0.5 × 0.30 + 00:30–01:00 night 0.5 × 0.08 = 0.15 + 0.04 = 0.19.
	// b: 07:00–07:30 night 0.04 + 07:30–08:00 day 0.15 = 0.19.
	// c: 23:30–00:00 day 0.15 + 00:00–00:30 (next date, wrap tail) day 0.15 = 0.30.
	want := map[string]float64{"a": 0.19, "b": 0.19, "c": 0.30}
	if len(c.Data) != 3 {
		t.Fatalf("items %+v", c.Data)
	}
	for _, it := range c.Data {
		if !near(it.Tariff.Value, want[it.RecordReferenceID]) {
			t.Errorf("record %s: %v, want %v", it.RecordReferenceID, it.Tariff.Value, want[it.RecordReferenceID])
		}
	}
}

func TestCostWeekdayWeekendAndHolidayDate(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	allDay := func(p float64) []any {
		return []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": p}}}}
	}
	e.tariff(map[string]any{"schedule": []any{
		map[string]any{"months": []string{"All"}, "days_and_hours": []any{
			map[string]any{"days": []string{"Weekday"}, "hours": allDay(0.30)},
			map[string]any{"days": []string{"Weekend"}, "hours": allDay(0.15)}}},
		map[string]any{"months": []string{"Dec"}, "dates": []int{25}, "days_and_hours": []any{
			map[string]any{"days": []string{"All"}, "hours": allDay(0.05)}}},
	}})
	e.reads(
		map[string]any{"start_time": "2024-12-20T12:00:00Z", "end_time": "2024-12-20T13:00:00Z", "value": 1000, "record_reference_id": "fri"},
		map[string]any{"start_time": "2024-12-21T12:00:00Z", "end_time": "2024-12-21T13:00:00Z", "value": 1000, "record_reference_id": "sat"},
		map[string]any{"start_time": "2024-12-25T12:00:00Z", "end_time": "2024-12-25T13:00:00Z", "value": 1000, "record_reference_id": "xmas"},
	)
	c := e.cost(e.loc, "", "2024-12-20T00:00:00Z", "2024-12-26T00:00:00Z")
	// Friday weekday 0.30; Saturday weekend 0.15; Wednesday Dec 25: the dates entry wins, 0.05.
	want := map[string]float64{"fri": 0.30, "sat": 0.15, "xmas": 0.05}
	for _, it := range c.Data {
		if !near(it.Tariff.Value, want[it.RecordReferenceID]) {
			t.Errorf("%s: %v, want %v", it.RecordReferenceID, it.Tariff.Value, want[it.RecordReferenceID])
		}
	}
	if len(c.Data) != 3 || !near(c.Tariff.Value, 0.5) {
		t.Errorf("total %v over %d items, want 0.5 over 3", c.Tariff.Value, len(c.Data))
	}
}

func TestCostMonthTierCrossedInsideAReadingCountsEarlierReadings(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10, "to_kwh": 100}, map[string]any{"fixed": 0.20})})
	e.reads(
		// Before the window: 60 kWh on Jan 5, counted towards January's first 100 kWh.
		map[string]any{"start_time": "2024-01-05T00:00:00Z", "end_time": "2024-01-05T01:00:00Z", "value": 60, "units": "KWH"},
		// 80 kWh over two hours on Jan 20: the first 40 kWh fill band 1, the rest go to band 2.
		map[string]any{"start_time": "2024-01-20T10:00:00Z", "end_time": "2024-01-20T12:00:00Z", "value": 80, "units": "KWH", "record_reference_id": "cross"},
		// February starts a new counter: band 1 again.
		map[string]any{"start_time": "2024-02-02T10:00:00Z", "end_time": "2024-02-02T11:00:00Z", "value": 1, "units": "KWH", "record_reference_id": "feb"},
	)
	c := e.cost(e.loc, "", "2024-01-15T00:00:00Z", "2024-02-05T00:00:00Z")
	// cross: 40 kWh × 0.10 + 40 kWh × 0.20 = 4 + 8 = 12. feb: 1 kWh × 0.10 = 0.1.
	want := map[string]float64{"cross": 12, "feb": 0.1}
	if len(c.Data) != 2 {
		t.Fatalf("items %+v", c.Data)
	}
	for _, it := range c.Data {
		if !near(it.Tariff.Value, want[it.RecordReferenceID]) {
			t.Errorf("%s: %v, want %v", it.RecordReferenceID, it.Tariff.Value, want[it.RecordReferenceID])
		}
	}
	day := e.cost(e.loc, "?aggregation=DAY", "2024-01-15T00:00:00Z", "2024-02-05T00:00:00Z")
	if !near(day.Tariff.Value, 12.1) || len(day.Data) != 2 {
		t.Errorf("DAY total %v over %d days, want 12.1 over 2", day.Tariff.Value, len(day.Data))
	}
}

func TestCostMarketTariffWithSurchargesAndNegativePrice(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "Agile-like", "currency_code": "GBP"}).Map(t)["id"].(string)
	r := e.do("PUT", "/markets/"+m+"/prices", []any{
		map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T00:30:00Z", "price": 0.10},
		map[string]any{"start_time": "2024-01-10T00:30:00Z", "end_time": "2024-01-10T01:00:00Z", "price": -0.05},
	})
	if r.Status != 200 {
		t.Fatalf("prices: %d %s", r.Status, r.Body)
	}
	e.tariff(map[string]any{"market_rates": true, "market_id": m, "schedule": flat(map[string]any{"surcharge_fixed": 0.02, "surcharge_percentage": 5})})
	e.reads(
		map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "value": 2000, "record_reference_id": "priced"},
		map[string]any{"start_time": "2024-01-10T01:00:00Z", "end_time": "2024-01-10T01:30:00Z", "value": 1000, "record_reference_id": "no-price"},
	)
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// 1 kWh at (0.10 + 0.02) × 1.05 = 0.126 and 1 kWh at (−0.05 + 0.02) × 1.05 = −0.0315: 0.0945.
	// The 01:00 reading has no market price: 0, confidence 0.
	for _, it := range c.Data {
		switch it.RecordReferenceID {
		case "priced":
			if !near(it.Tariff.Value, 0.0945) || it.Tariff.Confidence != 1 {
				t.Errorf("priced: %v conf %v, want 0.0945 conf 1", it.Tariff.Value, it.Tariff.Confidence)
			}
		case "no-price":
			if it.Tariff.Value != 0 || it.Tariff.Confidence != 0 {
				t.Errorf("no-price: %v conf %v, want 0 conf 0", it.Tariff.Value, it.Tariff.Confidence)
			}
		}
	}
	if len(c.Data) != 2 || c.Tariff.Confidence != 0 {
		t.Errorf("%d items, total confidence %v; want 2 and 0", len(c.Data), c.Tariff.Confidence)
	}
	// A re-sent interval replaces the old price: 0.10 → 0.20 gives (0.20 + 0.02) × 1.05 = 0.231.
	e.do("PUT", "/markets/"+m+"/prices", []any{map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T00:30:00Z", "price": 0.20}})
	c = e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-10T01:00:00Z")
	if len(c.Data) != 1 || !near(c.Data[0].Tariff.Value, 0.231-0.0315) {
		t.Errorf("after replacing a price: %+v, want %v", c.Data, 0.231-0.0315)
	}
}

func TestCostContractSwitchMidWindow(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-15T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.20})})
	e.tariff(map[string]any{"contract_start_date": "2024-01-15T00:00:00Z", "contract_end_date": "2025-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.30})})
	e.reads(
		map[string]any{"start_time": "2024-01-10T12:00:00Z", "end_time": "2024-01-10T13:00:00Z", "value": 1000},
		map[string]any{"start_time": "2024-01-14T23:00:00Z", "end_time": "2024-01-15T01:00:00Z", "value": 2000},
		map[string]any{"start_time": "2024-01-20T12:00:00Z", "end_time": "2024-01-20T13:00:00Z", "value": 1000},
	)
	c := e.cost(e.loc, "?aggregation=DAY", "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z")
	// Jan 10: 0.20. Jan 14 (the straddling reading starts that day): 1 kWh × 0.20 + 1 kWh × 0.30 = 0.5.
	// Jan 20: 0.30. Total 1.0.
	checkItems(t, c, 3, func(i int) (string, string, float64, float64) {
		return []string{"2024-01-10T00:00:00Z", "2024-01-14T00:00:00Z", "2024-01-20T00:00:00Z"}[i],
			[]string{"2024-01-11T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-21T00:00:00Z"}[i],
			[]float64{1000, 2000, 1000}[i], []float64{0.2, 0.5, 0.3}[i]
	})
	if !near(c.Tariff.Value, 1.0) {
		t.Errorf("total %v, want 1.0", c.Tariff.Value)
	}
}

func TestCostImportWithNonCommodity(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.20})})
	e.tariff(map[string]any{"type": "NON_COMMODITY", "schedule": flat(map[string]any{"fixed": 0.05})})
	e.reads(map[string]any{"start_time": "2024-01-10T12:00:00Z", "end_time": "2024-01-10T13:00:00Z", "value": 2000})
	c := e.cost(e.loc, "?include_tariff=true", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// 2 kWh × (0.20 + 0.05) = 0.5: commodity 0.4, non-commodity 0.1, rate 0.25 per kWh.
	if !near(c.Tariff.Value, 0.5) || !near(c.Tariff.Components.Commodity, 0.4) || !near(c.Tariff.Components.NonCommodity, 0.1) || !near(c.Tariff.Rate, 0.25) {
		t.Fatalf("tariff %+v", c.Tariff)
	}
}

func TestCostNewYorkMonthlyBuckets(t *testing.T) {
	e := newCostEnv(t, "America/New_York")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.15})})
	e.reads(
		// 22:00–23:00 EST on Jan 31: January locally although February in UTC.
		map[string]any{"start_time": "2024-02-01T03:00:00Z", "end_time": "2024-02-01T04:00:00Z", "value": 1000},
		// 00:00–01:00 EST on Feb 1.
		map[string]any{"start_time": "2024-02-01T05:00:00Z", "end_time": "2024-02-01T06:00:00Z", "value": 2000},
	)
	c := e.cost(e.loc, "?aggregation=MONTH", "2024-01-15T00:00:00Z", "2024-02-15T00:00:00Z")
	// January: 1 kWh × 0.15; February: 2 kWh × 0.15 = 0.30. Months start at local midnight (05:00Z).
	checkItems(t, c, 2, func(i int) (string, string, float64, float64) {
		return []string{"2024-01-01T05:00:00Z", "2024-02-01T05:00:00Z"}[i], []string{"2024-02-01T05:00:00Z", "2024-03-01T05:00:00Z"}[i],
			[]float64{1000, 2000}[i], []float64{0.15, 0.30}[i]
	})
	if c.LocationTimezone != "America/New_York" {
		t.Errorf("location_timezone %q", c.LocationTimezone)
	}
}

func checkItems(t *testing.T, c costBody, n int, want func(i int) (string, string, float64, float64)) {
	t.Helper()
	if len(c.Data) != n {
		t.Fatalf("%d items, want %d: %+v", len(c.Data), n, c.Data)
	}
	for i, it := range c.Data {
		s, en, wh, money := want(i)
		if it.StartTime != s || it.EndTime != en || !near(it.Energy.Value, wh) || !near(it.Tariff.Value, money) {
			t.Errorf("item %d: %s–%s %v Wh %v; want %s–%s %v Wh %v", i, it.StartTime, it.EndTime, it.Energy.Value, it.Tariff.Value, s, en, wh, money)
		}
	}
}

// A market with no price at all in the window prices nothing: money 0 with confidence 0,
// the same on every path (the array path once answered confidence 1 here).
func TestCostMarketWithoutAnyPriceIsUnpriced(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "silent", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"market_rates": true, "market_id": m, "schedule": flat(map[string]any{"surcharge_fixed": 0.02})})
	e.reads(map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "value": 2000})
	for _, q := range []string{"", "?aggregation=DAY"} {
		c := e.cost(e.loc, q, "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
		if len(c.Data) != 1 || c.Data[0].Tariff.Value != 0 || c.Data[0].Tariff.Confidence != 0 || c.Tariff.Confidence != 0 {
			t.Errorf("%q: %+v total %+v, want one item of 0 with confidence 0", q, c.Data, c.Tariff)
		}
	}
}
