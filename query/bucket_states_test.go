package query

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// countTable reads the change counts stored in db (account acc) for a batch of location
// "a" over the local days [d0, d1] of London through bucket_counts, the one definition of
// the days a count reaches, and puts them on a day table.
func countTable(t *testing.T, db *chstore.DB, tiered bool, d0, d1 time.Time) (*dayTable, []countRow) {
	t.Helper()
	london, _ := time.LoadLocation("Europe/London")
	c := &Pricer{db: db}
	b := fleetBatch{zone: "Europe/London", tiered: tiered, ids: []string{"a"}}
	run := dayRunOf(time.Date(d0.Year(), d0.Month(), d0.Day(), 0, 0, 0, 0, london),
		time.Date(d1.Year(), d1.Month(), d1.Day()+1, 0, 0, 0, 0, london), london)
	ctx := withLocs(context.Background(), b)
	counts, err := c.changeCounts(ctx, stateArgs(kwhouse.Scope{AccountID: "acc"}, FleetRequest{Direction: "IMPORT"}, b, run), 0)
	if err != nil {
		t.Fatal(err)
	}
	return newDayTable(nil, counts, dayNumber(d0), dayNumber(d1)), counts
}

// A count of a UTC date reaches the local days it overlaps (two in London's summer), a
// tiered one every later day of its chain; a price change the days of [date-1, date+1).
func TestCountsReachTheLocalDaysTheyTouch(t *testing.T) {
	db := testkit.ClickHouse(t)
	ctx := context.Background()
	date := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	// 10 June twice (the same grain, not yet summed by a merge), 29 June; an export of 12 June.
	reads := [][]any{{"IMPORT", "2024-06-10", 3}, {"IMPORT", "2024-06-10", 1}, {"IMPORT", "2024-06-29", 2}, {"EXPORT", "2024-06-12", 1}}
	err := db.InsertRows(ctx, chstore.Tool(`INSERT INTO reading_changes (account_id, live_mode, location_id, device_id,
		direction, day, n, last_version) VALUES`), len(reads), func(i int) []any {
		r := reads[i]
		return []any{"acc", uint8(0), "a", "", r[0], date(r[1].(string)), uint64(r[2].(int)), uint64(i)}
	})
	if err != nil {
		t.Fatal(err)
	}
	prices := [][]any{{"2024-06-20", 5}, {"1970-01-01", 7}}
	err = db.InsertRows(ctx, chstore.Tool(`INSERT INTO price_changes (account_id, live_mode, location_id, day, n, version) VALUES`),
		len(prices), func(i int) []any {
			return []any{"acc", uint8(0), "a", date(prices[i][0].(string)), uint64(prices[i][1].(int)), uint64(i)}
		})
	if err != nil {
		t.Fatal(err)
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2024, m, day, 0, 0, 0, 0, time.UTC) }
	n, rows := countTable(t, db, false, d(6, 1), d(6, 30))
	// One row per count as stored (at most 3 of imports and the 2 price changes), though
	// each date of June reaches two local days.
	if len(rows) > 5 {
		t.Errorf("%d count rows read, want one per stored count (at most 5): %+v", len(rows), rows)
	}
	a := n.index[objKey{"a", ""}]
	// 01:00 BST on the 10th to 01:00 on the 11th; 29 June likewise; exports are another direction.
	want := map[uint32]uint64{dayNumber(d(6, 10)): 4, dayNumber(d(6, 11)): 4, dayNumber(d(6, 29)): 2, dayNumber(d(6, 30)): 2}
	for j := 0; j < n.w; j++ {
		if got := n.readings(a, j); got != want[n.d0+uint32(j)] {
			t.Errorf("readings of day %d: %d, want %d", n.d0+uint32(j), got, want[n.d0+uint32(j)])
		}
	}
	// 19 June 01:00 BST to 21 June 01:00 BST: local 19, 20 and 21 June; every day 7 more.
	for j := 0; j < n.w; j++ {
		w := uint64(7)
		if day := n.d0 + uint32(j); day >= dayNumber(d(6, 19)) && day <= dayNumber(d(6, 21)) {
			w += 5
		}
		if got := n.prices("a", j); got != w {
			t.Errorf("price changes of day %d: %d, want %d", n.d0+uint32(j), got, w)
		}
	}
	if got := n.states(nil, nil, 1)[0]; len(got.stale) != 4 || len(got.served) != 0 {
		t.Errorf("%d stale states and %d served, want the 4 days with readings stale", len(got.stale), len(got.served))
	}

	// Tiered (both directions): 10 June reaches to the end of June, 29 June to the end of
	// July (29 June + 3 days is in July); the run ends 5 July. The export of 12 June counts.
	chained, _ := countTable(t, db, true, d(6, 1), d(7, 5))
	a = chained.index[objKey{"a", ""}]
	for _, c := range []struct {
		day  time.Time
		want uint64
	}{{d(6, 9), 0}, {d(6, 10), 4}, {d(6, 11), 8}, {d(6, 12), 9}, {d(6, 28), 10}, {d(6, 29), 12}, {d(6, 30), 14}, {d(7, 1), 4}, {d(7, 5), 4}} {
		// Both local days the UTC date overlaps reach on: counted twice, which is harmless
		// (counts are only compared with the ones a bucket was priced under).
		if got := chained.readings(a, int(dayNumber(c.day)-chained.d0)); got != c.want {
			t.Errorf("tiered readings of %s: %d, want %d", c.day.Format(time.DateOnly), got, c.want)
		}
	}
}

// Each bucket's latest version counts, whole; a bucket is valid only under the counts
// there are now and of the same kind; a counted day without a bucket is a stale state. A
// location whose every day is valid serves its non-empty buckets as sums; every day of a
// location with a stale one is a state beside its counts.
func TestDayTableKeepsTheLatestBucketBesideItsCounts(t *testing.T) {
	day := func(d int) uint32 { return dayNumber(time.Date(2024, 6, d, 0, 0, 0, 0, time.UTC)) }
	d1, d2, d3 := day(1), day(2), day(3)
	bucket := func(loc string, d uint32, seen uint64, energy float64, version uint64, kind uint8) storedBucket {
		return storedBucket{state: bucketState{Loc: loc, Day: dateOf(d), DayStart: d * 86400, Stored: 1, Energy: energy,
			ReadingsSeen: seen, PricesSeen: 1}, day: d, sameKind: kind, version: version}
	}
	empty := bucket("d", d2, 0, 0, 1, 1)
	empty.state.Empty = 1
	stored := []storedBucket{
		bucket("b", d1, 2, 10, 5, 1), bucket("b", d1, 9, 99, 4, 1), // an older version, other counts
		bucket("a", d1, 2, 1, 1, 1),
		bucket("a", d2, 1, 2, 1, 1), // priced before a reading came
		bucket("c", d1, 2, 3, 1, 0), // priced in another zone
		bucket("d", d1, 2, 4, 1, 1), empty, bucket("d", d3, 2, 5, 1, 1),
	}
	// Each count reaching its own day only, but one dated price change reaching d1 and d2.
	counts := []countRow{{kind: 0, loc: "a", a: d1, b: d1, a1: d1, b1: d1, n: 2}, {kind: 0, loc: "a", a: d2, b: d2, a1: d2, b1: d2, n: 2},
		{kind: 0, loc: "a", a: d3, b: d3, a1: d3, b1: d3, n: 1}, {kind: 0, loc: "b", a: d1, b: d1, a1: d1, b1: d1, n: 2}, {kind: 0, loc: "c", a: d1, b: d1, a1: d1, b1: d1, n: 2},
		{kind: 0, loc: "d", a: d1, b: d1, a1: d1, b1: d1, n: 2}, {kind: 0, loc: "d", a: d3, b: d3, a1: d3, b1: d3, n: 2},
		{kind: 1, loc: "a", a: d1, b: d2, a1: d1, b1: d2, n: 1}, {kind: 2, loc: "b", n: 1}, {kind: 2, loc: "c", n: 1}, {kind: 2, loc: "d", n: 1}}
	got := newDayTable(stored, counts, d1, d3).states(stored, nil, 1)[0]
	// b's latest bucket and d's two non-empty ones are served, in (location, day) order.
	if len(got.served) != 3 || got.served[0].Loc != "b" || got.served[0].Energy != 10 || got.served[0].Key != d1*86400 ||
		got.served[1].Loc != "d" || got.served[1].Energy != 4 || got.served[2].Energy != 5 || cap(got.served) != 3 {
		t.Errorf("served %+v, want b's latest bucket of day 1 and d's of days 1 and 3", got.served)
	}
	// Split by location into groups (a shared read's batches), each made to its size.
	split := newDayTable(stored, counts, d1, d3).states(stored, func(loc string) int { return map[string]int{"a": 1}[loc] }, 2)
	if len(split[1].stale) != 3 || cap(split[1].stale) != 3 || len(split[1].served) != 0 || len(split[0].stale) != 1 ||
		split[0].stale[0].Loc != "c" || len(split[0].served) != 3 {
		t.Errorf("states split into groups of %d stale, %d served and %d stale (capacity %d), %d served; want c, b d and a",
			len(split[0].stale), len(split[0].served), len(split[1].stale), cap(split[1].stale), len(split[1].served))
	}
	type want struct {
		loc          string
		day          uint32
		stored       uint8
		energy       float64
		valid        uint8
		prices, read uint64
	}
	// a: day 1 valid, day 2 priced under other counts, day 3 counted without a bucket; c of another kind.
	wants := []want{{"a", d1, 1, 1, 1, 1, 2}, {"a", d2, 1, 2, 0, 1, 2}, {"a", d3, 0, 0, 0, 0, 1}, {"c", d1, 1, 3, 0, 1, 2}}
	if len(got.stale) != len(wants) {
		t.Fatalf("%d stale states, want %d: %+v", len(got.stale), len(wants), got.stale)
	}
	for i, w := range wants {
		g := got.stale[i]
		if g.Loc != w.loc || !g.Day.Equal(dateOf(w.day)) || g.Stored != w.stored || g.Energy != w.energy || g.Valid != w.valid ||
			g.PricesNow != w.prices || g.ReadingsNow != w.read {
			t.Errorf("state %d: %+v, want %+v", i, g, w)
		}
	}
}
