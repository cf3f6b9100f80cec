package httpapi_test

import (
	"testing"
	"time"
)

func TestCostDayTierResetsEachLocalDay(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"tier_period": "DAY", "schedule": flat(map[string]any{"fixed": 0.10, "to_kwh": 1}, map[string]any{"fixed": 0.50})})
	e.reads(
		map[string]any{"start_time": "2024-06-10T10:00:00Z", "end_time": "2024-06-10T11:00:00Z", "value": 2, "units": "KWH"},
		map[string]any{"start_time": "2024-06-11T10:00:00Z", "end_time": "2024-06-11T11:00:00Z", "value": 2, "units": "KWH"},
	)
	// Each local day: 1 kWh × 0.10 + 1 kWh × 0.50 = 0.60; two days 1.20.
	c := e.cost(e.loc, "?aggregation=DAY", "2024-06-10T00:00:00Z", "2024-06-12T00:00:00Z")
	// BST: local days start at 23:00Z the day before.
	checkItems(t, c, 2, func(i int) (string, string, float64, float64) {
		return []string{"2024-06-09T23:00:00Z", "2024-06-10T23:00:00Z"}[i], []string{"2024-06-10T23:00:00Z", "2024-06-11T23:00:00Z"}[i], 2000, 0.6
	})
}

func TestMarketTariffWithoutCurrentPriceShowsError(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "m", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"market_rates": true, "market_id": m})
	st := e.do("GET", "/locations/"+e.loc, nil).Map(t)["tariff_status"].(map[string]any)
	if st["commodity_import"] != "ERROR" {
		t.Fatalf("market without a price now: %v, want ERROR", st["commodity_import"])
	}
	now := time.Now().UTC().Truncate(time.Hour)
	e.do("PUT", "/markets/"+m+"/prices", []any{map[string]any{"start_time": now.Format(rfc), "end_time": now.Add(2 * time.Hour).Format(rfc), "price": 0.2}})
	if st := e.do("GET", "/locations/"+e.loc, nil).Map(t)["tariff_status"].(map[string]any); st["commodity_import"] != "CONNECTED" {
		t.Fatalf("market with a price now: %v, want CONNECTED", st["commodity_import"])
	}
}

func TestTariffsAndCostsWorkWithRedisDown(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.api.Redis.Down()
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25})})
	e.reads(map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 2000})
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// 2 kWh × 0.25 = 0.5.
	if !near(c.Tariff.Value, 0.5) {
		t.Fatalf("cost with Redis down: %v", c.Tariff.Value)
	}
}

// TestCostLongMarketTimelinePricesLikeAShortOne covers both ways a cost is priced:
// a window whose price segments fit in the query as arrays (the common case), and one
// whose segments do not (a long series of 5-minute market prices: the JOIN of
// query/fleet.sql). The same readings must cost the same either way.
func TestCostLongMarketTimelinePricesLikeAShortOne(t *testing.T) {
	e := newCostEnv(t, "Europe/London") // GMT all of March 1–16
	m := e.do("POST", "/markets", map[string]any{"display_name": "5-minute", "currency_code": "GBP"}).Map(t)["id"].(string)
	// 16 days of 5-minute prices (4,608 intervals): 0.10, 0.11, … 0.15 and again.
	start := mustTime("2024-03-01T00:00:00Z")
	var prices []any
	for i := 0; i < 16*288; i++ {
		s := start.Add(time.Duration(i) * 5 * time.Minute)
		prices = append(prices, map[string]any{"start_time": s.Format(time.RFC3339), "end_time": s.Add(5 * time.Minute).Format(time.RFC3339),
			"price": 0.10 + 0.01*float64(i%6)})
	}
	if r := e.do("PUT", "/markets/"+m+"/prices", prices); r.Status != 200 {
		t.Fatalf("prices: %d %s", r.Status, r.Body)
	}
	e.tariff(map[string]any{"market_rates": true, "market_id": m, "schedule": flat(map[string]any{})})
	e.reads(
		map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-01T00:30:00Z", "value": 600, "record_reference_id": "early-30"},
		map[string]any{"start_time": "2024-03-01T01:00:00Z", "end_time": "2024-03-01T02:00:00Z", "value": 1200, "record_reference_id": "early-60"},
		map[string]any{"start_time": "2024-03-15T00:00:00Z", "end_time": "2024-03-15T00:30:00Z", "value": 600, "record_reference_id": "late-30"},
		map[string]any{"start_time": "2024-03-15T01:00:00Z", "end_time": "2024-03-15T02:00:00Z", "value": 1200, "record_reference_id": "late-60"},
	)
	// 30 minutes: six 5-minute prices 0.10 … 0.15 (sum 0.75), 100 Wh each: 0.1 × 0.75 = 0.075.
	// 60 minutes: twelve prices (sum 1.50), 100 Wh each: 0.15.
	want := map[string]float64{"early-30": 0.075, "early-60": 0.15, "late-30": 0.075, "late-60": 0.15}
	// The early window needs 16 days of segments (4,608: too many for arrays), the late
	// one 2 days (576).
	for _, w := range [][2]string{{"2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z"}, {"2024-03-15T00:00:00Z", "2024-03-16T00:00:00Z"}} {
		c := e.cost(e.loc, "", w[0], w[1])
		if len(c.Data) != 2 {
			t.Fatalf("%s: %d items, want 2", w[0], len(c.Data))
		}
		for _, it := range c.Data {
			if !near(it.Tariff.Value, want[it.RecordReferenceID]) || it.Tariff.Confidence != 1 {
				t.Errorf("%s: %v confidence %v, want %v confidence 1", it.RecordReferenceID, it.Tariff.Value, it.Tariff.Confidence, want[it.RecordReferenceID])
			}
		}
	}
}
