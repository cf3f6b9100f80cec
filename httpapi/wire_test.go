package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
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

// Strings that are not valid UTF-8 are refused: the whole body of a metadata write (400),
// one record of a meter push (a failed record); neither is stored.
func TestInvalidUTF8IsRefusedNeverStored(t *testing.T) {
	e := newMeterEnv(t)
	r := e.api.Do(apitest.Request{Method: "POST", Path: "/customers", Auth: e.acc.Test(),
		Body: []byte(`{"reference_id":"bad-` + "\xff" + `"}`)})
	if r.Status != 400 || r.Map(t)["code"] != "invalid_utf8" {
		t.Errorf("customer with invalid UTF-8: %d %s, want 400 invalid_utf8", r.Status, r.Body)
	}
	if list := e.api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: e.acc.Test()}).Map(t); len(list["data"].([]any)) != 0 {
		t.Errorf("a refused customer was stored: %v", list["data"])
	}
	good := `{"location_id":"` + e.loc + `","units":"WH","value":5,"start_time":"2024-01-02T10:00:00Z","end_time":"2024-01-02T10:30:00Z"}`
	bad := `{"location_id":"` + e.loc + `","units":"WH","value":7,"start_time":"2024-01-02T11:00:00Z","end_time":"2024-01-02T11:30:00Z","session_reference_id":"s` + "\xc3\x28" + `"}`
	r = e.put(t, []byte("["+good+","+bad+"]"), nil)
	var b batchBody
	r.JSON(t, &b)
	if r.Status != 200 || b.RecordsAccepted != 1 || len(b.FailedRecords) != 1 || b.FailedRecords[0].RecordNum != 1 ||
		!strings.Contains(b.FailedRecords[0].Error, "UTF-8") {
		t.Fatalf("push with an invalid UTF-8 record: %d %s", r.Status, r.Body)
	}
	if n, wh := e.stored(t); n != 1 || wh != 5 {
		t.Errorf("stored %d records, %g Wh; want only the valid one (1, 5 Wh)", n, wh)
	}
}

// A tariff with market_rates and no market_id follows the account's default market of the
// location's country; a newer default replaces the older; none at all: 400.
func TestMarketTariffWithoutMarketIDFollowsTheCountryDefault(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	gb := e.do("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	body := map[string]any{"location_id": gb, "direction": "IMPORT", "type": "COMMODITY", "market_rates": true,
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z"}
	if r := e.do("POST", "/tariffs/elements", body); r.Status != 400 || r.Map(t)["code"] != "no_default_market" {
		t.Fatalf("no default market: %d %s, want 400 no_default_market", r.Status, r.Body)
	}
	// A default of another country does not count; a default without a country is refused.
	e.do("POST", "/markets", map[string]any{"display_name": "DE day-ahead", "currency_code": "EUR", "country_code": "DE", "default": true})
	if r := e.do("POST", "/markets", map[string]any{"display_name": "x", "currency_code": "GBP", "default": true}); r.Status != 400 || r.Map(t)["param"] != "country_code" {
		t.Errorf("default without country: %d %s", r.Status, r.Body)
	}
	if r := e.do("POST", "/tariffs/elements", body); r.Status != 400 {
		t.Fatalf("only a DE default: %d %s, want 400", r.Status, r.Body)
	}
	first := e.do("POST", "/markets", map[string]any{"display_name": "GB 1", "currency_code": "GBP", "country_code": "GB", "default": true}).Map(t)["id"].(string)
	second := e.do("POST", "/markets", map[string]any{"display_name": "GB 2", "currency_code": "GBP", "country_code": "GB", "default": true}).Map(t)["id"].(string)
	if m := e.do("GET", "/markets/"+first, nil).Map(t); m["default"] != false {
		t.Errorf("the earlier GB default is still default: %v", m)
	}
	e.do("PUT", "/markets/"+second+"/prices", []any{map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "price": 0.2}})
	r := e.do("POST", "/tariffs/elements", body)
	if r.Status != 200 || r.Map(t)["market_id"] != second {
		t.Fatalf("tariff without market_id: %d %s, want market_id %s", r.Status, r.Body, second)
	}
	// It prices with the default market's prices: 2 kWh × 0.2 = 0.4.
	e.loc = gb
	e.reads(map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T01:00:00Z", "value": 2000})
	if c := e.cost(gb, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z"); !near(c.Tariff.Value, 0.4) {
		t.Errorf("cost through the default market: %v, want 0.4", c.Tariff.Value)
	}
}
