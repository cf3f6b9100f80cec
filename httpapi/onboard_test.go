package httpapi_test

import (
	"context"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
)

// A tariff create is one write: no rate periods are expanded until a query reads them, and
// then only the years it needs (a contract 2020–2030 priced in January 2024 expands the
// years its window and tier lookback touch, not ten).
func TestTariffCreateExpandsNothingQueriesExpandTheirYears(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10, "to_kwh": 1}, map[string]any{"fixed": 0.50})})
	years := func() []uint16 {
		rows, err := e.api.App.DB.Query(context.Background(), chstore.Tool("SELECT DISTINCT year FROM tariff_rate_years WHERE account_id = ? ORDER BY year"), e.acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []uint16
		for rows.Next() {
			var y uint16
			if err := rows.Scan(&y); err != nil {
				t.Fatal(err)
			}
			out = append(out, y)
		}
		return out
	}
	if y := years(); len(y) != 0 {
		t.Fatalf("a create expanded years %v, want none", y)
	}
	// 2 kWh in one reading: 1 kWh at 0.10 + 1 kWh at 0.50 = 0.6 (the tiered JOIN path).
	e.reads(map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 2000})
	if c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z"); !near(c.Tariff.Value, 0.6) {
		t.Fatalf("tiered cost %v, want 0.6", c.Tariff.Value)
	}
	for _, y := range years() {
		if y != 2023 && y != 2024 {
			t.Errorf("pricing January 2024 expanded year %d (years %v)", y, years())
		}
	}
	if len(years()) == 0 {
		t.Error("the tiered query expanded nothing: it read no rate periods")
	}
}

// Tariffs that price alike share their rate periods: a second location with the same
// product adds no rows to tariff_rates, and a different product adds its own.
func TestIdenticalTariffsShareOneExpansion(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	tiered := flat(map[string]any{"fixed": 0.10, "to_kwh": 1}, map[string]any{"fixed": 0.50})
	rows := func() uint64 {
		var n uint64
		if err := e.api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT count() FROM tariff_rates WHERE account_id = ?"), e.acc.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	price := func(loc string, want float64) {
		t.Helper()
		e.reads(map[string]any{"location_id": loc, "start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 2000})
		if c := e.cost(loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z"); !near(c.Tariff.Value, want) {
			t.Fatalf("%s: cost %v, want %v", loc, c.Tariff.Value, want)
		}
	}
	e.tariff(map[string]any{"schedule": tiered})
	price(e.loc, 0.6)
	one := rows()
	if one == 0 {
		t.Fatal("pricing a tiered tariff stored no rate periods")
	}
	first := e.loc
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": tiered, "contract_start_date": "2021-06-01T00:00:00Z"})
	price(e.loc, 0.6)
	if n := rows(); n != one {
		t.Errorf("a second location with the same product: %d rate rows, want still %d", n, one)
	}
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.20, "to_kwh": 1}, map[string]any{"fixed": 0.50})})
	price(e.loc, 0.7)
	if n := rows(); n <= one {
		t.Errorf("a different product: %d rate rows, want more than %d", n, one)
	}
	price(first, 0.6) // the first location's money is unchanged (its reading is sent again: same key)
}
