package query_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
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
