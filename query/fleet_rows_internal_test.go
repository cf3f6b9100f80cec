package query

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// TestFleetRowsRefuseByEveryRecordOfAnObject: rows come in runs of one object, counted a
// run at a time; an object is still refused by all of its records together. Device dev_b
// has records at two locations (ambiguous_location, though each run alone is at one);
// loc_c's export records arrive in its second day only, and it has no export tariff
// (no_tariff_connected); dev_a, at loc_a only, keeps its two rows.
func TestFleetRowsRefuseByEveryRecordOfAnObject(t *testing.T) {
	day1, day2 := uint32(time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).Unix()), uint32(time.Date(2024, 6, 2, 0, 0, 0, 0, time.UTC).Unix())
	locs := map[string]catalog.Location{}
	for _, id := range []string{"loc_a", "loc_b", "loc_c"} {
		locs[id] = catalog.Location{ID: id, Timezone: "UTC", CurrencyCode: "GBP"}
	}
	both := tariffs.Plan{HasImport: true, HasExport: true}
	plans := map[string]tariffs.Plan{"loc_a": both, "loc_b": both, "loc_c": {HasImport: true}}
	req := FleetRequest{Start: time.Unix(int64(day1), 0).UTC(), End: time.Unix(int64(day2)+86400, 0).UTC(),
		Aggregation: AggregationDay, GroupBy: GroupDevice}
	sums := []fleetSum{
		{Loc: "loc_a", Dev: "dev_a", Key: day1, NImport: 1}, {Loc: "loc_a", Dev: "dev_a", Key: day2, NImport: 1},
		{Loc: "loc_a", Dev: "dev_b", Key: day1, NImport: 1},
		{Loc: "loc_b", Dev: "dev_b", Key: day2, NImport: 1},
		{Loc: "loc_c", Dev: "dev_c", Key: day1, NImport: 1}, {Loc: "loc_c", Dev: "dev_c", Key: day2, NExport: 1},
	}
	rows, skipped := fleetRows(req, sums, locs, plans)
	want := []SkippedItem{{ID: "dev_b", Code: "ambiguous_location"}, {ID: "dev_c", Code: "no_tariff_connected"}}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped %+v, want %+v", skipped, want)
	}
	if len(rows) != 2 || rows[0].DeviceID != "dev_a" || rows[0].Date != "2024-06-01" || rows[1].Date != "2024-06-02" {
		t.Errorf("rows %+v, want dev_a's two days", rows)
	}
	req.GroupBy = GroupLocation
	if _, skipped = fleetRows(req, sums, locs, plans); len(skipped) != 1 || skipped[0] != (SkippedItem{ID: "loc_c", Code: "no_tariff_connected"}) {
		t.Errorf("by location: skipped %+v, want loc_c no_tariff_connected", skipped)
	}
}

// BenchmarkFleetRows turns a month by DAY of 1,000 locations (31,000 sums, in location
// order as served buckets come) into rows.
func BenchmarkFleetRows(b *testing.B) {
	start := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	req := FleetRequest{Start: start, End: start.AddDate(0, 1, 0), Aggregation: AggregationDay, GroupBy: GroupLocation}
	locs, plans := map[string]catalog.Location{}, map[string]tariffs.Plan{}
	var sums []fleetSum
	for i := range 1000 {
		id := fmt.Sprintf("loc_%024d", i)
		locs[id], plans[id] = catalog.Location{ID: id, Timezone: "Europe/London", CurrencyCode: "GBP"}, tariffs.Plan{HasImport: true}
		for d := range 30 {
			sums = append(sums, fleetSum{Loc: id, Key: uint32(start.AddDate(0, 0, d).Add(-time.Hour).Unix()), NImport: 48, Energy: 1, Money: 1})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		fleetRows(req, sums, locs, plans)
	}
}

// TestMergeSumsKeepsLocationOrder: two batches' sums, each in (location, device, bucket)
// order and interleaved by location as a tiered batch of every third location is, merge
// into that order; sums not in order are joined one batch after the other.
func TestMergeSumsKeepsLocationOrder(t *testing.T) {
	var a, b, want []fleetSum
	for i := range 10 {
		for d := range 3 {
			s := fleetSum{Loc: fmt.Sprintf("loc_%02d", i), Key: uint32(d)}
			if i%3 == 1 {
				b = append(b, s)
			} else {
				a = append(a, s)
			}
			want = append(want, s)
		}
	}
	if got := mergeSums([][]fleetSum{a, nil, b}); !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	if got := mergeSums([][]fleetSum{nil, b, nil}); !reflect.DeepEqual(got, b) {
		t.Errorf("one batch's sums merged as %v", got)
	}
	a[0], a[1] = a[1], a[0]
	if got := mergeSums([][]fleetSum{a, b}); !reflect.DeepEqual(got, append(append([]fleetSum{}, a...), b...)) {
		t.Errorf("unsorted batches joined as %v", got)
	}
}

// BenchmarkMergeSums merges a month by DAY of 900 untiered and 100 tiered locations (every
// tenth), as two batches of served buckets.
func BenchmarkMergeSums(b *testing.B) {
	var untiered, tiered []fleetSum
	for i := range 1000 {
		for d := range 31 {
			s := fleetSum{Loc: fmt.Sprintf("loc_%024d", i), Key: uint32(d)}
			if i%10 == 0 {
				tiered = append(tiered, s)
			} else {
				untiered = append(untiered, s)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		mergeSums([][]fleetSum{untiered, tiered})
	}
}
