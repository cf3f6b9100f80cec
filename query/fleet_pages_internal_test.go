package query

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// TestRowsPerLocationCountsTheLocalBucketsOfTheFewestZone: February 2024 (UTC) touches 29
// local days in London (GMT) and 30 in New York (31 January 19:00 to 29 February 19:00);
// March 2024 touches 32 in London too (its last hour is 1 April 00:00–01:00 BST); 2024
// (UTC) touches 12 local months in London and 13 in New York. A chunk is
// sized by the fewest, so a fleet of both zones is never short.
func TestRowsPerLocationCountsTheLocalBucketsOfTheFewestZone(t *testing.T) {
	london, newYork := catalog.Location{Timezone: "Europe/London"}, catalog.Location{Timezone: "America/New_York"}
	feb := FleetRequest{Start: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}
	march := FleetRequest{Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)}
	year := FleetRequest{Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	day, marchDay, month, none := feb, march, year, feb
	day.Aggregation, marchDay.Aggregation, month.Aggregation, none.Aggregation = AggregationDay, AggregationDay, AggregationMonth, FleetAggregationNone
	for _, c := range []struct {
		what string
		req  FleetRequest
		locs map[string]catalog.Location
		want int
	}{
		{"February by DAY, London", day, map[string]catalog.Location{"a": london}, 29},
		{"February by DAY, New York", day, map[string]catalog.Location{"a": newYork}, 30},
		{"February by DAY, both", day, map[string]catalog.Location{"a": london, "b": newYork}, 29},
		{"March by DAY, London", marchDay, map[string]catalog.Location{"a": london}, 32},
		{"2024 by MONTH, London", month, map[string]catalog.Location{"a": london}, 12},
		{"2024 by MONTH, New York", month, map[string]catalog.Location{"a": newYork}, 13},
		{"February, one row each", none, map[string]catalog.Location{"a": newYork}, 1},
	} {
		if got := rowsPerLocation(c.req, c.locs); got != c.want {
			t.Errorf("%s: %d rows a location, want %d", c.what, got, c.want)
		}
	}
}

// TestPageBoundsAreNeverBelowTheRows: London, March 2024 (UTC) by DAY touches 32 local days
// (its last hour is 1 April 00:00–01:00 BST), and a UTC date from 31 March on touches two.
// A location with records counted every date has at most 32 rows; on 10 March only, 1; on
// 5 and 20 March only, at most 2 dates × 2 local days = 4; the cursor's location, cut after
// 30 March, 2 (31 March and 1 April); a location without an import tariff none (it is
// skipped). By MONTH, 2024 cut after November leaves December; NONE gives one row, none
// for the cursor's location.
func TestPageBoundsAreNeverBelowTheRows(t *testing.T) {
	london := catalog.Location{Timezone: "Europe/London"}
	day := func(y int, m time.Month, d int) uint32 { return dayNumber(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)) }
	march := FleetRequest{Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC),
		Direction: "IMPORT", Aggregation: AggregationDay}
	year := march
	year.Start, year.End, year.Aggregation = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), AggregationMonth
	none := march
	none.Aggregation = FleetAggregationNone
	locs := map[string]catalog.Location{"a": london, "b": london, "c": london}
	plans := map[string]tariffs.Plan{"a": {HasImport: true}, "c": {HasImport: true}, "b": {HasExport: true}}
	bounds := func(req FleetRequest, cur FleetRow) *pageBounds {
		return newPageBounds(req, cur, locs, func(id string) tariffs.Plan { return plans[id] })
	}
	after := func(loc, date string) FleetRow { return FleetRow{key: fleetKey{group: loc, date: date}} }
	whole := aheadLoc{first: day(2024, 3, 1), last: day(2024, 3, 31), days: 31}
	for _, c := range []struct {
		what string
		b    *pageBounds
		id   string
		at   aheadLoc
		want int
	}{
		{"every date", bounds(march, FleetRow{}), "a", whole, 32},
		{"10 March only", bounds(march, FleetRow{}), "a", aheadLoc{day(2024, 3, 10), day(2024, 3, 10), 1}, 1},
		{"5 and 20 March only", bounds(march, FleetRow{}), "a", aheadLoc{day(2024, 3, 5), day(2024, 3, 20), 2}, 4},
		{"the cursor's, after 30 March", bounds(march, after("a", "2024-03-30")), "a", whole, 2},
		{"another than the cursor's", bounds(march, after("a", "2024-03-30")), "c", whole, 32},
		{"no import tariff", bounds(march, FleetRow{}), "b", whole, 0},
		{"2024 by MONTH after November", bounds(year, after("a", "2024-11")), "a",
			aheadLoc{day(2024, 1, 1), day(2024, 12, 31), 366}, 1},
		{"NONE", bounds(none, FleetRow{}), "a", whole, 1},
		{"NONE, the cursor's", bounds(none, after("a", "")), "a", whole, 0},
	} {
		if got := c.b.rowsAtMost(c.id, c.at); got != c.want {
			t.Errorf("%s: at most %d rows, want %d", c.what, got, c.want)
		}
	}
}

// TestChunkEndTakesTheFewestLocationsThatCanFillThePage: a, c and e can give 3 rows each,
// b and d none. Wanting 5 rows from a, the chunk is a–c; 3 from b, b–c; 10 from a, all of
// them. When the read stopped at c (truncated), 10 from a ends the chunk at c, and from d
// the caller sizes it (0).
func TestChunkEndTakesTheFewestLocationsThatCanFillThePage(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	three := func(string, aheadLoc) int { return 3 }
	all := &pageAhead{locs: map[string]aheadLoc{"a": {}, "c": {}, "e": {}}, last: "e"}
	cut := &pageAhead{locs: map[string]aheadLoc{"a": {}, "c": {}}, last: "c", truncated: true}
	for _, c := range []struct {
		what          string
		a             *pageAhead
		from, want, j int
	}{
		{"5 from a", all, 0, 5, 3},
		{"3 from b", all, 1, 3, 3},
		{"10 from a", all, 0, 10, 5},
		{"10 from a, read to c", cut, 0, 10, 3},
		{"from d, read to c", cut, 3, 1, 0},
	} {
		if got := c.a.chunkEnd(ids, c.from, c.want, three); got != c.j {
			t.Errorf("%s: the chunk ends at %d, want %d", c.what, got, c.j)
		}
	}
}
