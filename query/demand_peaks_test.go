package query_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestBucketPricerKeepsDemandPeaks: a background pass on 6 March 2024 measures and keeps
// the demand peaks of March for a London home with a capacity charge (3 GBP/kW), so its
// bill reads no readings for demand: 1 kWh every hour of 1–5 March is 1 kW in every
// quarter hour, a demand charge of 3.
func TestBucketPricerKeepsDemandPeaks(t *testing.T) {
	f, loc, measured := newDemandHome(t, func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) })
	api := f.api

	bp := query.NewBucketPricer(api.App.Pricer, api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if measured.Load() == 0 {
		t.Fatal("a background pass measured no demand peaks")
	}
	before := measured.Load()
	r := f.do("POST", "/costs/interval/"+loc+"?aggregation=MONTH&include_charges=true",
		map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z"})
	var b struct {
		Charges struct{ Energy, Demand, Total float64 }
	}
	r.JSON(t, &b)
	if r.Status != 200 || !close6(b.Charges.Energy, 30) || !close6(b.Charges.Demand, 3) || !close6(b.Charges.Total, 33) {
		t.Fatalf("March bill: %d %s", r.Status, r.Body)
	}
	if n := measured.Load() - before; n != 0 {
		t.Errorf("the bill measured demand peaks %d time(s) after a background pass kept them", n)
	}
}

// TestDemandPeaksCountTheirMonthsDatesInTheirZone: a month's kept peaks are measured again
// only when readings of its own local month change, in its location's zone. Readings of
// 1 April 00:00–01:00 UTC are April's in London (01:00 BST), so a background pass leaves
// London's March peaks as kept (one row, never written again); the same hour two hours
// later is 31 March 22:00 in New York, so New York's March is measured again and its bill
// bills the new 5 kW peak (a demand charge of 15), from the peaks the pass kept.
func TestDemandPeaksCountTheirMonthsDatesInTheirZone(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 4, 1, 12, 0, 0, 0, time.UTC) }
	api, measured := startCountingDemandReads(t, now)
	acc := api.NewAccount("zones")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test())}
	tariff := capacityTariff()
	london := f.location(tariff)
	newYork := f.must(f.do("POST", "/locations", map[string]any{"timezone": "America/New_York", "currency_code": "GBP"}))["id"].(string)
	f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": newYork, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
		"schedule": tariff["schedule"], "demand_charges": tariff["demand_charges"]}))
	for _, loc := range []string{london, newYork} {
		f.readings(loc, time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	}
	bp := query.NewBucketPricer(api.App.Pricer, api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.readings(london, time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), 1, 5000)
	f.readings(newYork, time.Date(2024, 4, 1, 2, 0, 0, 0, time.UTC), 1, 5000)
	if err := bp.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	var londonMarch uint64
	err := api.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT count() FROM demand_peaks
		WHERE location_id = ? AND month_start = toDateTime('2024-03-01 00:00:00', 'UTC')`), london).Scan(&londonMarch)
	if err != nil {
		t.Fatal(err)
	}
	if londonMarch != 1 {
		t.Errorf("London's March peaks were kept %d times: readings of its April measured its March again", londonMarch)
	}
	before := measured.Load()
	for _, c := range []struct {
		loc, from, to string
		demand        float64
	}{{london, "2024-03-01T00:00:00Z", "2024-03-31T23:00:00Z", 3}, {newYork, "2024-03-01T05:00:00Z", "2024-04-01T04:00:00Z", 15}} {
		r := f.do("POST", "/costs/interval/"+c.loc+"?aggregation=MONTH&include_charges=true",
			map[string]any{"start_time": c.from, "end_time": c.to})
		var b struct{ Charges struct{ Demand float64 } }
		r.JSON(t, &b)
		if r.Status != 200 || !close6(b.Charges.Demand, c.demand) {
			t.Errorf("March demand charge of %s: want %v, got %d %s", c.loc, c.demand, r.Status, r.Body)
		}
	}
	if n := measured.Load() - before; n != 0 {
		t.Errorf("the bills measured demand peaks %d time(s) after a background pass kept them", n)
	}
}

// capacityTariff is a flat 0.25/kWh tariff with a demand charge of 3 per kW.
func capacityTariff() map[string]any {
	return map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}}),
		"demand_charges": []any{map[string]any{"rate_per_kw": 3}}}
}

// newDemandHome starts the API at now (nil: the clock) with an account holding a London
// home on capacityTariff and 1 kWh every hour of 1–5 March 2024 (1 kW in every quarter
// hour), counting the statements that read readings to measure demand peaks.
func newDemandHome(t *testing.T, now func() time.Time) (*bucketFleet, string, *atomic.Int64) {
	api, measured := startCountingDemandReads(t, now)
	acc := api.NewAccount("demand")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), scope: kwhouse.Scope{AccountID: acc.ID}}
	loc := f.location(capacityTariff())
	f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	return f, loc, measured
}

// startCountingDemandReads starts the API at now, counting the statements that read
// readings to measure demand peaks.
func startCountingDemandReads(t *testing.T, now func() time.Time) (*apitest.API, *atomic.Int64) {
	measured := &atomic.Int64{}
	api := apitest.Start(t, apitest.Options{Now: now, Observe: func(st chstore.Statement) {
		if st.Name == "query.demand_readings" {
			measured.Add(1)
		}
	}})
	return api, measured
}

// TestDemandPeaksAreMeasuredAgainWhenADayChangesThoughTheMonthCountsAddUp: kept peaks hold
// only while every day's reading count is the one they were measured under, not while the
// month's counts merely add up (docs/costs.md, "Bill charges"). March 2's count is lowered
// by a row of n = 2⁶⁴ − 1 (what a replica that has not yet fetched a count shows; the
// summing table adds modulo 2⁶⁴) and a 5 kWh reading is added on March 7: the month's
// counts add up as before, and the bill must bill the new 5 kW peak (15), not the kept
// 1 kW (3).
func TestDemandPeaksAreMeasuredAgainWhenADayChangesThoughTheMonthCountsAddUp(t *testing.T) {
	f, loc, measured := newDemandHome(t, nil)
	bill := func(what string, energy, demand float64) {
		t.Helper()
		r := f.do("POST", "/costs/interval/"+loc+"?aggregation=MONTH&include_charges=true",
			map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z"})
		var b struct {
			Charges struct{ Energy, Demand float64 }
		}
		r.JSON(t, &b)
		if r.Status != 200 || !close6(b.Charges.Energy, energy) || !close6(b.Charges.Demand, demand) {
			t.Errorf("%s: want energy %v, demand %v; got %d %s", what, energy, demand, r.Status, r.Body)
		}
	}
	bill("first bill", 30, 3)
	before := measured.Load()
	bill("asked again", 30, 3)
	if n := measured.Load() - before; n != 0 {
		t.Fatalf("asked again, the bill measured demand peaks %d time(s): none were kept", n)
	}
	if err := f.api.App.DB.Exec(context.Background(), chstore.Tool(`INSERT INTO reading_changes (account_id, live_mode, location_id,
		device_id, direction, day, n, last_version) SELECT ?, toUInt8(0), ?, '', 'IMPORT', toDate('2024-03-02'), toUInt64(?), toUInt64(?)`),
		f.scope.AccountID, loc, uint64(math.MaxUint64), uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	f.readings(loc, time.Date(2024, 3, 7, 10, 0, 0, 0, time.UTC), 1, 5000)
	bill("after a 5 kWh reading of March 7", 31.25, 15)
}
