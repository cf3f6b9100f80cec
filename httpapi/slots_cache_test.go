package httpapi_test

import (
	"testing"
	"time"
)

// Timelines are reused between requests; every kind of price write must show at once,
// also one made while Redis (which holds the pricing epoch) was down.
func TestRatesFollowEveryPriceWrite(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "day-ahead", "currency_code": "GBP"}).Map(t)["id"].(string)
	price := func(at string, p float64) {
		t.Helper()
		s := mustTime(at)
		if r := e.do("PUT", "/markets/"+m+"/prices", []any{map[string]any{"start_time": s.Format(rfc),
			"end_time": s.Add(30 * time.Minute).Format(rfc), "price": p}}); r.Status != 200 {
			t.Fatalf("prices: %d %s", r.Status, r.Body)
		}
	}
	rateAt := func(window string) float64 {
		t.Helper()
		r := e.do("GET", "/tariffs/rates/"+e.loc+"?"+window, nil)
		var b struct {
			Data []struct {
				Tariff struct{ Rate float64 } `json:"tariff"`
			} `json:"data"`
		}
		r.JSON(t, &b)
		if r.Status != 200 || len(b.Data) != 1 {
			t.Fatalf("rates %s: %d %s", window, r.Status, r.Body)
		}
		return b.Data[0].Tariff.Rate
	}
	const slot = "start_time=2024-01-10T12:00:00Z&end_time=2024-01-10T12:30:00Z"
	// A later window of the same day, read from the same reusable span.
	const sameDay = "start_time=2024-01-10T12:00:00Z&end_time=2024-01-10T12:15:00Z"
	price("2024-01-10T12:00:00Z", 0.10)
	e.tariff(map[string]any{"market_rates": true, "market_id": m})
	if got := rateAt(slot); !near(got, 0.10) {
		t.Fatalf("first read %v, want 0.10", got)
	}
	price("2024-01-10T12:00:00Z", -0.05)
	if got := rateAt(sameDay); !near(got, -0.05) {
		t.Errorf("after a price re-sent: %v, want -0.05", got)
	}
	e.reads(map[string]any{"start_time": "2024-01-10T12:00:00Z", "end_time": "2024-01-10T12:30:00Z", "value": 1, "units": "KWH"})
	costOf := func() float64 {
		return e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z").Tariff.Value
	}
	if got := costOf(); !near(got, -0.05) {
		t.Errorf("cost before a non-commodity tariff: %v, want 1 kWh × -0.05", got)
	}
	nc := e.tariff(map[string]any{"type": "NON_COMMODITY", "schedule": flat(map[string]any{"fixed": 0.02})})
	if got := rateAt(slot); !near(got, -0.03) {
		t.Errorf("after a non-commodity tariff: %v, want -0.05 + 0.02 = -0.03", got)
	}
	if got := costOf(); !near(got, -0.03) {
		t.Errorf("cost after a non-commodity tariff: %v, want 1 kWh × (-0.05 + 0.02)", got)
	}
	if r := e.do("DELETE", "/tariffs/elements/"+nc, nil); r.Status != 202 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if got := rateAt(slot); !near(got, -0.05) {
		t.Errorf("after its delete: %v, want -0.05", got)
	}
	e.api.Redis.Down()
	price("2024-01-10T12:00:00Z", 0.20)
	if got := rateAt(slot); !near(got, 0.20) {
		t.Errorf("Redis down, after a price write: %v, want 0.20", got)
	}
	e.api.Redis.Up()
	time.Sleep(2500 * time.Millisecond) // past the circuit breaker's pause
	if got := rateAt(slot); !near(got, 0.20) {
		t.Errorf("Redis back: %v, want 0.20 (the write made while it was down)", got)
	}
	if got := rateAt(sameDay); !near(got, 0.20) {
		t.Errorf("Redis back, reused span: %v, want 0.20", got)
	}
}
