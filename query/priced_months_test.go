package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
)

// monthFleet is bucketFleet with C, tiered by month (the first 50 kWh at 0.10, the rest at
// 0.20), 1,000 Wh an hour over 1–5 April UTC (19.00), and A's market at 0.10 over April
// with 48 hourly readings of 1,000 Wh from 8 April (A's April 48 × 0.12 = 5.76).
func newMonthFleet(t *testing.T) (*bucketFleet, string) {
	f := newBucketFleet(t, nil)
	c := f.location(map[string]any{"tier_period": "MONTH", "schedule": flatRate([]any{
		map[string]any{"fixed": 0.10, "to_kwh": 50}, map[string]any{"fixed": 0.20}})})
	f.readings(c, time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	f.prices(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), 0.1)
	f.readings(f.a, time.Date(2024, 4, 8, 0, 0, 0, 0, time.UTC), 48, 1000)
	return f, c
}

// checkMonths fails unless rows are exactly want (location and month → Wh, money).
func checkMonths(t *testing.T, what string, rows map[string]bucketRow, want map[string][2]float64) {
	t.Helper()
	for k, w := range want {
		if g := rows[k]; !close6(g.Energy.ValueExact, w[0]) || !close6(g.Tariff.Value, w[1]) {
			t.Errorf("%s, %s: %v Wh, %v; want %v Wh, %v", what, k, g.Energy.ValueExact, g.Tariff.Value, w[0], w[1])
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%s: %d rows, want %d: %v", what, len(rows), len(want), rows)
	}
}

// keptVersions counts the priced months kept of loc by month ("2024-03").
func keptVersions(t *testing.T, f *bucketFleet, loc string) map[string]uint64 {
	t.Helper()
	rows, err := f.api.App.DB.Query(context.Background(), chstore.Tool(
		"SELECT formatDateTime(month, '%Y-%m'), count() FROM priced_months WHERE location_id = ? GROUP BY month"), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var m string
		var n uint64
		if err := rows.Scan(&m, &n); err != nil {
			t.Fatal(err)
		}
		out[m] = n
	}
	return out
}

// A year by MONTH is served from priced months once they are kept: the second answer
// verifies every whole month against its buckets and keeps it, the third reads one row per
// location and month and the fingerprints of their reaches, no bucket or day count, and
// equals the first. Each change sends back to buckets the months whose reach it falls in,
// and only those, with exact money: a reading of B on 3 March (B's March 30 + 0.5 × 0.25),
// a market price of 8 April at 0.30 (A's April 24 × 0.32 + 24 × 0.12 = 10.56; A's March
// kept as it was), a reading of tiered C on 30 March (its March 0.10; its April, whose tier
// chain the reading reaches, priced again, still 19.00), and a deleted location.
func TestAYearByMonthIsServedFromPricedMonthsUntilItsReachChanges(t *testing.T) {
	f, c := newMonthFleet(t)
	want := map[string][2]float64{f.a + " 2024-03": {120000, 14.4}, f.a + " 2024-04": {48000, 5.76},
		f.b + " 2024-03": {120000, 30}, c + " 2024-04": {120000, 19}}
	first := f.months()
	checkMonths(t, "first answer", first, want)
	f.count.take()
	checkMonths(t, "second answer", f.months(), want)
	if n := f.count.take(); n["query.insert_months"] != 1 {
		t.Errorf("second answer: %v, want the verified months kept in one insert", n)
	}
	p0 := f.priced()
	third := f.months()
	sameRows(t, "third answer", third, first)
	n := f.count.take()
	if n["query.month_stored"] != 1 || n["query.month_prints"] != 1 || n["query.bucket_months"] != 0 || n["query.count_months"] != 0 ||
		n["query.bucket_stored"] != 0 || n["query.bucket_counts"] != 0 || f.priced() != p0 {
		t.Errorf("third answer: %v, %d priced; want one read of priced months and one of fingerprints, no bucket read", n, f.priced()-p0)
	}

	// A reading of B on 3 March: B's March alone goes back to its buckets.
	before := keptVersions(t, f, f.b)
	f.readings(f.b, time.Date(2024, 3, 3, 12, 30, 0, 0, time.UTC), 1, 500)
	want[f.b+" 2024-03"] = [2]float64{120500, 30.125}
	p0 = f.priced()
	checkMonths(t, "after a reading of B on 3 March", f.months(), want)
	if got := f.priced() - p0; got != 1 {
		t.Errorf("after a reading of B on 3 March: %d buckets priced, want 1", got)
	}
	checkMonths(t, "asked again", f.months(), want) // verifies and keeps B's March again, merged or not
	after := keptVersions(t, f, f.b)
	if after["2024-03"] != before["2024-03"]+1 || after["2024-02"] != before["2024-02"] || before["2024-03"] == 0 {
		t.Errorf("B's months kept %v before, %v after a reading of 3 March: want March alone kept again", before, after)
	}
	f.count.take()
	checkMonths(t, "asked a third time", f.months(), want)
	if n := f.count.take(); n["query.bucket_months"] != 0 {
		t.Errorf("asked a third time: %v, want every month served as kept", n)
	}

	// A market price of 8 April: A's April, not its March.
	before = keptVersions(t, f, f.a)
	f.prices(time.Date(2024, 4, 8, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 9, 0, 0, 0, 0, time.UTC), 0.3)
	want[f.a+" 2024-04"] = [2]float64{48000, 10.56}
	checkMonths(t, "after a price of 8 April", f.months(), want)
	checkMonths(t, "asked again", f.months(), want)
	after = keptVersions(t, f, f.a)
	if after["2024-04"] != before["2024-04"]+1 || after["2024-03"] != before["2024-03"] {
		t.Errorf("A's months kept %v before, %v after a price of 8 April: want April alone kept again", before, after)
	}

	// A reading of tiered C two days before April: its April's tier chain is priced again.
	f.readings(c, time.Date(2024, 3, 30, 12, 0, 0, 0, time.UTC), 1, 1000)
	want[c+" 2024-03"] = [2]float64{1000, 0.1}
	p0 = f.priced()
	checkMonths(t, "after a reading of C on 30 March", f.months(), want)
	if got := f.priced() - p0; got < 6 {
		t.Errorf("after a reading of C on 30 March: %d buckets priced, want its 30 March and its April's days", got)
	}

	// A deleted location: none of its months is served.
	if r := f.do("DELETE", "/locations/"+f.b, nil); r.Status != 202 {
		t.Fatalf("delete B: %d %s", r.Status, r.Body)
	}
	delete(want, f.b+" 2024-03")
	checkMonths(t, "after B was deleted", f.months(), want)
	waitNoMonths(t, f, f.b)
}

// waitNoMonths waits until the location's priced months are deleted (a mutation).
func waitNoMonths(t *testing.T, f *bucketFleet, loc string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if len(keptVersions(t, f, loc)) == 0 {
			return
		}
	}
	t.Fatalf("priced months of deleted location %s remain: %v", loc, keptVersions(t, f, loc))
}
