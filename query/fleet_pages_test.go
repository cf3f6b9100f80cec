package query_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestFleetPagesShowAWriteBetweenThemOnTheLaterPage: two London locations, the first in
// id order on a flat 0.25 tariff, the second month-tiered (0.1 for its first 60 kWh of
// the month, then 0.2), each 24 kWh a day over March 1–5. Pages of 7 rows by DAY cut
// the second location's days after its second; between the pages its March 1 grows by
// 5 kWh (a reading re-sent), which moves its tier crossing into March 3, a day on the
// later page. Hand-computed: the first page has the first location's five days at 6.00
// and the second's March 1 and 2 at 2.40; the later page March 3 at 7 × 0.1 + 17 × 0.2 =
// 4.10 (before the write 12 × 0.1 + 12 × 0.2 = 3.60), March 4 and 5 at 4.80.
// Both pages read the two locations' states once, though they are priced apart (a tiered
// and an untiered batch).
func TestFleetPagesShowAWriteBetweenThemOnTheLaterPage(t *testing.T) {
	count := &pricingCount{}
	api := apitest.Start(t, apitest.Options{Observe: count.observe})
	acc := api.NewAccount("pages")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), count: count, auth: acc.Test()}
	var ids []string
	for range 2 {
		ids = append(ids, f.must(f.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}))["id"].(string))
	}
	slices.Sort(ids)
	tariff := func(loc string, schedule []any) {
		f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
			"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": schedule}))
	}
	tariff(ids[0], flatRate([]any{map[string]any{"fixed": 0.25}}))
	tariff(ids[1], flatRate([]any{map[string]any{"fixed": 0.1, "to_kwh": 60}, map[string]any{"fixed": 0.2}}))
	for _, loc := range ids {
		f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	}
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z", "aggregation": "DAY"}
	if r := f.do("POST", "/costs/fleet", body); r.Status != 200 { // prices every bucket
		t.Fatalf("fleet: %d %s", r.Status, r.Body)
	}
	type row struct {
		LocationID string `json:"location_id"`
		Date       string
		Tariff     struct{ Value float64 }
	}
	ask := func() fleetPage[row] {
		t.Helper()
		count.take()
		p := askPage[row](f, body)
		if n := count.take(); n["query.bucket_stored"] != 1 || n["query.bucket_counts"] != 1 || n["query.fleet"]+n["query.fleet_arrays"] != 0 {
			t.Errorf("a page read stored buckets %d times, change counts %d times and priced %d times; want 1, 1 and 0",
				n["query.bucket_stored"], n["query.bucket_counts"], n["query.fleet"]+n["query.fleet_arrays"])
		}
		return p
	}
	check := func(what string, got []row, want []row) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows %+v, want %d", what, len(got), got, len(want))
		}
		for i := range want {
			if got[i].LocationID != want[i].LocationID || got[i].Date != want[i].Date || !close6(got[i].Tariff.Value, want[i].Tariff.Value) {
				t.Errorf("%s row %d: %+v, want %+v", what, i, got[i], want[i])
			}
		}
	}
	day := func(loc, date string, money float64) row {
		r := row{LocationID: loc, Date: date}
		r.Tariff.Value = money
		return r
	}

	body["limit"] = 7
	first := ask()
	check("first page", first.Data, []row{day(ids[0], "2024-03-01", 6), day(ids[0], "2024-03-02", 6), day(ids[0], "2024-03-03", 6),
		day(ids[0], "2024-03-04", 6), day(ids[0], "2024-03-05", 6), day(ids[1], "2024-03-01", 2.4), day(ids[1], "2024-03-02", 2.4)})
	if !first.HasMore || first.NextCursor == nil {
		t.Fatalf("first page: has_more %t", first.HasMore)
	}

	// Re-sent: the second location's first hour of March 1 is 6 kWh, not 1.
	f.readings(ids[1], time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 1, 6000)
	body["starting_after"] = *first.NextCursor
	count.take()
	r := f.do("POST", "/costs/fleet", body)
	if r.Status != 200 {
		t.Fatalf("later page: %d %s", r.Status, r.Body)
	}
	var later fleetPage[row]
	if err := json.Unmarshal(r.Body, &later); err != nil {
		t.Fatal(err)
	}
	check("later page, after the write", later.Data, []row{day(ids[1], "2024-03-03", 4.1), day(ids[1], "2024-03-04", 4.8),
		day(ids[1], "2024-03-05", 4.8)})
	if later.HasMore {
		t.Errorf("later page: has_more")
	}
	// Asked again, the later page is served as priced after the write.
	check("later page, asked again", ask().Data, later.Data)
}

// TestFleetPagesAfterTheFirstReadOnlyTheirOwnLocations: ten London locations with 1 kWh
// every hour of March 1–3, all but the fifth in id order on a flat 0.25 tariff (the fifth,
// with no tariff, is skipped: no_tariff_connected), so the answer by DAY has 27 rows of
// 24 kWh and 6.00. Paged 7 rows at a time, the four pages' rows are the one-page answer's,
// in its order. Each page reads its buckets and their change counts once and prices
// nothing; only the first page looks for skipped locations over the whole fleet (and
// reads the fifth's buckets too, to find it cannot be priced), and lists the fifth as the
// one-page answer does. The later pages list a skipped location
// only on the page whose rows pass it: the second (its rows end at the sixth location).
// energyRow is the part of a fleet row the paging tests compare: its group, date, energy
// and cost.
type energyRow struct {
	LocationID string `json:"location_id"`
	Date       string
	Energy     struct {
		ValueExact float64 `json:"value_exact"`
	}
	Tariff struct{ Value float64 }
}

func TestFleetPagesAfterTheFirstReadOnlyTheirOwnLocations(t *testing.T) {
	count := &pricingCount{}
	api := apitest.Start(t, apitest.Options{Observe: count.observe})
	acc := api.NewAccount("pages")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), count: count, auth: acc.Test()}
	var ids []string
	for range 10 {
		ids = append(ids, f.must(f.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}))["id"].(string))
	}
	slices.Sort(ids)
	var recs []any
	for i, loc := range ids {
		if i != 4 {
			f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
				"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
				"schedule": flatRate([]any{map[string]any{"fixed": 0.25}})}))
		}
		for h := range 3 * 24 {
			s := time.Date(2024, 3, 1, h, 0, 0, 0, time.UTC)
			recs = append(recs, map[string]any{"location_id": loc, "start_time": s.Format(time.RFC3339),
				"end_time": s.Add(time.Hour).Format(time.RFC3339), "value": 1000, "units": "WH"})
		}
	}
	f.must(f.do("PUT", "/meters/interval", recs))
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-04T00:00:00Z", "aggregation": "DAY"}
	ask := func() fleetPage[energyRow] { t.Helper(); return askPage[energyRow](f, body) }
	whole := ask() // prices every bucket
	if len(whole.Data) != 27 || whole.HasMore || whole.Skipped.Count != 1 || whole.Skipped.Data[0].ID != ids[4] ||
		whole.Skipped.Data[0].Code != "no_tariff_connected" {
		t.Fatalf("one page: %d rows, has_more %t, skipped %+v; want 27 rows, the fifth location skipped", len(whole.Data), whole.HasMore, whole.Skipped)
	}
	for _, r := range whole.Data {
		if r.Energy.ValueExact != 24000 || !close6(r.Tariff.Value, 6) {
			t.Errorf("one page: %+v, want 24 kWh at 6.00", r)
		}
	}

	body["limit"] = 7
	var rows []energyRow
	var skippedLater []string
	recorded := 0
	for n := 0; ; n++ {
		count.take()
		p := ask()
		st := count.take()
		recorded += st["query.fleet_recorded"]
		reads := 1
		if n == 0 {
			reads = 2 // the page's, and the skipped location's own to find it cannot be priced
		}
		if st["query.bucket_stored"] != reads || st["query.bucket_counts"] != reads || st["query.fleet"]+st["query.fleet_arrays"] != 0 {
			t.Errorf("page %d read stored buckets %d times, change counts %d times and priced %d times; want %d, %d and 0",
				n, st["query.bucket_stored"], st["query.bucket_counts"], st["query.fleet"]+st["query.fleet_arrays"], reads, reads)
		}
		rows = append(rows, p.Data...)
		if n == 0 && (p.Skipped.Count != 1 || p.Skipped.Data[0].ID != ids[4]) {
			t.Errorf("first page skipped %+v, want the fifth location as the one-page answer lists it", p.Skipped)
		}
		if n > 0 {
			for _, s := range p.Skipped.Data {
				skippedLater = append(skippedLater, fmt.Sprintf("page %d: %s", n, s.ID))
			}
		}
		if !p.HasMore {
			if n != 3 {
				t.Errorf("%d pages, want 4", n+1)
			}
			break
		}
		body["starting_after"] = *p.NextCursor
	}
	if recorded != 1 {
		t.Errorf("the pages looked for skipped locations over the whole fleet %d times, want once (the first page)", recorded)
	}
	if want := []string{"page 1: " + ids[4]}; !slices.Equal(skippedLater, want) {
		t.Errorf("later pages skipped %v, want %v", skippedLater, want)
	}
	if !slices.Equal(rows, whole.Data) {
		t.Errorf("the pages' rows differ from the one-page answer's:\n%+v\n%+v", rows, whole.Data)
	}
}

// TestFleetPagesReadOneChunkAmongLocationsWithoutReadings: eight London locations on a flat
// 0.25 tariff, in id order; the second, fourth, fifth and seventh have no readings (just
// onboarded), the others 1 kWh every hour of March 1–3, so the answer by DAY has 12 rows
// of 24 kWh and 6.00. Paged 5 rows at a time, each of the three pages reads its locations'
// buckets and change counts once (a chunk sized by rows per location alone comes up short
// on the locations without readings and reads another) and serves the buckets of the
// locations its rows need only: the first page the first two metered locations' 6 (5
// rows, and one more to know there are more), and the pages' rows are the one answer's.
// The same holds for named locations (all but the first: 9 rows, in pages of 4).
func TestFleetPagesReadOneChunkAmongLocationsWithoutReadings(t *testing.T) {
	count := &pricingCount{}
	api := apitest.Start(t, apitest.Options{Observe: count.observe})
	acc := api.NewAccount("pages")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), count: count, auth: acc.Test()}
	var ids []string
	for range 8 {
		ids = append(ids, f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}})}))
	}
	slices.Sort(ids)
	for i, loc := range ids {
		if i != 1 && i != 3 && i != 4 && i != 6 {
			f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 3*24, 1000)
		}
	}
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-04T00:00:00Z", "aggregation": "DAY"}
	whole := askPage[energyRow](f, body) // prices every bucket
	if len(whole.Data) != 12 || whole.HasMore {
		t.Fatalf("one page: %d rows, has_more %t; want 12 rows", len(whole.Data), whole.HasMore)
	}
	for _, r := range whole.Data {
		if r.Energy.ValueExact != 24000 || !close6(r.Tariff.Value, 6) {
			t.Errorf("one page: %+v, want 24 kWh at 6.00", r)
		}
	}
	// paged asks body limit rows at a time and checks each page's reads; pages is how
	// many it must take.
	paged := func(what string, body map[string]any, limit, pages int) []energyRow {
		t.Helper()
		body["limit"] = limit
		var rows []energyRow
		for n := 0; ; n++ {
			count.take()
			served := api.App.Pricer.BucketCounts().Served
			p := askPage[energyRow](f, body)
			st := count.take()
			if st["query.bucket_stored"] != 1 || st["query.bucket_counts"] != 1 || st["query.fleet"]+st["query.fleet_arrays"] != 0 {
				t.Errorf("%s: page %d read stored buckets %d times, change counts %d times and priced %d times; want 1, 1 and 0",
					what, n, st["query.bucket_stored"], st["query.bucket_counts"], st["query.fleet"]+st["query.fleet_arrays"])
			}
			if got := api.App.Pricer.BucketCounts().Served - served; n == 0 && got != 6 {
				t.Errorf("%s: the first page served %d buckets, want the first two metered locations' 6", what, got)
			}
			rows = append(rows, p.Data...)
			if !p.HasMore {
				if n+1 != pages {
					t.Errorf("%s: %d pages, want %d", what, n+1, pages)
				}
				return rows
			}
			if n > pages || p.NextCursor == nil {
				t.Fatalf("%s: paging does not end (page %d)", what, n)
			}
			body["starting_after"] = *p.NextCursor
		}
	}
	if rows := paged("the fleet", body, 5, 3); !slices.Equal(rows, whole.Data) {
		t.Errorf("the pages' rows differ from the one-page answer's:\n%+v\n%+v", rows, whole.Data)
	}
	// Named locations (all but the first): its 9 rows in pages of 4, the first page from
	// the third location and the sixth.
	named := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-04T00:00:00Z", "aggregation": "DAY",
		"location_ids": ids[1:]}
	if rows := paged("named locations", named, 4, 3); !slices.Equal(rows, whole.Data[3:]) {
		t.Errorf("the named locations' pages differ from the one-page answer's rows:\n%+v\n%+v", rows, whole.Data[3:])
	}
}
