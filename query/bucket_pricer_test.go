package query_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestBucketPricerPricesWhatIngestTouchedUnderALease runs background passes on the day
// after the fleet's readings: a pass prices their buckets, so the dashboard's answer runs
// no pricing statement; while another process holds the scope's lease, a pass leaves the
// scope alone; the counts and the lag are on /metrics.
func TestBucketPricerPricesWhatIngestTouchedUnderALease(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) }
	f := newBucketFleet(t, now)
	ctx := context.Background()
	bp := query.NewBucketPricer(f.api.App.Pricer, f.api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if f.priced() == 0 {
		t.Fatal("a background pass priced no bucket of the fleet's new readings")
	}
	if rows, n := f.fleet(f.do); n != 0 || len(rows) != 10 {
		t.Fatalf("after a background pass the fleet ran %d pricing statements for %d rows (want none, 10)", n, len(rows))
	}

	unlock, ok, err := f.api.App.Cache.Lock(ctx, "bucket-pricer:"+f.scope.AccountID+":false", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take the scope's lease: %v (held %t)", err, ok)
	}
	f.readings(f.a, time.Date(2024, 3, 4, 12, 30, 0, 0, time.UTC), 1, 700)
	p0 := f.priced()
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if f.priced() != p0 {
		t.Errorf("a pass priced %d buckets of a scope whose lease another process holds", f.priced()-p0)
	}
	unlock()
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.priced() - p0; got != 1 {
		t.Errorf("after the lease was released a pass priced %d buckets, want the new reading's day", got)
	}
	if rows, n := f.fleet(f.do); n != 0 || !close6(rows[f.a+" 2024-03-04"].Energy.ValueExact, 24700) {
		t.Errorf("after the pass: %d pricing statements, A on March 4 %+v", n, rows[f.a+" 2024-03-04"])
	}

	r := f.do("GET", "/metrics", nil)
	for _, want := range []string{"kwhouse_fleet_buckets_served_total", "kwhouse_fleet_buckets_priced_total", "kwhouse_fleet_buckets_invalidated_total"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if bp.Lag() < 0 {
		t.Errorf("lag %v", bp.Lag())
	}
}

// TestBucketPricerLeavesDirectionsWithoutReadings: a day of import readings at a tiered
// location makes its export buckets stale too (its tier counters count both directions),
// but with no export reading in the window they are empty: a pass prices the import day
// with one statement, and the rest of its month with another (the tier chain's later days,
// empty, so that the month is kept whole), and runs none for exports; the fleet is then
// served.
func TestBucketPricerLeavesDirectionsWithoutReadings(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) }
	f := newBucketFleet(t, now)
	c := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.1, "to_kwh": 10}, map[string]any{"fixed": 0.2}})})
	f.readings(c, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	ctx := context.Background()
	bp := query.NewBucketPricer(f.api.App.Pricer, f.api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	f.readings(c, time.Date(2024, 3, 5, 12, 30, 0, 0, time.UTC), 1, 700)
	n0 := f.count.n.Load()
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.count.n.Load() - n0; n != 2 {
		t.Errorf("a pass after one import reading at a tiered location ran %d pricing statements, want 2 (none for exports)", n)
	}
	if rows, n := f.fleet(f.do); n != 0 || len(rows) != 15 || !close6(rows[c+" 2024-03-05"].Energy.ValueExact, 24700) {
		t.Errorf("after the pass: %d pricing statements, %d rows, C on March 5 %+v", n, len(rows), rows[c+" 2024-03-05"])
	}
}

// A pass that priced a day again keeps the day's month (its whole local month verified
// against its buckets' latest versions) as a priced month: after a reading of B on 3
// March and a pass, another process's year by MONTH reads kept months only, no bucket,
// and is exact (B's March: 120 hours of 1,000 Wh and a new 500 Wh at 0.25).
func TestBucketPricerKeepsTheMonthsItPricedAgain(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) }
	f := newBucketFleet(t, now)
	ctx := context.Background()
	bp := query.NewBucketPricer(f.api.App.Pricer, f.api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	f.readings(f.b, time.Date(2024, 3, 3, 12, 30, 0, 0, time.UTC), 1, 500)
	if err := bp.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe, Now: now})
	f2 := *f
	f2.do, f2.count = other.As(f.auth), second
	checkMonths(t, "another process's answer after the pass", f2.months(),
		map[string][2]float64{f.a + " 2024-03": {120000, 14.4}, f.b + " 2024-03": {120500, 30.125}})
	if n := second.take(); n["query.month_stored"] != 1 || n["query.bucket_months"] != 0 || n["query.bucket_stored"] != 0 {
		t.Errorf("another process's answer after the pass: %v, want every month served as kept", n)
	}
}
