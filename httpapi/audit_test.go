package httpapi_test

import (
	"encoding/json"
	"testing"
)

// auditOf returns the audit's items as compact JSON lines: valid_from–valid_to and the
// tariff_rate, its tariff ids replaced by names.
func (e *costEnv) auditOf(window string, names map[string]string) []string {
	e.t.Helper()
	r := e.do("GET", "/tariffs/audit/"+e.loc+"?"+window, nil)
	if r.Status != 200 {
		e.t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	var body struct {
		Object string `json:"object"`
		Data   []struct {
			ValidFrom  string         `json:"valid_from"`
			ValidTo    string         `json:"valid_to"`
			TariffRate map[string]any `json:"tariff_rate"`
		} `json:"data"`
	}
	r.JSON(e.t, &body)
	if body.Object != "tariff_rate_audit" {
		e.t.Fatalf("object %q", body.Object)
	}
	var out []string
	for _, d := range body.Data {
		for _, comp := range []string{"commodity", "non_commodity"} {
			if c, ok := d.TariffRate[comp].(map[string]any); ok {
				c["tariff_id"] = names[c["tariff_id"].(string)]
			}
		}
		b, _ := json.Marshal(d.TariffRate)
		out = append(out, d.ValidFrom[11:16]+"-"+d.ValidTo[11:16]+" "+string(b))
	}
	return out
}

func checkAudit(t *testing.T, name string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d items, want %d:\n%v", name, len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s item %d:\n got %s\nwant %s", name, i, got[i], want[i])
		}
	}
}

func (e *costEnv) newLocation() {
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(e.t)["id"].(string)
}

const auditDay = "start_time=2024-01-10T00:00:00Z&end_time=2024-01-11T00:00:00Z"

// Hand-computed explanations (London is UTC in January).
func TestTariffAuditExplainsEveryRate(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	const inContract = `"confidence":1,"confidence_rule":"1: inside the contract","contract":"in_contract"`

	// A day rate 07:00–23:00 and a night rate 23:00–07:00 that wraps midnight: the night
	// is the entry's second hours item on both sides of the day.
	tou := e.tariff(map[string]any{"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{
		"days": []string{"All"}, "hours": []any{
			map[string]any{"valid_from": "07:00:00", "valid_to": "23:00:00", "rate": []any{map[string]any{"fixed": 0.30}}},
			map[string]any{"valid_from": "23:00:00", "valid_to": "07:00:00", "rate": []any{map[string]any{"fixed": 0.10}}}}}}}}})
	night := `{"commodity":{"aggregate":0.1,` + inContract + `,"entry":"schedule[0].days_and_hours[0].hours[1]","fixed":0.1,"tariff_id":"tou","tier":0},"confidence":1,"total":0.1}`
	checkAudit(t, "wrap-around", e.auditOf(auditDay, map[string]string{tou: "tou"}), []string{
		"00:00-07:00 " + night,
		"07:00-23:00 " + `{"commodity":{"aggregate":0.3,` + inContract + `,"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.3,"tariff_id":"tou","tier":0},"confidence":1,"total":0.3}`,
		"23:00-00:00 " + night,
	})

	// A tiered network charge beside it: the timeline prices the first band (tier 0 at
	// 0.05); the bands are listed. Total 0.10 + 0.05 at night.
	e.newLocation()
	tou = e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10})})
	tiered := e.tariff(map[string]any{"type": "NON_COMMODITY", "schedule": flat(map[string]any{"fixed": 0.05, "to_kwh": 100},
		map[string]any{"fixed": 0.02, "to_kwh": nil})})
	checkAudit(t, "tiered", e.auditOf(auditDay, map[string]string{tou: "flat", tiered: "net"}), []string{
		"00:00-00:00 " + `{"commodity":{"aggregate":0.1,` + inContract + `,"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.1,"tariff_id":"flat","tier":0},` +
			`"confidence":1,"non_commodity":{"aggregate":0.05,"bands":[{"fixed":0.05,"from_kwh":0,"to_kwh":100},{"fixed":0.02,"from_kwh":100,"to_kwh":null}],` +
			inContract + `,"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.05,"tariff_id":"net","tier":0},"total":0.15}`,
	})

	// A market tariff with surcharges: (market + 0.02) × 1.05; 11:00–11:30 has no market
	// price: 0 with confidence 0.
	e.newLocation()
	m := e.do("POST", "/markets", map[string]any{"display_name": "day-ahead", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.do("PUT", "/markets/"+m+"/prices", []any{
		map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:30:00Z", "price": 0.10},
		map[string]any{"start_time": "2024-01-10T10:30:00Z", "end_time": "2024-01-10T11:00:00Z", "price": 0.20}})
	mt := e.tariff(map[string]any{"market_rates": true, "market_id": m,
		"schedule": flat(map[string]any{"surcharge_fixed": 0.02, "surcharge_percentage": 5})})
	market := func(price, agg string) string {
		return `{"commodity":{"aggregate":` + agg + `,` + inContract + `,"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.02,"market":` + price +
			`,"market_id":"` + m + `","percentage":5,"tariff_id":"market","tier":0},"confidence":1,"total":` + agg + `}`
	}
	checkAudit(t, "market", e.auditOf("start_time=2024-01-10T10:00:00Z&end_time=2024-01-10T11:30:00Z", map[string]string{mt: "market"}), []string{
		"10:00-10:30 " + market("0.1", "0.126"), // (0.10 + 0.02) × 1.05
		"10:30-11:00 " + market("0.2", "0.231"), // (0.20 + 0.02) × 1.05
		"11:00-11:30 " + `{"commodity":{"aggregate":0,"confidence":0,"confidence_rule":"0: no market price for this time","contract":"in_contract",` +
			`"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.02,"market_id":"` + m + `","market_price_missing":true,"percentage":5,"tariff_id":"market","tier":0},"confidence":0,"total":0}`,
	})

	// A contract that ended on 2024-01-01: 2024-04-15 is 105 days on, ⌊105 / 90⌋ = 1 step:
	// confidence 0.8 − 0.2 = 0.6.
	e.newLocation()
	old := e.tariff(map[string]any{"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-01T00:00:00Z",
		"schedule": flat(map[string]any{"fixed": 0.25})})
	checkAudit(t, "extrapolated", e.auditOf("start_time=2024-04-15T00:00:00Z&end_time=2024-04-15T01:00:00Z", map[string]string{old: "old"}), []string{
		"00:00-01:00 " + `{"commodity":{"aggregate":0.25,"confidence":0.6,"confidence_rule":"max(0.2, 0.8 − 0.2 × ⌊d / 90 days⌋), d the distance to the contract",` +
			`"contract":"extrapolated","contract_distance_days":105,"entry":"schedule[0].days_and_hours[0].hours[0]","fixed":0.25,"tariff_id":"old","tier":0},"confidence":0.6,"total":0.25}`,
	})
}
