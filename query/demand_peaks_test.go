package query_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestBucketPricerKeepsDemandPeaks: a background pass on 6 March 2024 measures and keeps
// the demand peaks of March for a London home with a capacity charge (3 GBP/kW), so its
// bill reads no readings for demand: 1 kWh every hour of 1–5 March is 1 kW in every
// quarter hour, a demand charge of 3. The pass keeps the days of the month it measured
// first too (an answer would not), so its next pass measures from the changed days.
func TestBucketPricerKeepsDemandPeaks(t *testing.T) {
	f, loc, reads := newDemandHome(t, func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) })
	measured := &reads.measured
	api := f.api

	bp := query.NewBucketPricer(api.App.Pricer, api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if measured.Load() == 0 {
		t.Fatal("a background pass measured no demand peaks")
	}
	if err := api.App.Pricer.WaitBucketWrites(context.Background(), f.scope); err != nil {
		t.Fatal(err)
	}
	var days, counts uint64
	err := api.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT argMax(length(day_peaks), version),
		argMax(length(reach_counts), version) FROM demand_days WHERE location_id = ?`), loc).Scan(&days, &counts)
	if err != nil || days != 31 || counts == 0 {
		t.Fatalf("the pass kept March with %d day peaks and %d reach counts (%v), want 31 and some", days, counts, err)
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
// only when readings of its reach change (the UTC dates from 4 days before its first to 2
// days after its last), which holds every reading its local month's peaks come from in
// any zone. Readings of 3 April 00:00–01:00 UTC are outside March's reach, so a background
// pass leaves London's March peaks as kept (one row, never written again); the hour of 1
// April 02:00 UTC is 31 March 22:00 in New York, so New York's March is measured again and
// its bill bills the new 5 kW peak (a demand charge of 15), from the peaks the pass kept.
func TestDemandPeaksCountTheirMonthsDatesInTheirZone(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 4, 1, 12, 0, 0, 0, time.UTC) }
	api, reads := startCountingDemandReads(t, now)
	measured := &reads.measured
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
	f.readings(london, time.Date(2024, 4, 3, 0, 0, 0, 0, time.UTC), 1, 5000)
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
		t.Errorf("London's March peaks were kept %d times: readings outside its reach measured its March again", londonMarch)
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
func newDemandHome(t *testing.T, now func() time.Time) (*bucketFleet, string, *demandReads) {
	api, reads := startCountingDemandReads(t, now)
	acc := api.NewAccount("demand")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), auth: acc.Test(), scope: kwhouse.Scope{AccountID: acc.ID}}
	loc := f.location(capacityTariff())
	f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	return f, loc, reads
}

// checkMarchBill asks loc's bill from 1 March 2024 to end by MONTH with charges and checks
// its energy and demand charges.
func (f *bucketFleet) checkMarchBill(loc, end, what string, energy, demand float64) {
	f.t.Helper()
	r := f.do("POST", "/costs/interval/"+loc+"?aggregation=MONTH&include_charges=true",
		map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": end})
	var b struct {
		Charges struct{ Energy, Demand float64 }
	}
	r.JSON(f.t, &b)
	if r.Status != 200 || !close6(b.Charges.Energy, energy) || !close6(b.Charges.Demand, demand) {
		f.t.Fatalf("%s: want energy %v, demand %v; got %d %s", what, energy, demand, r.Status, r.Body)
	}
}

// demandReads counts the statements that read readings to measure demand peaks
// (measured), those that read month reach fingerprints (prints), those that read kept
// peaks (stored), and those that read kept days or their dates' change counts (days).
type demandReads struct{ measured, prints, stored, days atomic.Int64 }

// startCountingDemandReads starts the API at now, counting demandReads.
func startCountingDemandReads(t *testing.T, now func() time.Time) (*apitest.API, *demandReads) {
	reads := &demandReads{}
	api := apitest.Start(t, apitest.Options{Now: now, Observe: func(st chstore.Statement) {
		switch st.Name {
		case "query.demand_readings":
			reads.measured.Add(1)
		case "query.month_prints":
			reads.prints.Add(1)
		case "query.demand_stored":
			reads.stored.Add(1)
		case "query.demand_days", "query.demand_dates":
			reads.days.Add(1)
		}
	}})
	return api, reads
}

// TestDemandPeaksAreMeasuredAgainWhenADayChangesThoughTheMonthCountsAddUp: kept peaks hold
// only while the fingerprint of their month's reach is the one they were measured under,
// not while its row count merely adds up (docs/costs.md, "Bill charges"). March's count of
// rows is lowered by a row of n = 2⁶⁴ − 1 taking March 2's weight off its fingerprint (what
// a replica that has not yet fetched a row of March 2 shows; the summing table adds modulo
// 2⁶⁴) and a 5 kWh reading is added on March 7: the month's rows add up as before, and the
// bill must bill the new 5 kW peak (15), not the kept 1 kW (3).
func TestDemandPeaksAreMeasuredAgainWhenADayChangesThoughTheMonthCountsAddUp(t *testing.T) {
	f, loc, reads := newDemandHome(t, nil)
	bill := func(what string, energy, demand float64) {
		t.Helper()
		f.checkMarchBill(loc, "2024-03-31T23:00:00Z", what, energy, demand)
	}
	bill("first bill", 30, 3)
	before := reads.measured.Load()
	bill("asked again", 30, 3)
	if n := reads.measured.Load() - before; n != 0 {
		t.Fatalf("asked again, the bill measured demand peaks %d time(s): none were kept", n)
	}
	if err := f.api.App.DB.Exec(context.Background(), chstore.Tool(`INSERT INTO reading_changes_by_month (account_id, live_mode,
		location_id, device_id, direction, month, n, print, last_version) SELECT ?, toUInt8(0), ?, '', 'IMPORT', toDate('2024-03-01'),
		toUInt64(?), toUInt64(0) - `+chstore.DayWeight("toDate('2024-03-02')")+`, toUInt64(?)`),
		f.scope.AccountID, loc, uint64(math.MaxUint64), uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	f.readings(loc, time.Date(2024, 3, 7, 10, 0, 0, 0, time.UTC), 1, 5000)
	bill("after a 5 kWh reading of March 7", 31.25, 15)
}

// TestKeptDemandPeaksAreServedFromOneReadOfMonthPrints: with nothing written, a bill
// serves its month's kept peaks after one read of month reach fingerprints (and no read of
// readings, nor of demand_peaks: the process holds the peaks it kept); a re-sent reading (a new version of 3 March 10:00–11:00, 5 kWh: 5 kW in each
// of its quarters, demand 5 × 3 = 15; energy 30 − 0.25 + 1.25 = 31) and a reading starting
// the day before the month (29 February 23:30–1 March 00:30, 20 kWh: 20 kW in March's
// first two quarters beside the 1 kW of 1 March 00:00–01:00, demand 21 × 3 = 63; its
// energy is February's, outside the window) each measure the month again.
func TestKeptDemandPeaksAreServedFromOneReadOfMonthPrints(t *testing.T) {
	f, loc, reads := newDemandHome(t, nil)
	bill := func(what string, energy, demand float64) {
		t.Helper()
		f.checkMarchBill(loc, "2024-04-01T00:00:00Z", what, energy, demand)
	}
	bill("first bill", 30, 3)
	measured, prints, stored := reads.measured.Load(), reads.prints.Load(), reads.stored.Load()
	bill("asked again", 30, 3)
	if n, p, s := reads.measured.Load()-measured, reads.prints.Load()-prints, reads.stored.Load()-stored; n != 0 || p != 1 || s != 0 {
		t.Errorf("asked again with nothing written: %d read(s) of readings, %d of month prints, %d of kept peaks; want 0, 1 and 0 (the peaks this process kept)", n, p, s)
	}
	measured = reads.measured.Load()
	f.readings(loc, time.Date(2024, 3, 3, 10, 0, 0, 0, time.UTC), 1, 5000)
	bill("after re-sending 3 March 10:00 as 5 kWh", 31, 15)
	f.readings(loc, time.Date(2024, 2, 29, 23, 30, 0, 0, time.UTC), 1, 20000)
	bill("after a reading from 29 February 23:30", 31, 63)
	if n := reads.measured.Load() - measured; n != 2 {
		t.Errorf("the two changes measured the month %d time(s), want 2", n)
	}
}

// TestFleetBillReadsMonthPrintsOnceForBucketsAndDemand: a fleet's MONTH answer with
// charges reads the month reach fingerprints for its demand peaks from its kept months'
// read: no more reads of them than the same answer without charges. Two London homes on capacityTariff and a third on a month-tiered one (the
// first 1,000 kWh at 0.25) with exported energy too, March 2024 whole (energy 30, demand 3
// each). The tiered home's peaks are kept under its imports' fingerprint alone (the one an
// interval answer reads: its bill measures nothing), and the shared figures still send a
// month whose readings changed back to be measured: a 5 kWh hour on 7 March at the first
// home (5 kW in each of its quarters: demand 15, energy 30 + 1.25) is billed at once, the
// others' March served as kept.
func TestFleetBillReadsMonthPrintsOnceForBucketsAndDemand(t *testing.T) {
	f, a, reads := newDemandHome(t, nil)
	b := f.location(capacityTariff())
	tiered := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25, "to_kwh": 1000},
		map[string]any{"fixed": 0.5}}), "demand_charges": capacityTariff()["demand_charges"]})
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, loc := range []string{b, tiered} {
		f.readings(loc, march, 5*24, 1000)
	}
	f.must(f.do("PUT", "/meters/interval", []any{map[string]any{"location_id": tiered, "direction": "EXPORT",
		"start_time": "2024-03-02T12:00:00Z", "end_time": "2024-03-02T13:00:00Z", "value": 2000, "units": "WH"}}))
	body := func(charges bool) map[string]any {
		return map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z",
			"aggregation": "MONTH", "include_charges": charges}
	}
	bill := func(what string, want map[string][2]float64) {
		t.Helper()
		r := f.do("POST", "/costs/fleet", body(true))
		var out struct {
			Data []struct {
				LocationID string `json:"location_id"`
				Charges    struct{ Energy, Demand float64 }
			}
		}
		r.JSON(t, &out)
		if r.Status != 200 || len(out.Data) != len(want) {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		for _, row := range out.Data {
			w := want[row.LocationID]
			if !close6(row.Charges.Energy, w[0]) || !close6(row.Charges.Demand, w[1]) {
				t.Errorf("%s: %s energy %v demand %v, want %v %v", what, row.LocationID, row.Charges.Energy, row.Charges.Demand, w[0], w[1])
			}
		}
	}
	flat := map[string][2]float64{a: {30, 3}, b: {30, 3}, tiered: {30, 3}}
	bill("first bill", flat)
	bill("second bill (keeps the months)", flat)
	prints := reads.prints.Load()
	f.must(f.do("POST", "/costs/fleet", body(false)))
	without := reads.prints.Load() - prints
	measured, prints := reads.measured.Load(), reads.prints.Load()
	bill("asked again", flat)
	if n, p := reads.measured.Load()-measured, reads.prints.Load()-prints; n != 0 || p != without || p == 0 {
		t.Errorf("asked again with nothing written: %d read(s) of readings, %d of month prints; want 0 and %d (as without charges)", n, p, without)
	}
	f.checkMarchBill(tiered, "2024-03-31T23:00:00Z", "the tiered home's interval bill", 30, 3)
	if n := reads.measured.Load() - measured; n != 0 {
		t.Errorf("the tiered home's interval bill measured its peaks %d time(s): the fleet kept them under another fingerprint", n)
	}
	f.readings(a, time.Date(2024, 3, 7, 10, 0, 0, 0, time.UTC), 1, 5000)
	bill("after a 5 kWh hour on 7 March at the first home", map[string][2]float64{a: {31.25, 15}, b: {30, 3}, tiered: {30, 3}})
	if n := reads.measured.Load() - measured; n != 1 {
		t.Errorf("the change measured demand peaks %d time(s), want 1 (the changed home's March)", n)
	}
}

// TestASecondProcessBillsFromTheKeptDemandPeaksOfTheFirst: a new process (a second one, or
// one restarted) holds no demand peaks; its first fleet bill reads the kept ones once and
// measures none, and equals the bill of a process without priced buckets, which measures
// every month. Two London homes on capacityTariff, March 2024 (energy 30, demand 3 each).
// The first process bills, then bills again after a 5 kWh hour on 7 March at the first home
// (5 kW: demand 15), keeping March anew (merges stopped where ClickHouse allows it: both
// versions stay, and the later one must be served). A 4 kWh hour on 8 March at the second
// home (demand 12) then changes a month the second process holds: its next bill measures
// that month at once, and only it.
func TestASecondProcessBillsFromTheKeptDemandPeaksOfTheFirst(t *testing.T) {
	f, a, _ := newDemandHome(t, nil)
	ctx := context.Background()
	if f.api.App.DB.Exec(ctx, chstore.Tool("SYSTEM STOP MERGES demand_peaks")) == nil {
		defer f.api.App.DB.Exec(ctx, chstore.Tool("SYSTEM START MERGES demand_peaks"))
	}
	b := f.location(capacityTariff())
	f.readings(b, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	bill := func(do func(method, path string, body any) apitest.Response) map[string][2]float64 {
		t.Helper()
		r := do("POST", "/costs/fleet", map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z",
			"aggregation": "MONTH", "include_charges": true})
		var out struct {
			Data []struct {
				LocationID string `json:"location_id"`
				Charges    struct{ Energy, Demand float64 }
			}
		}
		r.JSON(t, &out)
		if r.Status != 200 {
			t.Fatalf("fleet bill: %d %s", r.Status, r.Body)
		}
		got := map[string][2]float64{}
		for _, row := range out.Data {
			got[row.LocationID] = [2]float64{row.Charges.Energy, row.Charges.Demand}
		}
		return got
	}
	check := func(what string, got, want map[string][2]float64) {
		t.Helper()
		for loc, w := range want {
			if g := got[loc]; len(got) != len(want) || !close6(g[0], w[0]) || !close6(g[1], w[1]) {
				t.Errorf("%s: %v, want %v", what, got, want)
				return
			}
		}
	}
	bill(f.do)
	f.readings(a, time.Date(2024, 3, 7, 10, 0, 0, 0, time.UTC), 1, 5000)
	want := map[string][2]float64{a: {31.25, 15}, b: {30, 3}}
	check("the first process after a 5 kWh hour at the first home", bill(f.do), want)
	query.WaitAnswerStores(f.api.App.Pricer) // the peaks it measured are kept after its answer

	fresh := apitest.Start(t, apitest.Options{ShareWith: f.api, Configure: func(c *config.Config) { c.Costs.PricedBuckets = false }})
	check("a process without priced buckets", bill(fresh.As(f.auth)), want)
	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	check("a second process's first bill", bill(other.As(f.auth)), want)
	if n := second.take(); n["query.demand_stored"] != 1 || n["query.demand_readings"] != 0 {
		t.Errorf("a second process's first bill: %d read(s) of kept peaks, %d of readings; want 1 and 0", n["query.demand_stored"],
			n["query.demand_readings"])
	}
	f.readings(b, time.Date(2024, 3, 8, 10, 0, 0, 0, time.UTC), 1, 4000)
	want[b] = [2]float64{31, 12}
	check("the second process after a 4 kWh hour at the second home", bill(other.As(f.auth)), want)
	if n := second.take(); n["query.demand_readings"] != 1 {
		t.Errorf("the second process after a 4 kWh hour at the second home: %d read(s) of readings, want 1 (the second home's March)",
			n["query.demand_readings"])
	}
	check("a process without priced buckets, after both hours", bill(fresh.As(f.auth)), want)
}

// TestAMonthAnotherProcessKeptAnewIsServedFromItsKeptPeaks: a process holding a home's
// February and March peaks, after a reading changes March and another process (the one
// holding the background pricer's lease, say) measures and keeps it anew, serves March
// from those kept peaks and February from its own: it measures nothing, and bills the new
// 5 kW peak (15) beside February's 1 kW (3). 1 kWh every hour of 1–5 February and March
// 2024 (energy 30 each), then a 5 kWh hour on 7 March (energy 1.25 more).
func TestAMonthAnotherProcessKeptAnewIsServedFromItsKeptPeaks(t *testing.T) {
	f, loc, reads := newDemandHome(t, nil)
	f.readings(loc, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	bill := func(do func(method, path string, body any) apitest.Response, what string, energy, demand float64) {
		t.Helper()
		r := do("POST", "/costs/interval/"+loc+"?aggregation=MONTH&include_charges=true",
			map[string]any{"start_time": "2024-02-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z"})
		var b struct {
			Charges struct{ Energy, Demand float64 }
		}
		r.JSON(t, &b)
		if r.Status != 200 || !close6(b.Charges.Energy, energy) || !close6(b.Charges.Demand, demand) {
			t.Fatalf("%s: want energy %v, demand %v; got %d %s", what, energy, demand, r.Status, r.Body)
		}
	}
	bill(f.do, "the first process's first bill", 60, 6)
	query.WaitAnswerStores(f.api.App.Pricer) // the peaks a process measured are kept after its answer
	other := apitest.Start(t, apitest.Options{ShareWith: f.api})
	bill(other.As(f.auth), "the other process's first bill", 60, 6)
	f.readings(loc, time.Date(2024, 3, 7, 10, 0, 0, 0, time.UTC), 1, 5000)
	bill(other.As(f.auth), "the other process after a 5 kWh hour on 7 March", 61.25, 18)
	query.WaitAnswerStores(other.App.Pricer)
	measured, stored := reads.measured.Load(), reads.stored.Load()
	bill(f.do, "the first process after the other kept March anew", 61.25, 18)
	if n, s := reads.measured.Load()-measured, reads.stored.Load()-stored; n != 0 || s != 1 {
		t.Errorf("the first process after the other kept March anew: %d read(s) of readings, %d of kept peaks; want 0 and 1", n, s)
	}
}
