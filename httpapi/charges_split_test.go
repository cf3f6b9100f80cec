package httpapi_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A contract that changes at noon (Brussels) on 15 January 2024: tariff A (0.30/kWh,
// 0.20/day, 20% tax) until 11:00Z, tariff B (0.25/kWh, 0.50/day, 5% tax) from then. On
// the 15th, 2 kWh at 09:00 local are A's and 4 kWh at 15:00 local B's: each tariff taxes
// the energy it priced. The day's standing charge is A's (the day starts in A's
// contract); B charges from the 16th (1 kWh at 10:00).
func TestBillContractChangingMidDayTaxesEachPartByItsTariff(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 0.2, "tax_percentage": 20,
		"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-15T11:00:00Z"})
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25}), "standing_charge": 0.5, "tax_percentage": 5,
		"contract_start_date": "2024-01-15T11:00:00Z"})
	e.reads(reading("2024-01-15T08:00:00Z", "2024-01-15T09:00:00Z", 2000), // A: 0.6
		reading("2024-01-15T14:00:00Z", "2024-01-15T15:00:00Z", 4000), // B: 1.0
		reading("2024-01-16T09:00:00Z", "2024-01-16T10:00:00Z", 1000)) // B: 0.25
	// 15th: 0.6 × 20% + 1.0 × 5% + 0.2 × 20% = 0.21; 16th: (0.25 + 0.5) × 5% = 0.0375.
	d15 := billCharges{1.6, 0.2, 0, 0.21, 2.01}
	d16 := billCharges{0.25, 0.5, 0, 0.0375, 0.7875}
	both := billCharges{1.85, 0.7, 0, 0.2475, 2.7975}
	const from, to = "2024-01-14T23:00:00Z", "2024-01-16T23:00:00Z"

	days := e.bill("&aggregation=DAY", from, to)
	if len(days.Data) != 2 {
		t.Fatalf("days %+v", days.Data)
	}
	days.Data[0].Charges.check(t, "interval, 15th", d15)
	days.Data[1].Charges.check(t, "interval, 16th", d16)
	days.Charges.check(t, "interval, both days", both)
	months := e.bill("&aggregation=MONTH", from, to)
	if len(months.Data) != 1 {
		t.Fatalf("months %+v", months.Data)
	}
	months.Data[0].Charges.check(t, "interval, January", both)
	months.Charges.check(t, "interval, MONTH top level", both)
	// Without aggregation each reading is taxed by its tariff too.
	e.bill("", from, to).Charges.check(t, "interval, readings", both)

	fleet := func(agg string) map[string]fleetBillRow {
		r := e.do("POST", "/costs/fleet", map[string]any{"start_time": from, "end_time": to, "aggregation": agg,
			"group_by": "location", "include_charges": true})
		if r.Status != 200 {
			t.Fatalf("fleet %s: %d %s", agg, r.Status, r.Body)
		}
		var b struct{ Data []fleetBillRow }
		r.JSON(t, &b)
		out := map[string]fleetBillRow{}
		for _, row := range b.Data {
			out[row.Date] = row
		}
		return out
	}
	fd := fleet("DAY")
	if len(fd) != 2 {
		t.Fatalf("fleet days %+v", fd)
	}
	fd["2024-01-15"].Charges.check(t, "fleet, 15th", d15)
	fd["2024-01-16"].Charges.check(t, "fleet, 16th", d16)
	fm := fleet("MONTH")
	if len(fm) != 1 {
		t.Fatalf("fleet months %+v", fm)
	}
	for _, row := range fm {
		row.Charges.check(t, "fleet, January", both)
	}
}

// The same change at noon, and one reading of 2 kWh from 11:30 to 12:30 local that
// straddles it: its energy is priced by time (1 kWh by A at 0.30, 1 kWh by B at 0.25), and
// each part is taxed by the tariff that priced it: (0.30 + 0.2 standing) × 20% + 0.25 × 5%
// = 0.1125, not the whole reading by A ((0.55 + 0.2) × 20% = 0.15). The same in every
// answer: days, months, readings, the fleet's days and months.
func TestBillReadingStraddlingAMidDayChangeIsTaxedPartByPart(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 0.2, "tax_percentage": 20,
		"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-15T11:00:00Z"})
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25}), "standing_charge": 0.5, "tax_percentage": 5,
		"contract_start_date": "2024-01-15T11:00:00Z"})
	e.reads(reading("2024-01-15T10:30:00Z", "2024-01-15T11:30:00Z", 2000))
	want := billCharges{0.55, 0.2, 0, 0.1125, 0.8625}
	const from, to = "2024-01-14T23:00:00Z", "2024-01-15T23:00:00Z"

	for _, agg := range []string{"&aggregation=DAY", "&aggregation=MONTH"} {
		b := e.bill(agg, from, to)
		if len(b.Data) != 1 {
			t.Fatalf("%s: items %+v", agg, b.Data)
		}
		b.Data[0].Charges.check(t, "interval item"+agg, want)
		b.Charges.check(t, "interval top level"+agg, want)
	}
	e.bill("", from, to).Charges.check(t, "interval, readings", want)
	e.checkFleetBills(t, from, to, want)
}

// A contract that changes at midnight (Brussels) between 15 and 16 January 2024: A
// (0.30/kWh, 0.20/day, 20% tax) until 23:00Z, B (0.25/kWh, 0.50/day, 5% tax) from then.
// One reading of 2 kWh from 23:30 to 00:30 local straddles the change; it starts on the
// 15th, so its money is the 15th's, but it is taxed part by part as at noon: 1 kWh by A
// (0.30) and 1 kWh by B (0.25), tax (0.30 + 0.2 standing) × 20% + 0.25 × 5% = 0.1125, not
// the whole reading by A ((0.55 + 0.2) × 20% = 0.15). The 16th has no reading: its
// standing charge (0.5, taxed 0.025 by B) is in the two days' top level and month.
func TestBillReadingStraddlingAMidnightChangeIsTaxedPartByPart(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 0.2, "tax_percentage": 20,
		"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-15T23:00:00Z"})
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25}), "standing_charge": 0.5, "tax_percentage": 5,
		"contract_start_date": "2024-01-15T23:00:00Z"})
	e.reads(reading("2024-01-15T22:30:00Z", "2024-01-15T23:30:00Z", 2000))
	d15 := billCharges{0.55, 0.2, 0, 0.1125, 0.8625}
	both := billCharges{0.55, 0.7, 0, 0.1375, 1.3875}
	windows := []struct {
		to   string
		want billCharges
	}{{"2024-01-15T23:00:00Z", d15}, {"2024-01-16T23:00:00Z", both}}
	const from = "2024-01-14T23:00:00Z"

	for _, w := range windows {
		days := e.bill("&aggregation=DAY", from, w.to)
		if len(days.Data) != 1 {
			t.Fatalf("to %s: days %+v", w.to, days.Data)
		}
		days.Data[0].Charges.check(t, "interval, 15th, to "+w.to, d15)
		days.Charges.check(t, "interval DAY top level, to "+w.to, w.want)
		months := e.bill("&aggregation=MONTH", from, w.to)
		if len(months.Data) != 1 {
			t.Fatalf("to %s: months %+v", w.to, months.Data)
		}
		months.Data[0].Charges.check(t, "interval, January, to "+w.to, w.want)
		e.bill("", from, w.to).Charges.check(t, "interval, readings, to "+w.to, w.want)
	}
	e.checkFleetBills(t, from, windows[0].to, d15)
	// Over both days, the fleet's month and its CSV row: energy, standing, demand, tax, total.
	r := e.api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: e.acc.Test(), Header: map[string]string{"Accept": "text/csv"},
		Body: map[string]any{"start_time": from, "end_time": windows[1].to, "aggregation": "MONTH", "include_charges": true}})
	recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || r.Status != 200 || len(recs) != 2 {
		t.Fatalf("csv: %d %v %s", r.Status, err, r.Body)
	}
	if got := strings.Join(recs[1][9:], ","); got != "0.55,0.7,0,0.1375,1.3875" {
		t.Errorf("csv month charges %s, want 0.55,0.7,0,0.1375,1.3875 (%v)", got, recs)
	}
}

// A tiered tariff A (the first kWh of the month at 0.30, the rest at 0.40; 20% tax) until
// noon, flat B (0.25, 5%) from then: 2 kWh from 09:00 local fill band 1 and reach band 2
// (0.3 + 0.4 = 0.7), then 2 kWh from 11:30 to 12:30 straddle noon: the kWh before is A's
// band 2 (0.4), the kWh after B's (0.25). Tax (0.7 + 0.4 + 0.2 standing) × 20% + 0.25 × 5%
// = 0.2725. The part before noon is priced with the month's tier counter as the whole
// reading is.
func TestBillStraddlingReadingOfATieredTariffIsTaxedPartByPart(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3, "to_kwh": 1}, map[string]any{"fixed": 0.4}),
		"standing_charge": 0.2, "tax_percentage": 20,
		"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-15T11:00:00Z"})
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25}), "standing_charge": 0.5, "tax_percentage": 5,
		"contract_start_date": "2024-01-15T11:00:00Z"})
	e.reads(reading("2024-01-15T08:00:00Z", "2024-01-15T09:00:00Z", 2000),
		reading("2024-01-15T10:30:00Z", "2024-01-15T11:30:00Z", 2000))
	want := billCharges{1.35, 0.2, 0, 0.2725, 1.8225}
	const from, to = "2024-01-14T23:00:00Z", "2024-01-15T23:00:00Z"
	b := e.bill("&aggregation=DAY", from, to)
	if len(b.Data) != 1 {
		t.Fatalf("items %+v", b.Data)
	}
	b.Data[0].Charges.check(t, "interval day", want)
	e.bill("", from, to).Charges.check(t, "interval, readings", want)
	r := e.do("POST", "/costs/fleet", map[string]any{"start_time": from, "end_time": to, "aggregation": "MONTH",
		"group_by": "location", "include_charges": true})
	var f struct{ Data []fleetBillRow }
	r.JSON(t, &f)
	if r.Status != 200 || len(f.Data) != 1 {
		t.Fatalf("fleet: %d %s", r.Status, r.Body)
	}
	f.Data[0].Charges.check(t, "fleet month", want)
}

// checkFleetBills asks the fleet's one location over [from, to) by DAY, MONTH and NONE
// with charges, and checks that each answer's one row bills want.
func (e *costEnv) checkFleetBills(t *testing.T, from, to string, want billCharges) {
	t.Helper()
	for _, agg := range []string{"DAY", "MONTH", "NONE"} {
		r := e.do("POST", "/costs/fleet", map[string]any{"start_time": from, "end_time": to, "aggregation": agg,
			"group_by": "location", "include_charges": true})
		var b struct{ Data []fleetBillRow }
		r.JSON(t, &b)
		if r.Status != 200 || len(b.Data) != 1 {
			t.Fatalf("fleet %s: %d %s", agg, r.Status, r.Body)
		}
		b.Data[0].Charges.check(t, "fleet "+agg, want)
	}
}
