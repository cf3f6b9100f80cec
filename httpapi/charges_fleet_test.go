package httpapi_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

type fleetBillRow struct {
	LocationID   string `json:"location_id"`
	CustomerID   string `json:"customer_id"`
	Date         string `json:"date"`
	CurrencyCode string `json:"currency_code"`
	Charges      billCharges
}

// fleetBill asks POST /costs/fleet with include_charges for March 2024 (UTC bounds).
func (e *costEnv) fleetBill(agg, group string) map[string]fleetBillRow {
	e.t.Helper()
	r := e.do("POST", "/costs/fleet", map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z",
		"aggregation": agg, "group_by": group, "include_charges": true})
	if r.Status != 200 {
		e.t.Fatalf("fleet %s %s: %d %s", agg, group, r.Status, r.Body)
	}
	var b struct{ Data []fleetBillRow }
	r.JSON(e.t, &b)
	out := map[string]fleetBillRow{}
	for _, row := range b.Data {
		out[row.LocationID+row.CustomerID+" "+row.CurrencyCode] = row
	}
	return out
}

// A fleet of three locations in two zones and currencies, one customer: two London
// homes (GBP; one with a 30-minute demand charge and 20% VAT, one with 5%) and a New York
// one (USD), over March 2024 as UTC bounds. Each location's standing days are its own
// local days whose start lies in the window (31 each), and a customer's rows are split
// by currency.
func TestFleetBillThreeLocationsTwoZonesAndCurrencies(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("fleet-bills")
	e := &costEnv{t: t, api: api, acc: acc}
	cu := e.do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	newLoc := func(zone, currency string) string {
		e.loc = e.do("POST", "/locations", map[string]any{"timezone": zone, "currency_code": currency, "customer_id": cu}).Map(t)["id"].(string)
		return e.loc
	}
	l1 := newLoc("Europe/London", "GBP")
	t1 := e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.2}), "standing_charge": 0.5, "tax_percentage": 5})
	e.reads(reading("2024-03-10T12:00:00Z", "2024-03-10T13:00:00Z", 2000))
	l2 := newLoc("Europe/London", "GBP")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}), "standing_charge": 0.4, "tax_percentage": 20,
		"demand_charges": []any{map[string]any{"rate_per_kw": 2, "interval_minutes": 30}}})
	e.reads(reading("2024-03-12T18:00:00Z", "2024-03-12T18:30:00Z", 1500), // 3 kW
		reading("2024-03-20T09:00:00Z", "2024-03-20T10:00:00Z", 4000)) // 4 kW in both half hours
	l3 := newLoc("America/New_York", "USD")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.1}), "standing_charge": 1})
	e.reads(reading("2024-03-15T16:00:00Z", "2024-03-15T17:00:00Z", 10000))

	b1 := billCharges{0.4, 15.5, 0, 15.9 * 0.05, 15.9 * 1.05}
	b2 := billCharges{1.65, 12.4, 8, 22.05 * 0.2, 22.05 * 1.2}
	b3 := billCharges{1, 31, 0, 0, 32}
	rows := e.fleetBill("MONTH", "location")
	rows[l1+" GBP"].Charges.check(t, "London 1", b1)
	rows[l2+" GBP"].Charges.check(t, "London 2", b2)
	rows[l3+" USD"].Charges.check(t, "New York", b3)
	// The whole window (NONE) also holds the start of London's 1 April (31 March 23:00Z, in
	// summer time): 32 standing charges there; New York's 1 April starts after the window.
	rows = e.fleetBill("NONE", "location")
	rows[l1+" GBP"].Charges.check(t, "whole window, London 1", billCharges{0.4, 16, 0, 16.4 * 0.05, 16.4 * 1.05})
	rows[l2+" GBP"].Charges.check(t, "whole window, London 2", billCharges{1.65, 12.8, 8, 22.45 * 0.2, 22.45 * 1.2})
	rows[l3+" USD"].Charges.check(t, "whole window, New York", b3)
	byCustomer := e.fleetBill("MONTH", "customer")
	if len(byCustomer) != 2 {
		t.Fatalf("customer rows %+v", byCustomer)
	}
	byCustomer[cu+" GBP"].Charges.check(t, "customer GBP", billCharges{2.05, 27.9, 8, b1.Tax + b2.Tax, b1.Total + b2.Total})
	byCustomer[cu+" USD"].Charges.check(t, "customer USD", b3)
	// Each row is what POST /costs/interval/{loc}?include_charges=true gives.
	e.loc = l2
	e.bill("&aggregation=MONTH", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z").Data[0].Charges.check(t, "interval London 2", b2)

	// CSV carries the charges in charges_* columns.
	r := api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: acc.Test(), Header: map[string]string{"Accept": "text/csv"},
		Body: map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z", "aggregation": "MONTH", "include_charges": true}})
	recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || r.Status != 200 || len(recs) != 4 {
		t.Fatalf("csv: %d %v %s", r.Status, err, r.Body)
	}
	if h := strings.Join(recs[0][9:], ","); h != "charges_energy,charges_standing,charges_demand,charges_tax,charges_total" {
		t.Errorf("csv header %v", recs[0])
	}
	for _, rec := range recs[1:] {
		if rec[0] == l2 && (rec[11] != "8" || rec[13] != "26.46") {
			t.Errorf("csv row of London 2: %v", rec)
		}
	}

	// A later reading that raises London 2's March peak to 6 kW re-prices its demand.
	e.loc = l2
	e.reads(reading("2024-03-25T10:00:00Z", "2024-03-25T10:30:00Z", 3000))
	e.fleetBill("MONTH", "location")[l2+" GBP"].Charges.check(t, "after a new peak",
		billCharges{2.55, 12.4, 12, 26.95 * 0.2, 26.95 * 1.2})
	// A contract ended on 21 March charges the standing days before it only, in the very
	// next answer: 20 days of London 1's.
	if r := e.do("PATCH", "/tariffs/elements/"+t1, map[string]any{"contract_end_date": "2024-03-21T00:00:00Z"}); r.Status != 200 {
		t.Fatalf("end London 1's contract: %d %s", r.Status, r.Body)
	}
	e.fleetBill("MONTH", "location")[l1+" GBP"].Charges.check(t, "after the contract ends", billCharges{0.4, 10, 0, 10.4 * 0.05, 10.4 * 1.05})
	// Devices have no bill.
	if r := e.do("POST", "/costs/fleet", map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z",
		"group_by": "device", "include_charges": true}); r.Status != 400 || r.Map(t)["param"] != "include_charges" {
		t.Errorf("device groups with include_charges: %d %s", r.Status, r.Body)
	}
}
