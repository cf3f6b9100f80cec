package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
)

// TestDemandMonthMeasuredAgainFromItsChangedDaysStaysExact: a kept month is measured again
// from its first changed day on (docs/costs.md, "Bill charges"), and its bill stays the
// bill of its readings now. The London home's 1 kW of 1–5 March bills a 1 kW peak (demand
// 3), measured whole and kept without its days (no month of it was kept); with a four-day
// reading of 3 kW from 10 March (288 kWh) it bills a 3 kW peak (demand 9), measured whole
// again and kept with its days; a 1 kWh hour on 13 March, inside
// the four-day reading, makes it 4 kW (demand 12): the days from 12 March are measured
// again from the readings that reach them, the four-day reading of two days before
// included, the days before keep their peaks. An hour of 1 April, in March's reach (its
// fingerprint changes) but after it, measures no day of March again.
func TestDemandMonthMeasuredAgainFromItsChangedDaysStaysExact(t *testing.T) {
	f, loc, reads := newDemandHome(t, nil)
	query.MeasureFromChangedDays(f.api.App.Pricer) // a pass's way, through answers
	end := "2024-03-31T23:00:00Z"
	f.checkMarchBill(loc, end, "1–5 March", 30, 3)
	if err := f.api.App.Pricer.WaitBucketWrites(context.Background(), f.scope); err != nil {
		t.Fatal(err)
	}
	var kept uint64
	if err := f.api.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT count() FROM demand_days WHERE location_id = ?`),
		loc).Scan(&kept); err != nil || kept != 0 {
		t.Fatalf("the month's first measurement kept %d versions of its days (%v), want none", kept, err)
	}
	long := time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)
	f.must(f.do("PUT", "/meters/interval", []any{map[string]any{"location_id": loc, "start_time": long.Format(time.RFC3339),
		"end_time": long.Add(96 * time.Hour).Format(time.RFC3339), "value": 288000, "units": "WH"}}))
	f.checkMarchBill(loc, end, "with the four-day reading", 30+72, 9)
	if err := f.api.App.Pricer.WaitBucketWrites(context.Background(), f.scope); err != nil {
		t.Fatal(err)
	}
	var longest uint32
	var days uint64
	err := f.api.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT argMax(longest, version), argMax(length(day_peaks), version)
		FROM demand_days WHERE location_id = ?`), loc).Scan(&longest, &days)
	if err != nil {
		t.Fatal(err)
	}
	if longest != 96*3600 || days != 31 {
		t.Fatalf("kept March: longest reading %d s, %d day peaks; want %d s and 31", longest, days, 96*3600)
	}
	before := reads.measured.Load()
	f.readings(loc, time.Date(2024, 3, 13, 12, 0, 0, 0, time.UTC), 1, 1000)
	f.checkMarchBill(loc, end, "after an hour of 13 March", 30+72+0.25, 12)
	if n := reads.measured.Load() - before; n != 1 {
		t.Errorf("the bill measured its month with %d reads of readings, want 1", n)
	}
	f.readings(loc, time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC), 1, 6000)
	f.checkMarchBill(loc, end, "after a 6 kWh hour of 2 March", 30+72+0.25-0.25+1.5, 18)
	before = reads.measured.Load()
	f.readings(loc, time.Date(2024, 4, 1, 12, 0, 0, 0, time.UTC), 1, 9000)
	f.checkMarchBill(loc, end, "after an hour of 1 April", 30+72+0.25-0.25+1.5, 18)
	if n := reads.measured.Load() - before; n != 0 {
		t.Errorf("an hour of 1 April, in March's reach but after it, read March's readings %d time(s)", n)
	}
}

// TestAnAnswerMeasuresAFewStaleMonthsWholeWithoutTheirDays: an answer with few stale
// demand months (at most a location's year) reads their readings right after their
// fingerprints, not first their kept days and dates' change counts, and keeps their peaks
// without days; the days a pass kept stay as they were, and the next pass measures from
// them. A pass on 20 March keeps the London home's March with its days (1 kW: demand 3,
// energy 30); a 4 kWh hour on 13 March (4 kW in each of its quarters: demand 4 × 3 = 12,
// energy 30 + 4 × 0.25 = 31) is billed at once, from one read of readings and none of
// kept days; asked again, the bill serves the peaks it kept.
func TestAnAnswerMeasuresAFewStaleMonthsWholeWithoutTheirDays(t *testing.T) {
	f, loc, reads := newDemandHome(t, func() time.Time { return time.Date(2024, 3, 20, 12, 0, 0, 0, time.UTC) })
	ctx := context.Background()
	end := "2024-03-31T23:00:00Z"
	pass := func() {
		t.Helper()
		if err := query.NewBucketPricer(f.api.App.Pricer, f.api.App.Cache, testkit.Logger(), time.Minute, 35).Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.api.App.Pricer.WaitBucketWrites(ctx, f.scope); err != nil {
			t.Fatal(err)
		}
	}
	keptDays := func() (versions uint64) {
		t.Helper()
		if err := f.api.App.DB.QueryRow(ctx, chstore.Tool(`SELECT uniqExact(version) FROM demand_days
			WHERE location_id = ? AND toYYYYMM(month_start) = 202403`),
			loc).Scan(&versions); err != nil {
			t.Fatal(err)
		}
		return versions
	}
	pass()
	if n := keptDays(); n != 1 {
		t.Fatalf("the pass kept %d versions of March's days, want 1", n)
	}
	f.checkMarchBill(loc, end, "as the pass kept it", 30, 3)

	f.readings(loc, time.Date(2024, 3, 13, 12, 0, 0, 0, time.UTC), 1, 4000)
	measured, days := reads.measured.Load(), reads.days.Load()
	f.checkMarchBill(loc, end, "after a 4 kWh hour of 13 March", 31, 12)
	if n, d := reads.measured.Load()-measured, reads.days.Load()-days; n != 1 || d != 0 {
		t.Errorf("the bill read readings %d time(s) and kept days or date counts %d time(s), want 1 and 0", n, d)
	}
	if err := f.api.App.Pricer.WaitBucketWrites(ctx, f.scope); err != nil {
		t.Fatal(err)
	}
	if n := keptDays(); n != 1 {
		t.Errorf("after the answer, %d versions of March's days are kept, want the pass's alone", n)
	}
	measured = reads.measured.Load()
	f.checkMarchBill(loc, end, "asked again", 31, 12)
	if n := reads.measured.Load() - measured; n != 0 {
		t.Errorf("asked again, the bill read readings %d time(s), want 0 (the peaks it kept)", n)
	}

	// The next pass finds the answer's peaks kept under the fingerprint now: nothing to
	// measure; after another hour (3 kWh, lower than the peak) it measures March from 13
	// March's changed days and keeps them.
	f.readings(loc, time.Date(2024, 3, 14, 12, 0, 0, 0, time.UTC), 1, 3000)
	days = reads.days.Load()
	pass()
	if d := reads.days.Load() - days; d == 0 {
		t.Error("the pass measured March without reading its kept days and date counts")
	}
	if n := keptDays(); n != 2 {
		t.Errorf("after the second pass, %d versions of March's days are kept, want 2", n)
	}
	f.checkMarchBill(loc, end, "after a 3 kWh hour of 14 March", 31.75, 12)
}
