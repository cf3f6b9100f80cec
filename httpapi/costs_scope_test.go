package httpapi_test

import (
	"strings"
	"testing"
)

// TestCostsNeverPriceAnotherScopesReadings asks, from another account and from the live
// mode of the same account, for a location's and a device's costs by every route, and
// writes readings at that location. The readings statement keeps its rows to the scope
// only through the locations it is given (docs/costs.md, "Scope of a cost query"): each
// route must refuse the foreign id, and the owner's cost must not move.
func TestCostsNeverPriceAnotherScopesReadings(t *testing.T) {
	owner := newCostEnv(t, "Europe/London")
	owner.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10})})
	dev := owner.device("meter-1")
	owner.reads(hourly("2024-03-01T00:00:00Z", 4, 1000, nil)...)
	owner.reads(hourly("2024-03-01T00:00:00Z", 2, 500, map[string]any{"device_id": dev})...)
	const from, to = "2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z"
	ownCost := func() (float64, float64) {
		c := owner.cost(owner.loc, "", from, to)
		return c.Energy.Value, c.Tariff.Value
	}
	if wh, money := ownCost(); !near(wh, 4000) || !close6(money, 0.40) {
		t.Fatalf("owner's cost %g Wh %g, want 4000 Wh 0.40", wh, money)
	}

	other := owner.api.NewAccount("other")
	for name, auth := range map[string]string{"another account": other.Test(), "live mode of the same account": owner.acc.Live()} {
		as := owner.api.As(auth)
		// The foreign scope has a location of its own with readings at the same hours, so
		// its rows sit beside the owner's in the same granules.
		loc := as("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
		if r := as("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
			"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
			"schedule": flat(map[string]any{"fixed": 0.20})}); r.Status != 200 {
			t.Fatalf("%s: tariff: %d %s", name, r.Status, r.Body)
		}
		mine := hourly("2024-03-01T00:00:00Z", 3, 2000, map[string]any{"location_id": loc, "units": "WH"})
		if r := as("PUT", "/meters/interval", mine); r.Status != 200 {
			t.Fatalf("%s: own readings: %d %s", name, r.Status, r.Body)
		}

		for _, id := range []string{owner.loc, dev} {
			r := as("POST", "/costs/interval/"+id+"?aggregation=DAY", map[string]any{"start_time": from, "end_time": to})
			if r.Status != 404 || r.Map(t)["code"] != "resource_missing" {
				t.Errorf("%s: costs of %s: %d %s, want 404 resource_missing", name, id, r.Status, r.Body)
			}
		}
		for _, group := range []string{"location", "device"} {
			r := as("POST", "/costs/fleet", map[string]any{"start_time": from, "end_time": to, "aggregation": "DAY",
				"group_by": group, "location_ids": []string{owner.loc}})
			if m := r.Map(t); r.Status != 400 || m["code"] != "resource_missing" || m["param"] != "location_ids" {
				t.Errorf("%s: fleet by %s naming the owner's location: %d %s, want 400 resource_missing location_ids", name, group, r.Status, r.Body)
			}
		}
		var all fleetBody
		as("POST", "/costs/fleet", map[string]any{"start_time": from, "end_time": to, "aggregation": "DAY"}).JSON(t, &all)
		if len(all.Data) != 1 || all.Data[0].LocationID != loc || !near(all.Data[0].Energy.Value, 6000) || !close6(all.Data[0].Tariff.Value, 1.20) {
			t.Errorf("%s: its fleet %+v, want only its own location: 6000 Wh, 1.20", name, all.Data)
		}

		var b batchBody
		as("PUT", "/meters/interval", hourly("2024-03-01T00:00:00Z", 1, 9000, map[string]any{"location_id": owner.loc, "units": "WH"})).JSON(t, &b)
		if b.RecordsAccepted != 0 || len(b.FailedRecords) != 1 || !strings.Contains(b.FailedRecords[0].Error, "no such location") {
			t.Errorf("%s: a reading at the owner's location: %+v, want refused as no such location", name, b)
		}
	}
	if wh, money := ownCost(); !near(wh, 4000) || !close6(money, 0.40) {
		t.Errorf("owner's cost after the others wrote: %g Wh %g, want 4000 Wh 0.40", wh, money)
	}
}
