package httpapi_test

import (
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// chargesBody is a cost answer with include_charges, as the bill tests read it.
type chargesBody struct {
	Tariff  struct{ Value float64 }
	Charges billCharges
	Data    []struct {
		StartTime string `json:"start_time"`
		Tariff    struct{ Value float64 }
		Charges   billCharges
	}
}

type billCharges struct {
	Energy, Standing, Demand, Tax, Total float64
}

// newBillEnv is a costEnv whose location is in zone and bills in currency.
func newBillEnv(t *testing.T, zone, currency string) *costEnv {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("bills")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"timezone": zone, "currency_code": currency}}).Map(t)["id"].(string)
	return &costEnv{t: t, api: api, acc: acc, loc: loc}
}

// bill asks POST /costs/interval/{loc}?include_charges=true&… for [start, end).
func (e *costEnv) bill(query, start, end string) chargesBody {
	e.t.Helper()
	r := e.do("POST", "/costs/interval/"+e.loc+"?include_charges=true"+query, map[string]any{"start_time": start, "end_time": end})
	if r.Status != 200 {
		e.t.Fatalf("bill %s: %d %s", query, r.Status, r.Body)
	}
	var b chargesBody
	r.JSON(e.t, &b)
	return b
}

func (b billCharges) check(t *testing.T, what string, want billCharges) {
	t.Helper()
	if !close6(b.Energy, want.Energy) || !close6(b.Standing, want.Standing) || !close6(b.Demand, want.Demand) ||
		!close6(b.Tax, want.Tax) || !close6(b.Total, want.Total) {
		t.Errorf("%s charges %+v, want %+v", what, b, want)
	}
}

// reading is one reading of wh Wh over [start, end).
func reading(start, end string, wh float64) map[string]any {
	return map[string]any{"start_time": start, "end_time": end, "value": wh, "direction": "IMPORT", "tariff_rate": "IMPORT"}
}

// An Ergon-style daily supply charge in Sydney over October 2024, whose 6th has 23 hours:
// 31 charges at 1.10 AUD, one per local day with or without readings, and 10% GST on
// them and on the energy (0.30 AUD/kWh).
func TestBillDailySupplyChargeOverDSTMonth(t *testing.T) {
	e := newBillEnv(t, "Australia/Sydney", "AUD")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 1.1, "tax_percentage": 10})
	e.reads(reading("2024-10-05T00:00:00Z", "2024-10-05T01:00:00Z", 1000), // 5 Oct 10:00 AEST
		reading("2024-10-05T23:00:00Z", "2024-10-06T00:00:00Z", 2000)) // 6 Oct 10:00 AEDT
	const start, end = "2024-09-30T14:00:00Z", "2024-10-31T13:00:00Z" // local October
	b := e.bill("&aggregation=DAY", start, end)
	b.Charges.check(t, "October", billCharges{0.9, 34.1, 0, 3.5, 38.5})
	if len(b.Data) != 2 || b.Data[0].StartTime != "2024-10-04T14:00:00Z" || b.Data[1].StartTime != "2024-10-05T14:00:00Z" {
		t.Fatalf("days %+v", b.Data)
	}
	b.Data[0].Charges.check(t, "5 Oct", billCharges{0.3, 1.1, 0, 0.14, 1.54})
	b.Data[1].Charges.check(t, "6 Oct (23 h)", billCharges{0.6, 1.1, 0, 0.17, 1.87})
	m := e.bill("&aggregation=MONTH", start, end)
	m.Data[0].Charges.check(t, "October item", billCharges{0.9, 34.1, 0, 3.5, 38.5})
	// Without aggregation: the top level only; a window from noon of the 1st counts 30 days.
	raw := e.bill("", "2024-10-01T02:00:00Z", end)
	raw.Charges.check(t, "from noon", billCharges{0.9, 33, 0, 3.39, 37.29})
	if !close6(raw.Charges.Energy, raw.Tariff.Value) {
		t.Errorf("charges.energy %v is not tariff.value %v", raw.Charges.Energy, raw.Tariff.Value)
	}
}

// A US commercial demand charge in New York, June 2024: on-peak (weekdays 12:00–18:00,
// 15-minute intervals) at 15 USD/kW and all hours (60-minute intervals) at 4 USD/kW, over
// energy at 0.10 USD/kWh.
func TestBillDemandChargeOnPeakAndAllHours(t *testing.T) {
	e := newCostEnv(t, "America/New_York")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.1}), "demand_charges": []any{
		map[string]any{"rate_per_kw": 15, "days_and_hours": []any{map[string]any{"days": []string{"Weekday"},
			"hours": []any{map[string]any{"valid_from": "12:00:00", "valid_to": "18:00:00"}}}}},
		map[string]any{"rate_per_kw": 4, "interval_minutes": 60}}})
	// A first version of the 17th's reading (40 kW), replaced below: only the latest counts.
	e.reads(reading("2024-06-18T00:00:00Z", "2024-06-18T01:00:00Z", 40000))
	e.reads(reading("2024-06-04T18:00:00Z", "2024-06-04T19:00:00Z", 9000), // Tue 14:00: 9 kW on peak
		reading("2024-06-08T07:00:00Z", "2024-06-08T07:15:00Z", 5000),  // Sat 03:00: 20 kW, off peak; 5 kW in its hour
		reading("2024-06-04T00:00:00Z", "2024-06-04T01:00:00Z", 14000), // Mon 3rd 20:00: 14 kW, off peak
		reading("2024-06-05T16:00:00Z", "2024-06-05T16:30:00Z", 3000),  // Wed 12:00: 6 kW a quarter
		// Thu 13:50–14:20 straddles three quarters: 14:00–14:15 holds 15 of its 30 minutes,
		// 3 kWh = 12 kW, the on-peak peak.
		reading("2024-06-06T17:50:00Z", "2024-06-06T18:20:00Z", 6000),
		reading("2024-06-18T00:00:00Z", "2024-06-18T01:00:00Z", 16000)) // Mon 17th 20:00: 16 kW, the all-hours peak
	const june, july = "2024-06-01T04:00:00Z", "2024-07-01T04:00:00Z"
	demand := 12*15 + 16*4.0
	m := e.bill("&aggregation=MONTH", june, july)
	m.Charges.check(t, "June", billCharges{5.3, 0, demand, 0, 5.3 + demand})
	m.Data[0].Charges.check(t, "June item", billCharges{5.3, 0, demand, 0, 5.3 + demand})
	// Half the month: the month item still carries the whole month's demand (from every
	// reading of June); the top level counts no month wholly inside the window.
	half := e.bill("&aggregation=MONTH", june, "2024-06-15T04:00:00Z")
	half.Charges.check(t, "1–14 June", billCharges{3.7, 0, 0, 0, 3.7})
	half.Data[0].Charges.check(t, "1–14 June month item", billCharges{3.7, 0, demand, 0, 3.7 + demand})
	d := e.bill("&aggregation=DAY", june, july)
	d.Charges.check(t, "June by day", billCharges{5.3, 0, demand, 0, 5.3 + demand})
	for _, it := range d.Data {
		if it.Charges.Demand != 0 {
			t.Errorf("day %s carries demand %v", it.StartTime, it.Charges.Demand)
		}
	}
	if r := e.do("POST", "/costs/interval/"+e.device("meter")+"?include_charges=true", map[string]any{"start_time": june, "end_time": july}); r.Status != 400 || r.Map(t)["param"] != "include_charges" {
		t.Errorf("device with include_charges: %d %s", r.Status, r.Body)
	}
}

// Belgium's capacity tariff with 21% VAT, and a new tariff from 15 February with its own
// standing charge, capacity rate and 6% VAT: January's peak (1.8 kW) is below the 2.5 kW
// floor, February's above it; each tariff charges its own days and intervals.
func TestBillCapacityFloorTariffChangeAndVAT(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	capacity := func(rate float64) []any {
		return []any{map[string]any{"rate_per_kw": rate, "minimum_kw": 2.5}}
	}
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 0.2, "tax_percentage": 21,
		"demand_charges": capacity(4), "contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-02-14T23:00:00Z"})
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25}), "standing_charge": 0.3, "tax_percentage": 6,
		"demand_charges": capacity(5), "contract_start_date": "2024-02-14T23:00:00Z"})
	e.reads(reading("2024-01-10T17:00:00Z", "2024-01-10T17:15:00Z", 450), // 1.8 kW
		reading("2024-02-03T18:00:00Z", "2024-02-03T18:15:00Z", 1000), // 4 kW, first tariff
		reading("2024-02-20T07:00:00Z", "2024-02-20T07:30:00Z", 1500)) // 3 kW twice, second tariff
	b := e.bill("&aggregation=MONTH", "2023-12-31T23:00:00Z", "2024-02-29T23:00:00Z")
	// January: 0.135 energy + 31 × 0.2 + max(1.8, 2.5) × 4, with 21%.
	jan := 0.135 + 6.2 + 10
	// February, first tariff (1–14): 0.3 + 14 × 0.2 + 4 × 4, 21%; second (15–29): 0.375
	// + 15 × 0.3 + max(3, 2.5) × 5, 6%.
	febA, febB := 0.3+2.8+16, 0.375+4.5+15
	if len(b.Data) != 2 {
		t.Fatalf("months %+v", b.Data)
	}
	b.Data[0].Charges.check(t, "January", billCharges{0.135, 6.2, 10, jan * 0.21, jan * 1.21})
	b.Data[1].Charges.check(t, "February", billCharges{0.675, 2.8 + 4.5, 16 + 15, febA*0.21 + febB*0.06, febA*1.21 + febB*1.06})
	b.Charges.check(t, "both months", billCharges{0.81, 6.2 + 7.3, 41, (jan+febA)*0.21 + febB*0.06, (jan+febA)*1.21 + febB*1.06})
}
