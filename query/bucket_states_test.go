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
func TestCountsByDayReachTheLocalDaysTheyTouch(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	rows := []countRow{
		{kind: 0, loc: "a", day: day(2024, 6, 10), n: 3},
		{kind: 0, loc: "a", day: day(2024, 6, 10), n: 1}, // the same grain, not yet summed by a merge
		{kind: 1, loc: "a", day: day(2024, 6, 20), n: 5},
		{kind: 1, loc: "a", day: 0, n: 7},
	}
	n := countsByDay(rows, london, false, day(2024, 6, 1), day(2024, 6, 30))
	want := map[uint32]uint64{day(2024, 6, 10): 4, day(2024, 6, 11): 4} // 01:00 BST on the 10th to 01:00 on the 11th
	if len(n.readings) != len(want) {
		t.Errorf("readings %v, want days %v", n.readings, want)
	}
	for d, w := range want {
		if got := n.readings[stateKey{"a", "", d}]; got != w {
			t.Errorf("readings of day %d: %d, want %d", d, got, w)
		}
	}
	// 19 June 01:00 BST to 21 June 01:00 BST: local 19, 20 and 21 June.
	for _, d := range []uint32{day(2024, 6, 19), day(2024, 6, 20), day(2024, 6, 21)} {
		if got := n.dated[stateKey{"a", "", d}]; got != 5 {
			t.Errorf("price changes of day %d: %d, want 5", d, got)
		}
	}
	if len(n.dated) != 3 || n.every["a"] != 7 {
		t.Errorf("dated %v, every %v", n.dated, n.every)
	}

	// Tiered: 29 June reaches to the end of July (29 June + 3 days is in July); the run ends 5 July.
	chained := countsByDay([]countRow{{kind: 0, loc: "a", day: day(2024, 6, 29), n: 2}}, london, true,
		day(2024, 6, 1), day(2024, 7, 5))
	if len(chained.readings) != 7 { // 29 June to 5 July
		t.Errorf("tiered count reached %d days, want 7: %v", len(chained.readings), chained.readings)
	}
	// Both local days the UTC date overlaps reach 5 July: counted twice, which is harmless
	// (counts are only compared with the ones a bucket was priced under).
	if got := chained.readings[stateKey{"a", "", day(2024, 7, 5)}]; got != 4 {
		t.Errorf("tiered count on 5 July: %d, want 4", got)
	}
}

// Each bucket's latest version counts, whole; a bucket is valid only under the counts
// there are now and of the same kind; a counted day without a bucket is a stale state.
func TestMergeStatesKeepsTheLatestBucketBesideItsCounts(t *testing.T) {
	d1, d2, d3 := day(2024, 6, 1), day(2024, 6, 2), day(2024, 6, 3)
	bucket := func(loc string, d uint32, seen uint64, energy float64, version uint64, kind uint8) storedBucket {
		return storedBucket{state: bucketState{Loc: loc, Day: dateOf(d), Stored: 1, Energy: energy, ReadingsSeen: seen, PricesSeen: 1},
			day: d, sameKind: kind, version: version}
	}
	stored := latestBuckets([]storedBucket{
		bucket("b", d1, 2, 10, 5, 1), bucket("b", d1, 9, 99, 4, 1), // an older version, other counts
		bucket("a", d1, 2, 1, 1, 1),
		bucket("a", d2, 1, 2, 1, 1), // priced before a reading came
		bucket("c", d1, 2, 3, 1, 0), // priced in another zone
	})
	n := dayCounts{readings: map[stateKey]uint64{{"a", "", d1}: 2, {"a", "", d2}: 2, {"a", "", d3}: 1,
		{"b", "", d1}: 2, {"c", "", d1}: 2}, dated: map[stateKey]uint64{{"a", "", d1}: 1}, every: map[string]uint64{"b": 1, "c": 1}}
	got := mergeStates(stored, n)
	type want struct {
		loc          string
		day          uint32
		stored       uint8
		energy       float64
		valid        uint8
		prices, read uint64
	}
	wants := []want{{"a", d1, 1, 1, 1, 1, 2}, {"a", d2, 1, 2, 0, 0, 2}, {"a", d3, 0, 0, 0, 0, 1},
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
