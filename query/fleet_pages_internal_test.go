package query

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
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
