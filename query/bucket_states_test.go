package query

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) uint32 {
	return dayNumber(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// A count of a UTC date reaches the local days it overlaps (two in London's summer), a
// tiered one every later day of its chain; a price change the days of [date-1, date+1).
func TestCountsReachTheLocalDaysTheyTouch(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	rows := []countRow{
		{kind: 0, loc: "a", day: day(2024, 6, 10), n: 3},
		{kind: 0, loc: "a", day: day(2024, 6, 10), n: 1}, // the same grain, not yet summed by a merge
		{kind: 1, loc: "a", day: day(2024, 6, 20), n: 5},
		{kind: 1, loc: "a", day: 0, n: 7},
	}
	d0 := day(2024, 6, 1)
	n := newDayTable(nil, rows, london, false, d0, day(2024, 6, 30))
	a := n.index[objKey{"a", ""}]
	want := map[uint32]uint64{day(2024, 6, 10): 4, day(2024, 6, 11): 4} // 01:00 BST on the 10th to 01:00 on the 11th
	for j := 0; j < n.w; j++ {
		if got := n.readings(a, j); got != want[d0+uint32(j)] {
			t.Errorf("readings of day %d: %d, want %d", d0+uint32(j), got, want[d0+uint32(j)])
		}
	}
	// 19 June 01:00 BST to 21 June 01:00 BST: local 19, 20 and 21 June; every day 7 more.
	for j := 0; j < n.w; j++ {
		w := uint64(7)
		if d := d0 + uint32(j); d >= day(2024, 6, 19) && d <= day(2024, 6, 21) {
			w += 5
		}
		if got := n.prices("a", j); got != w {
			t.Errorf("price changes of day %d: %d, want %d", d0+uint32(j), got, w)
		}
	}
	if got := len(n.states(nil)); got != 2 {
		t.Errorf("%d states, want the 2 days with readings", got)
	}

	// Tiered: 29 June reaches to the end of July (29 June + 3 days is in July); the run ends 5 July.
	chained := newDayTable(nil, []countRow{{kind: 0, loc: "a", day: day(2024, 6, 29), n: 2}}, london, true,
		d0, day(2024, 7, 5))
	states := chained.states(nil)
	if len(states) != 7 { // 29 June to 5 July
		t.Errorf("tiered count reached %d days, want 7: %+v", len(states), states)
	}
	// Both local days the UTC date overlaps reach 5 July: counted twice, which is harmless
	// (counts are only compared with the ones a bucket was priced under).
	if got := states[len(states)-1].ReadingsNow; got != 4 {
		t.Errorf("tiered count on 5 July: %d, want 4", got)
	}
}

// Each bucket's latest version counts, whole; a bucket is valid only under the counts
// there are now and of the same kind; a counted day without a bucket is a stale state.
func TestDayTableKeepsTheLatestBucketBesideItsCounts(t *testing.T) {
	d1, d2, d3 := day(2024, 6, 1), day(2024, 6, 2), day(2024, 6, 3)
	bucket := func(loc string, d uint32, seen uint64, energy float64, version uint64, kind uint8) storedBucket {
		return storedBucket{state: bucketState{Loc: loc, Day: dateOf(d), Stored: 1, Energy: energy, ReadingsSeen: seen, PricesSeen: 1},
			day: d, sameKind: kind, version: version}
	}
	stored := []storedBucket{
		bucket("b", d1, 2, 10, 5, 1), bucket("b", d1, 9, 99, 4, 1), // an older version, other counts
		bucket("a", d1, 2, 1, 1, 1),
		bucket("a", d2, 1, 2, 1, 1), // priced before a reading came
		bucket("c", d1, 2, 3, 1, 0), // priced in another zone
	}
	// UTC dates in UTC: each count reaches its own day only.
	counts := []countRow{{kind: 0, loc: "a", day: d1, n: 2}, {kind: 0, loc: "a", day: d2, n: 2}, {kind: 0, loc: "a", day: d3, n: 1},
		{kind: 0, loc: "b", day: d1, n: 2}, {kind: 0, loc: "c", day: d1, n: 2},
		{kind: 1, loc: "a", day: d1 + 1, n: 1}, // the days of [d1, d3): d1 and d2
		{kind: 1, loc: "b", day: 0, n: 1}, {kind: 1, loc: "c", day: 0, n: 1}}
	got := newDayTable(stored, counts, time.UTC, false, d1, d3).states(stored)
	type want struct {
		loc          string
		day          uint32
		stored       uint8
		energy       float64
		valid        uint8
		prices, read uint64
	}
	wants := []want{{"a", d1, 1, 1, 1, 1, 2}, {"a", d2, 1, 2, 0, 1, 2}, {"a", d3, 0, 0, 0, 0, 1},
		{"b", d1, 1, 10, 1, 1, 2}, {"c", d1, 1, 3, 0, 1, 2}}
	if len(got) != len(wants) {
		t.Fatalf("%d states, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.Loc != w.loc || !g.Day.Equal(dateOf(w.day)) || g.Stored != w.stored || g.Energy != w.energy || g.Valid != w.valid ||
			g.PricesNow != w.prices || g.ReadingsNow != w.read {
			t.Errorf("state %d: %+v, want %+v", i, g, w)
		}
	}
}
