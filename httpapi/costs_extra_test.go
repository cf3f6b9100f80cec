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
