package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// answerCacheOn turns the fleet answer cache on (tests start with it off).
func answerCacheOn(c *config.Config) {
	c.Costs.AnswerCache, c.Costs.AnswerCacheTTL, c.Costs.AnswerCacheMaxBytes = "on", time.Minute, 1<<20
}

// cachedFleet asks March 1–5 by DAY through f.do once its earlier answers are stored, and
// returns its rows and whether the answer cache served it.
func (f *bucketFleet) cachedFleet(t *testing.T) (map[string]bucketRow, bool) {
	t.Helper()
	p := f.api.App.Pricer
	query.WaitAnswerStores(p)
	before := p.AnswerCounts().Served
	rows, _ := f.fleet(f.do)
	defer query.WaitAnswerStores(p) // what it runs after the answer is sent is its own
	return rows, p.AnswerCounts().Served > before
}

// freshFleet is March 1–5 by DAY priced now, without priced buckets or the answer cache.
func (f *bucketFleet) freshFleet(t *testing.T) map[string]bucketRow {
	t.Helper()
	out, err := query.WithoutBuckets(f.api.App.Pricer).Fleet(context.Background(), f.scope, query.FleetRequest{
		Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC),
		Aggregation: query.AggregationDay})
	if err != nil {
		t.Fatal(err)
	}
	return costRows(out)
}

// costRows are the rows of out by location and date.
func costRows(out query.FleetCost) map[string]bucketRow {
	rows := map[string]bucketRow{}
	for _, r := range out.Data {
		var b bucketRow
		b.LocationID, b.Date = r.LocationID, r.Date
		b.Energy.ValueExact, b.Tariff.Value, b.Tariff.Confidence = float64(r.Energy.ValueExact), float64(r.Tariff.Value),
			float64(r.Tariff.Confidence)
		rows[r.LocationID+" "+r.Date] = b
	}
	return rows
}

// TestFleetAnswerCacheServesOnlyTheStateItWasComputedIn: an answer asked again is served
// from the cache, running no ClickHouse statement (no write of the scope began since it was
// stored), and equals a fresh computation; after each kind of write the next answer is computed again and equals the
// fresh one; market prices of a later day leave it served.
func TestFleetAnswerCacheServesOnlyTheStateItWasComputedIn(t *testing.T) {
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn})
	f.must(f.do("PATCH", "/locations/"+f.a, map[string]any{"reference_id": "A"})) // a second version, for a merge to drop
	if _, hit := f.cachedFleet(t); hit {
		t.Fatal("the first answer was served from the cache")
	}
	f.count.take()
	rows, hit := f.cachedFleet(t)
	if ran := f.count.take(); !hit || len(ran) != 0 {
		t.Errorf("asked again: served %t, statements %v (want served with none)", hit, ran)
	}
	sameRows(t, "asked again", rows, f.freshFleet(t))
	// Merges of documents (older versions dropped) and of summed counts change no input.
	// On a cluster 18.16 fails an OPTIMIZE of a replicated table while it waits for the
	// replicas ("Unknown log entry type"), so there the merges are left to ClickHouse.
	if f.api.App.DB.Cluster == "" {
		for _, table := range []string{"documents", "reading_changes_by_month", "price_changes"} {
			if err := f.api.App.DB.Exec(context.Background(), chstore.Tool("OPTIMIZE TABLE "+table+" FINAL")); err != nil {
				t.Fatal(err)
			}
		}
		if _, hit := f.cachedFleet(t); !hit {
			t.Error("after merges: not served from the cache")
		}
	}

	writes := []struct {
		name  string
		write func()
	}{
		{"a new reading", func() { f.readings(f.a, time.Date(2024, 3, 2, 5, 30, 0, 0, time.UTC), 1, 700) }},
		{"a re-sent reading with another value", func() { f.readings(f.b, time.Date(2024, 3, 3, 7, 0, 0, 0, time.UTC), 1, 4000) }},
		{"a tariff written", func() {
			f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": f.b, "direction": "IMPORT", "type": "NON_COMMODITY",
				"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
				"schedule": flatRate([]any{map[string]any{"fixed": 0.05}})}))
		}},
		{"market prices in the window", func() {
			f.prices(time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC), 0.3)
		}},
		{"a zone changed", func() { f.must(f.do("PATCH", "/locations/"+f.b, map[string]any{"timezone": "Europe/Paris"})) }},
		{"a location deleted", func() {
			if r := f.do("DELETE", "/locations/"+f.a, nil); r.Status != 202 {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
		}},
	}
	for _, w := range writes {
		fresh := f.missesAfter(t, w.name, w.write)
		if again, hit := f.cachedFleet(t); !hit {
			t.Errorf("after %s, asked again: not served from the cache", w.name)
		} else {
			sameRows(t, "after "+w.name+", asked again", again, fresh)
		}
	}
	f.prices(time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 21, 0, 0, 0, 0, time.UTC), 9)
	if _, hit := f.cachedFleet(t); !hit {
		t.Error("after market prices of a later day: not served from the cache")
	}
}

// missesAfter asks the cached fleet answer, runs write (named name) and checks that the
// answer asked next is computed again, equals a fresh computation and differs from the
// one before; it returns the fresh answer.
func (f *bucketFleet) missesAfter(t *testing.T, name string, write func()) map[string]bucketRow {
	t.Helper()
	before, _ := f.cachedFleet(t)
	write()
	rows, hit := f.cachedFleet(t)
	fresh := f.freshFleet(t)
	if hit {
		t.Errorf("after %s: served from the cache", name)
	}
	sameRows(t, "after "+name, rows, fresh)
	if len(before) == len(fresh) && sameValues(before, fresh) {
		t.Errorf("after %s: the fresh answer is the one before (the write changed nothing to check)", name)
	}
	return fresh
}

// sameValues reports whether every row of a has b's figures.
func sameValues(a, b map[string]bucketRow) bool {
	for k, r := range a {
		w := b[k]
		if !close6(r.Energy.ValueExact, w.Energy.ValueExact) || !close6(r.Tariff.Value, w.Tariff.Value) ||
			!close6(r.Tariff.Confidence, w.Tariff.Confidence) {
			return false
		}
	}
	return true
}

// TestFleetAnswerCacheIsSharedAndNeverNeeded: a second process answers from the entry the
// first one stored, pricing nothing and reading no tariff; with Redis down both answer
// the same rows, computed.
func TestFleetAnswerCacheIsSharedAndNeverNeeded(t *testing.T) {
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn})
	first, _ := f.cachedFleet(t)
	query.WaitAnswerStores(f.api.App.Pricer)

	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Configure: answerCacheOn, Observe: second.observe})
	f2 := *f
	f2.count = second
	rows, _ := f2.fleet(other.As(f.auth))
	sameRows(t, "second process", rows, first)
	if got := other.App.Pricer.AnswerCounts(); got.Served != 1 || got.Computed != 0 {
		t.Errorf("second process: %+v, want its answer served", got)
	}
	for name := range second.take() {
		if name != "query.fleet_token" && strings.HasPrefix(name, "query.") || name == "docstore.heads" {
			t.Errorf("second process ran %s for an answer served from the cache", name)
		}
	}

	f.api.Redis.Down()
	defer f.api.Redis.Up()
	before := f.api.App.Pricer.AnswerCounts()
	down, _ := f.fleet(f.do)
	sameRows(t, "Redis down", down, f.freshFleet(t))
	if got := f.api.App.Pricer.AnswerCounts(); got.Served != before.Served || got.Computed != before.Computed+1 {
		t.Errorf("Redis down: %+v after %+v, want one answer computed", got, before)
	}
}

// pagedWalk is the answer cache's bucket fleet with two more locations on flat tariffs:
// four, each with a row a day of March 1–5, paged by DAY in id order limit rows at a time.
// cursors[i] is the starting_after of page i, taken from a first walk ("" for the first).
type pagedWalk struct {
	f       *bucketFleet
	ids     []string // the four locations, in id order
	limit   int
	cursors []string
	priced  time.Duration // how long the first walk, which computed every page, took
}

func newPagedWalk(t *testing.T, limit int) *pagedWalk {
	return newPagedWalkWith(t, limit, answerCacheOn)
}

// newPagedWalkWith is newPagedWalk on the configuration configure makes (the answer
// cache on, at least).
func newPagedWalkWith(t *testing.T, limit int, configure func(*config.Config)) *pagedWalk {
	f := newBucketFleetWith(t, apitest.Options{Configure: configure})
	c := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.3}})})
	d := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.2}})})
	for _, loc := range []string{c, d} {
		f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	}
	w := &pagedWalk{f: f, ids: []string{f.a, f.b, c, d}, limit: limit, cursors: []string{""}}
	slices.Sort(w.ids)
	t0 := time.Now()
	for {
		p, _ := w.ask(t, len(w.cursors)-1)
		if !p.HasMore {
			w.priced = time.Since(t0)
			return w
		}
		w.cursors = append(w.cursors, *p.NextCursor)
	}
}

// request is page i.
func (w *pagedWalk) request(i int) query.FleetRequest {
	return query.FleetRequest{Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC),
		Aggregation: query.AggregationDay, Limit: w.limit, StartingAfter: w.cursors[i]}
}

// ask returns page i once the answers before it are stored, and whether the answer cache
// served it.
func (w *pagedWalk) ask(t *testing.T, i int) (fleetPage[bucketRow], bool) {
	t.Helper()
	p := w.f.api.App.Pricer
	query.WaitAnswerStores(p)
	before := p.AnswerCounts().Served
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z", "aggregation": "DAY",
		"limit": w.limit}
	if w.cursors[i] != "" {
		body["starting_after"] = w.cursors[i]
	}
	page := askPage[bucketRow](w.f, body)
	defer query.WaitAnswerStores(p) // what it runs after the answer is sent is its own
	return page, p.AnswerCounts().Served > before
}

// fresh is page i priced now, without priced buckets or the answer cache.
func (w *pagedWalk) fresh(t *testing.T, i int) query.FleetCost {
	t.Helper()
	out, err := query.WithoutBuckets(w.f.api.App.Pricer).Fleet(context.Background(), w.f.scope, w.request(i))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// same checks that page i as asked equals it priced now: rows, has_more and next_cursor.
func (w *pagedWalk) same(t *testing.T, what string, i int, got fleetPage[bucketRow]) {
	t.Helper()
	want := w.fresh(t, i)
	sameRows(t, what, pageRows(got), costRows(want))
	if got.HasMore != want.HasMore || (got.NextCursor == nil) != (want.NextCursor == nil) {
		t.Errorf("%s: has_more %t, next_cursor %v; priced now %t, %v", what, got.HasMore, got.NextCursor, want.HasMore, want.NextCursor)
	}
}

func pageRows(p fleetPage[bucketRow]) map[string]bucketRow {
	rows := map[string]bucketRow{}
	for _, r := range p.Data {
		rows[r.LocationID+" "+r.Date] = r
	}
	return rows
}

// TestFleetAnswerCacheServesAPageUnderItsOwnLocationsToken: paged 7 rows at a time, the
// four locations' 20 rows make three pages; page 1 holds the rest of the second location's
// rows and some of the third's, page 2 (the last) the rest. Asked again, each later page is
// served, running no ClickHouse statement; after a write of another scope's, each runs
// only the token statement of its own locations (the first page the scope's). A new reading, a re-sent
// reading and a tariff of the second location make page 1 computed again, equal to the
// page priced now, while page 2 is still served (the first page, which lists the skipped
// locations of the whole answer, is computed again too). A location created inside a
// page's locations (with a tariff, no readings) leaves every page served; its first
// readings make that page computed again, and leave the other served.
func TestFleetAnswerCacheServesAPageUnderItsOwnLocationsToken(t *testing.T) {
	w := newPagedWalk(t, 7)
	f := w.f
	if len(w.cursors) != 3 {
		t.Fatalf("%d pages, want 3", len(w.cursors))
	}
	for i := range w.cursors {
		f.count.take()
		page, hit := w.ask(t, i)
		if ran := f.count.take(); !hit || len(ran) != 0 {
			t.Errorf("page %d asked again: served %t, statements %v (want served with none)", i, hit, ran)
		}
		w.same(t, fmt.Sprintf("page %d asked again", i), i, page)
	}
	f.prices(time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 21, 0, 0, 0, 0, time.UTC), 9) // moves the epoch only
	for i := range w.cursors {
		f.count.take()
		page, hit := w.ask(t, i)
		want := map[string]int{"query.fleet_page_token": 1}
		if i == 0 {
			want = map[string]int{"query.fleet_token": 1}
		}
		if ran := f.count.take(); !hit || !maps.Equal(ran, want) {
			t.Errorf("page %d after market prices of a later day: served %t, statements %v (want served by %v)", i, hit, ran, want)
		}
		w.same(t, fmt.Sprintf("page %d after market prices of a later day", i), i, page)
	}

	second := w.ids[1]
	writes := []struct {
		name  string
		write func()
	}{
		{"a new reading", func() { f.readings(second, time.Date(2024, 3, 4, 5, 30, 0, 0, time.UTC), 1, 700) }},
		{"a re-sent reading with another value", func() { f.readings(second, time.Date(2024, 3, 5, 7, 0, 0, 0, time.UTC), 1, 4000) }},
		{"a tariff written", func() {
			f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": second, "direction": "IMPORT", "type": "NON_COMMODITY",
				"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
				"schedule": flatRate([]any{map[string]any{"fixed": 0.05}})}))
		}},
	}
	for _, wr := range writes {
		before, _ := w.ask(t, 1)
		w.ask(t, 2)
		wr.write()
		page, hit := w.ask(t, 1)
		if hit {
			t.Errorf("after %s of its location: page 1 served from the cache", wr.name)
		}
		w.same(t, "after "+wr.name+", page 1", 1, page)
		if sameValues(pageRows(before), pageRows(page)) {
			t.Errorf("after %s: page 1 is the one before (the write changed nothing to check)", wr.name)
		}
		if again, hit := w.ask(t, 1); !hit {
			t.Errorf("after %s, page 1 asked again: not served", wr.name)
		} else {
			w.same(t, "after "+wr.name+", page 1 asked again", 1, again)
		}
		if last, hit := w.ask(t, 2); !hit {
			t.Errorf("after %s of a location before page 2's: page 2 not served", wr.name)
		} else {
			w.same(t, "after "+wr.name+", page 2", 2, last)
		}
		if _, hit := w.ask(t, 0); hit {
			t.Errorf("after %s: the first page served from the cache", wr.name)
		}
	}

	// Page 1 reads the second and third locations and those created between them; page 2
	// the third and every one after it. New ids are random: locations and their tariffs
	// are created until one has fallen inside page 1's and one after it. Without records
	// they add no row, so every page is still served; a first reading of one in the window
	// makes the page whose locations hold it computed again.
	w.ask(t, 1)
	w.ask(t, 2)
	inside, after := "", ""
	for n := 0; n < 300 && (inside == "" || after == ""); n++ {
		switch id := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.3}})}); {
		case id > w.ids[1] && id < w.ids[2]:
			inside = id
		case id > w.ids[2]:
			after = id
		}
	}
	if inside == "" || after == "" {
		t.Fatalf("no location created inside page 1 (%q) or after it (%q) in 300", inside, after)
	}
	for i := 1; i <= 2; i++ {
		page, hit := w.ask(t, i)
		if !hit {
			t.Errorf("page %d after locations were created with tariffs, no readings: computed again", i)
		}
		w.same(t, fmt.Sprintf("page %d after locations were created", i), i, page)
	}
	for i, id := range []string{inside, after} {
		w.ask(t, 1)
		w.ask(t, 2)
		f.readings(id, time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), 24, 1000)
		for p := 1; p <= 2; p++ {
			page, hit := w.ask(t, p)
			if hit != (p != i+1) {
				t.Errorf("page %d after the first readings of location %s: served %t", p, id, hit)
			}
			w.same(t, fmt.Sprintf("page %d after the first readings of location %s", p, id), p, page)
		}
	}
}

// TestFleetAnswerCacheServesHasMoreOnlyWhileANextRowIs: paged 5 rows at a time, each page
// is one location's rows; page 1 (the second location's) has more because the third
// location has rows. Deleting the fourth leaves it served; deleting the third too makes it
// computed again, the last page now.
func TestFleetAnswerCacheServesHasMoreOnlyWhileANextRowIs(t *testing.T) {
	w := newPagedWalk(t, 5)
	f := w.f
	if len(w.cursors) != 4 {
		t.Fatalf("%d pages, want 4", len(w.cursors))
	}
	del := func(id string) {
		if r := f.do("DELETE", "/locations/"+id, nil); r.Status != 202 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
	}
	w.ask(t, 1)
	del(w.ids[3])
	page, hit := w.ask(t, 1)
	if !hit || !page.HasMore {
		t.Errorf("after the fourth location was deleted: page 1 served %t, has_more %t (want served, more)", hit, page.HasMore)
	}
	w.same(t, "page 1 after the fourth location was deleted", 1, page)
	del(w.ids[2])
	page, hit = w.ask(t, 1)
	if hit || page.HasMore {
		t.Errorf("after the third location was deleted: page 1 served %t, has_more %t (want computed, no more)", hit, page.HasMore)
	}
	w.same(t, "page 1 after the third location was deleted", 1, page)
}

// TestFleetAnswerCachePagesRacingWritersGiveRowsOfSomeInstant races writers (new readings,
// re-sent readings, market prices of past days) of every location with walks of the later
// pages asked through the answer cache (served with no statement while no write began):
// every row of each page must equal the row of a fresh pricing of that page as stored at
// some instant during that walk (TestPricedBucketsRacingWritersGiveRowsOfSomeInstant, by
// page).
func TestFleetAnswerCachePagesRacingWritersGiveRowsOfSomeInstant(t *testing.T) {
	w := newPagedWalk(t, 7)
	f := w.f
	ctx := context.Background()
	reader := f.api.App.Pricer
	page := func(cached bool, i int) (out query.FleetCost, err error) {
		if !cached {
			return query.WithoutBuckets(reader).Fleet(ctx, f.scope, w.request(i))
		}
		b, err := reader.FleetEncoded(ctx, f.scope, w.request(i), "json", func(a query.FleetCost) ([]byte, error) { return json.Marshal(a) })
		if err == nil {
			err = json.Unmarshal(b, &out)
		}
		return out, err
	}
	answer := func(cached bool) map[string]query.FleetRow {
		rows := map[string]query.FleetRow{}
		for i := 1; i < len(w.cursors); i++ {
			out, err := page(cached, i)
			if err != nil {
				t.Error(err)
				return nil
			}
			for _, r := range out.Data {
				rows[fmt.Sprintf("page %d %s %s", i, r.LocationID, r.Date)] = r
			}
		}
		return rows
	}
	n := raceWrites(t, f, w.ids, func() map[string]query.FleetRow { return answer(false) },
		func(int) map[string]query.FleetRow { return answer(true) })
	t.Logf("%d walks of the later pages raced 16 writes; answers %+v", n, reader.AnswerCounts())
}

// TestFleetAnswerCacheServesTheFleetWhileNewLocationsHaveNoRecords: a location onboarded
// with its tariff, no readings yet, changes no row or skipped entry of the whole fleet's
// answer, which is served (the token statement alone) and equals a fresh computation, also
// after that tariff changes. Its first readings in the window, a tariff written for a
// location with readings and such a location deleted make it computed again. Answers
// naming locations or a customer are computed again after a location is created or
// deleted, and one naming a location deleted without readings is its error.
func TestFleetAnswerCacheServesTheFleetWhileNewLocationsHaveNoRecords(t *testing.T) {
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn})
	onboard := func() string {
		return f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.3}})})
	}
	tariff := func(loc string) {
		f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "NON_COMMODITY",
			"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
			"schedule": flatRate([]any{map[string]any{"fixed": 0.05}})}))
	}
	f.cachedFleet(t)
	loc := onboard()
	for i, what := range []string{"a location onboarded", "a tariff of it written"} {
		if i == 1 {
			tariff(loc)
		}
		f.count.take()
		rows, hit := f.cachedFleet(t)
		if ran := f.count.take(); !hit || !maps.Equal(ran, map[string]int{"query.fleet_token": 1}) {
			t.Errorf("after %s: served %t, statements %v (want served by the token statement alone)", what, hit, ran)
		}
		sameRows(t, "after "+what, rows, f.freshFleet(t))
	}
	writes := []struct {
		name  string
		write func()
	}{
		{"the onboarded location's first readings", func() { f.readings(loc, time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), 24, 1000) }},
		{"a tariff of a location with readings written", func() { tariff(f.b) }},
		{"a location with readings deleted", func() {
			if r := f.do("DELETE", "/locations/"+loc, nil); r.Status != 202 {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
		}},
	}
	for _, w := range writes {
		f.missesAfter(t, w.name, w.write)
	}

	cus := f.must(f.do("POST", "/customers", map[string]any{}))["id"].(string)
	ofCustomer := f.must(f.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP",
		"customer_id": cus}))["id"].(string)
	named := onboard()
	start, end := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC)
	shapes := map[string]query.FleetRequest{
		"location_ids": {Start: start, End: end, Aggregation: query.AggregationDay, LocationIDs: []string{f.a, named}, LocationsSet: true},
		"customer_id":  {Start: start, End: end, Aggregation: query.AggregationDay, CustomerID: cus},
	}
	ask := func(req query.FleetRequest) (bool, error) {
		p := f.api.App.Pricer
		query.WaitAnswerStores(p)
		before := p.AnswerCounts().Served
		_, err := p.FleetEncoded(context.Background(), f.scope, req, "json", func(a query.FleetCost) ([]byte, error) { return json.Marshal(a) })
		return p.AnswerCounts().Served > before, err
	}
	for _, w := range []struct {
		name  string
		write func()
	}{
		{"a location onboarded", func() { onboard() }},
		{"a location without readings deleted", func() {
			if r := f.do("DELETE", "/locations/"+ofCustomer, nil); r.Status != 202 {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
		}},
	} {
		for shape, req := range shapes {
			ask(req)
			if hit, err := ask(req); !hit || err != nil {
				t.Errorf("%s asked again before %s: served %t, %v", shape, w.name, hit, err)
			}
		}
		w.write()
		for shape, req := range shapes {
			if hit, err := ask(req); hit || err != nil {
				t.Errorf("%s after %s: served %t, %v (want computed)", shape, w.name, hit, err)
			}
		}
	}
	f.must(f.do("DELETE", "/locations/"+named, nil))
	if _, err := ask(shapes["location_ids"]); err == nil || kwhouse.AsError(err) == nil || kwhouse.AsError(err).Code != "resource_missing" {
		t.Errorf("location_ids naming a deleted location: %v, want resource_missing", err)
	}
}
