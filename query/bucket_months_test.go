package query_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// months asks the fleet's MONTH rows of 2024, by location and month.
func (f *bucketFleet) months() map[string]bucketRow {
	f.t.Helper()
	return f.rowsOf(f.do("POST", "/costs/fleet", map[string]any{"start_time": "2024-01-01T00:00:00Z",
		"end_time": "2025-01-01T00:00:00Z", "aggregation": "MONTH"}))
}

// A month is served whole only when every day's bucket was priced under that day's counts
// as read now, not when the month's counts merely add up: here B's March 2 bucket was
// priced under one reading row more than is counted now (what a replica that has not yet
// fetched a count it priced from shows; the count is lowered by a row of n = 2⁶⁴ − 1,
// which the summing table adds modulo 2⁶⁴), and March 4 gets a new reading. The month's
// counts add up to what its buckets were priced under, so a sum check would serve March 4
// without the new reading; both days must be priced again (docs/costs.md, "MONTH and
// NONE answers"). On one server and on a cluster alike.
func TestAMonthServesNoDayWhoseCountsDifferThoughItsSumsAgree(t *testing.T) {
	f := newBucketFleet(t, nil)
	// B: 120 hourly readings of 1,000 Wh from 1 March, 0.25/kWh.
	b := func(rows map[string]bucketRow) bucketRow { return rows[f.b+" 2024-03"] }
	if got := b(f.months()); !close6(got.Energy.ValueExact, 120000) || !close6(got.Tariff.Value, 30) {
		t.Fatalf("first answer: B's March %v Wh, %v; want 120000 Wh, 30", got.Energy.ValueExact, got.Tariff.Value)
	}
	f.months()
	db := f.api.App.DB
	if err := db.Exec(context.Background(), chstore.Tool(`INSERT INTO reading_changes (account_id, live_mode, location_id,
		device_id, direction, day, n, last_version) SELECT ?, toUInt8(0), ?, '', 'IMPORT', toDate('2024-03-02'), toUInt64(?), toUInt64(?)`),
		f.scope.AccountID, f.b, uint64(math.MaxUint64), uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	f.readings(f.b, time.Date(2024, 3, 4, 12, 30, 0, 0, time.UTC), 1, 500)
	p0 := f.priced()
	got := b(f.months())
	if !close6(got.Energy.ValueExact, 120500) || !close6(got.Tariff.Value, 30.125) {
		t.Errorf("after a reading of March 4: B's March %v Wh, %v; want 120500 Wh, 30.125", got.Energy.ValueExact, got.Tariff.Value)
	}
	// March 2 and 4 of B, and March 3 with them when the stale days are priced as one run.
	if n := f.priced() - p0; n < 2 || n > 3 {
		t.Errorf("after a reading of March 4: %d buckets priced, want March 2 to 4 of B", n)
	}
}

// A MONTH answer reads a zone's whole months for its tiered and untiered locations
// together: asked again, one read of month sums and one of change counts serve every
// month, C's tier crossing as priced. C is tiered by month: 1,000 Wh an hour over 120
// hours of March, the first 50 kWh at 0.10 and the other 70 at 0.20, 19.00. Market
// prices published for days without readings leave A's March whole; a price of a day
// with readings prices that day of A again. A: 1,000 Wh an hour at the market's 0.10 plus
// 0.02.
func TestAMonthAnswerReadsTieredAndUntieredLocationsTogether(t *testing.T) {
	f := newBucketFleet(t, nil)
	c := f.location(map[string]any{"tier_period": "MONTH", "schedule": flatRate([]any{
		map[string]any{"fixed": 0.10, "to_kwh": 50}, map[string]any{"fixed": 0.20}})})
	f.readings(c, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	check := func(what string, rows map[string]bucketRow, aMarch float64) {
		t.Helper()
		want := map[string][2]float64{f.a + " 2024-03": {120000, aMarch}, f.b + " 2024-03": {120000, 30}, c + " 2024-03": {120000, 19}}
		for k, w := range want {
			if g := rows[k]; !close6(g.Energy.ValueExact, w[0]) || !close6(g.Tariff.Value, w[1]) {
				t.Errorf("%s, %s: %v Wh, %v; want %v Wh, %v", what, k, g.Energy.ValueExact, g.Tariff.Value, w[0], w[1])
			}
		}
		if len(rows) != 3 {
			t.Errorf("%s: %d rows, want March of A, B and C", what, len(rows))
		}
	}
	check("first answer", f.months(), 14.4)
	f.count.take()
	p0 := f.count.n.Load()
	check("asked again", f.months(), 14.4)
	n := f.count.take()
	if n["query.bucket_months"] != 1 || n["query.count_months"] != 1 || n["query.bucket_stored"] != 0 || f.count.n.Load() != p0 {
		t.Errorf("asked again: %v, want one read of month sums and one of counts for the tiered and untiered locations, no day read, nothing priced", n)
	}
	// Market prices for days of March without readings change no bucket of A's March.
	f.prices(time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC), 0.3)
	check("after prices of March 10 and 11", f.months(), 14.4)
	if n := f.count.take(); n["query.bucket_stored"] != 0 || f.count.n.Load() != p0 {
		t.Errorf("after prices of days without readings: %v, want no day read, nothing priced", n)
	}
	// A price of March 3 (24 kWh of A) re-prices A's March: 14.40 + 24 × (0.30 − 0.10).
	p1 := f.priced()
	f.prices(time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), 0.3)
	check("after a price of March 3", f.months(), 19.2)
	if got := f.priced() - p1; got < 1 || got > 3 {
		t.Errorf("after a price of March 3: %d buckets priced, want A's March 2 to 4 at most", got)
	}
}

// A month whose day an answer has just priced again holds two versions of that day's
// bucket until ClickHouse merges them; a year by MONTH of another process is still summed
// from the month's buckets (their latest versions), with no day read and nothing priced,
// exact (B's March: 120 hours of 1,000 Wh and a new 500 Wh at 0.25), and the month is
// kept: asked again, it is served from priced months.
func TestAMonthRepricedAMinuteAgoIsSummedFromItsLatestBuckets(t *testing.T) {
	f := newBucketFleet(t, nil)
	ctx := context.Background()
	want := map[string][2]float64{f.a + " 2024-03": {120000, 14.4}, f.b + " 2024-03": {120000, 30}}
	checkMonths(t, "first answer", f.months(), want)
	// Merges would fold the two versions before the answer reads them (not on a cluster,
	// whose Distributed table takes no SYSTEM STOP MERGES: there the check is of money only).
	held := f.api.App.DB.Exec(ctx, chstore.Tool("SYSTEM STOP MERGES priced_buckets")) == nil
	defer f.api.App.DB.Exec(ctx, chstore.Tool("SYSTEM START MERGES priced_buckets"))
	f.readings(f.b, time.Date(2024, 3, 3, 12, 30, 0, 0, time.UTC), 1, 500)
	want[f.b+" 2024-03"] = [2]float64{120500, 30.125}
	p0 := f.priced()
	checkMonths(t, "after a reading of B on 3 March", f.months(), want)
	if got := f.priced() - p0; got != 1 {
		t.Fatalf("the answer after a reading of B on 3 March priced %d buckets, want 1", got)
	}

	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	f2 := *f
	f2.do, f2.count = other.As(f.auth), second
	checkMonths(t, "another process's answer", f2.months(), want)
	n := second.take()
	if n["query.bucket_stored"] != 0 || n["query.bucket_counts"] != 0 || second.n.Load() != 0 || (held && n["query.bucket_months_latest"] != 1) {
		t.Errorf("another process's answer: %v, %d pricing statements; want B's March summed from its latest buckets, no day read",
			n, second.n.Load())
	}
	checkMonths(t, "asked again", f2.months(), want)
	if n := second.take(); n["query.bucket_months"] != 0 || n["query.month_stored"] != 1 {
		t.Errorf("asked again: %v, want every month served as kept", n)
	}
}
