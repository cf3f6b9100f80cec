package query_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// pricingCount counts the statements that price readings for a fleet (fleet.sql and
// fleet_arrays.sql), as a second service sees them too, and every statement by name.
type pricingCount struct {
	n      atomic.Int64
	mu     sync.Mutex
	byName map[string]int
}

func (p *pricingCount) observe(st chstore.Statement) {
	if st.Name == "query.fleet" || st.Name == "query.fleet_arrays" {
		p.n.Add(1)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byName == nil {
		p.byName = map[string]int{}
	}
	p.byName[st.Name]++
}

// take returns the statements run by name since the last take.
func (p *pricingCount) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.byName
	p.byName = map[string]int{}
	return n
}

// bucketFleet is an account with two locations: A on a market tariff, B on a flat one,
// each with a reading every hour of 2024-03-01 to 03-05 (London).
type bucketFleet struct {
	t      *testing.T
	api    *apitest.API
	do     func(method, path string, body any) apitest.Response
	count  *pricingCount
	auth   string
	scope  kwhouse.Scope
	a, b   string
	market string
}

func newBucketFleet(t *testing.T, now func() time.Time) *bucketFleet {
	return newBucketFleetWith(t, apitest.Options{Now: now})
}

// newBucketFleetWith is newBucketFleet on a service started with opt (the fleet's count
// sees every statement before opt's Observe, if any).
func newBucketFleetWith(t *testing.T, opt apitest.Options) *bucketFleet {
	count := &pricingCount{}
	if also := opt.Observe; also != nil {
		opt.Observe = func(st chstore.Statement) { count.observe(st); also(st) }
	} else {
		opt.Observe = count.observe
	}
	api := apitest.Start(t, opt)
	acc := api.NewAccount("buckets")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), count: count, auth: acc.Test(),
		scope: kwhouse.Scope{AccountID: acc.ID}}
	f.market = f.must(f.do("POST", "/markets", map[string]any{"display_name": "spot", "currency_code": "GBP"}))["id"].(string)
	f.prices(time.Date(2024, 2, 28, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 7, 0, 0, 0, 0, time.UTC), 0.1)
	f.a = f.location(map[string]any{"market_rates": true, "market_id": f.market,
		"schedule": flatRate([]any{map[string]any{"surcharge_fixed": 0.02}})})
	f.b = f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}})})
	for _, loc := range []string{f.a, f.b} {
		f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	}
	return f
}

func (f *bucketFleet) must(r apitest.Response) map[string]any {
	f.t.Helper()
	if r.Status >= 300 {
		f.t.Fatalf("%d %s", r.Status, r.Body)
	}
	return r.Map(f.t)
}

func (f *bucketFleet) location(tariff map[string]any) string {
	id := f.must(f.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}))["id"].(string)
	body := map[string]any{"location_id": id, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z"}
	for k, v := range tariff {
		body[k] = v
	}
	f.must(f.do("POST", "/tariffs/elements", body))
	return id
}

// prices puts half-hourly market prices over [from, to).
func (f *bucketFleet) prices(from, to time.Time, price float64) {
	var ps []any
	for t := from; t.Before(to); t = t.Add(30 * time.Minute) {
		ps = append(ps, map[string]any{"start_time": t.Format(time.RFC3339), "end_time": t.Add(30 * time.Minute).Format(time.RFC3339), "price": price})
	}
	f.must(f.do("PUT", "/markets/"+f.market+"/prices", ps))
}

// readings sends n hourly readings of wh Wh from start.
func (f *bucketFleet) readings(loc string, start time.Time, n int, wh float64) {
	var recs []any
	for i := 0; i < n; i++ {
		s := start.Add(time.Duration(i) * time.Hour)
		recs = append(recs, map[string]any{"location_id": loc, "start_time": s.Format(time.RFC3339),
			"end_time": s.Add(time.Hour).Format(time.RFC3339), "value": wh, "units": "WH"})
	}
	f.must(f.do("PUT", "/meters/interval", recs))
}

type bucketRow struct {
	LocationID string `json:"location_id"`
	Date       string `json:"date"`
	Energy     struct {
		ValueExact float64 `json:"value_exact"`
	} `json:"energy"`
	Tariff struct {
		Value      float64 `json:"value"`
		Confidence float64 `json:"confidence"`
	} `json:"tariff"`
}

// fleet asks March 1–5 by DAY (of ids, when given) and returns its rows by location and
// date, and how many pricing statements it ran.
func (f *bucketFleet) fleet(do func(method, path string, body any) apitest.Response, ids ...string) (map[string]bucketRow, int64) {
	f.t.Helper()
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z", "aggregation": "DAY"}
	if len(ids) > 0 {
		body["location_ids"] = ids
	}
	before := f.count.n.Load()
	rows := f.rowsOf(do("POST", "/costs/fleet", body))
	return rows, f.count.n.Load() - before
}

// rowsOf returns the rows of a fleet answer by location and date ("2024-03-01" by DAY,
// "2024-03" by MONTH); an answer other than 200 fails the test.
func (f *bucketFleet) rowsOf(r apitest.Response) map[string]bucketRow {
	f.t.Helper()
	if r.Status != 200 {
		f.t.Fatalf("fleet: %d %s", r.Status, r.Body)
	}
	var out struct{ Data []bucketRow }
	if err := json.Unmarshal(r.Body, &out); err != nil {
		f.t.Fatal(err)
	}
	rows := map[string]bucketRow{}
	for _, row := range out.Data {
		rows[row.LocationID+" "+row.Date] = row
	}
	return rows
}

// fleetPage is one page of a fleet answer, its rows decoded as R.
type fleetPage[R any] struct {
	Data       []R
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
	Skipped    struct {
		Count int
		Data  []struct{ ID, Code string }
	}
}

// askPage asks POST /costs/fleet with body as f's account and decodes the page; an answer
// other than 200 fails the test.
func askPage[R any](f *bucketFleet, body map[string]any) fleetPage[R] {
	f.t.Helper()
	r := f.do("POST", "/costs/fleet", body)
	if r.Status != 200 {
		f.t.Fatalf("fleet: %d %s", r.Status, r.Body)
	}
	var p fleetPage[R]
	r.JSON(f.t, &p)
	return p
}

func (f *bucketFleet) priced() int64 { return f.api.App.Pricer.BucketCounts().Priced }

func sameRows(t *testing.T, what string, got, want map[string]bucketRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows against %d", what, len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if !close6(g.Energy.ValueExact, w.Energy.ValueExact) || !close6(g.Tariff.Value, w.Tariff.Value) || !close6(g.Tariff.Confidence, w.Tariff.Confidence) {
			t.Errorf("%s %s: %+v against %+v", what, k, g, w)
		}
	}
}

// TestPricedBucketsOnlyChangeWithWhatTheyWerePricedFrom checks, by the pricing statements
// run, what re-prices which priced bucket: nothing for a question asked again, by a second
// process, after tomorrow's market prices, or for location A after a tariff of location B;
// a new reading of a past day re-prices that day only; deleting a location deletes its buckets.
func TestPricedBucketsOnlyChangeWithWhatTheyWerePricedFrom(t *testing.T) {
	f := newBucketFleet(t, nil)
	first, n := f.fleet(f.do)
	if len(first) != 10 || n == 0 {
		t.Fatalf("first answer: %d rows (want 10) with %d pricing statements", len(first), n)
	}
	// A hour at 0.1 + 0.02 and B at 0.25, 24 kWh a day.
	if a := first[f.a+" 2024-03-02"]; !close6(a.Tariff.Value, 24*0.12) || !close6(first[f.b+" 2024-03-02"].Tariff.Value, 24*0.25) {
		t.Fatalf("March 2: %+v and %+v", a, first[f.b+" 2024-03-02"])
	}
	again, n := f.fleet(f.do)
	sameRows(t, "asked again", again, first)
	if n != 0 {
		t.Errorf("asked again: %d pricing statements, want none", n)
	}

	// A second kwhouse process on the same ClickHouse and Redis answers from the same buckets.
	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	f2 := *f
	f2.count = second
	rows, n := f2.fleet(other.As(f.auth))
	sameRows(t, "second process", rows, first)
	if n != 0 {
		t.Errorf("a second process ran %d pricing statements for buckets the first one priced", n)
	}

	f.prices(time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 21, 0, 0, 0, 0, time.UTC), 9)
	rows, n = f.fleet(f.do)
	sameRows(t, "after tomorrow's market prices", rows, first)
	if n != 0 {
		t.Errorf("a market-price write for a later day ran %d pricing statements", n)
	}

	// A price of a past day changes that day (and the one before: a bucket's records may
	// reach a day past it), nothing else.
	f.prices(time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC), 0.2)
	p0 := f.priced()
	rows, _ = f.fleet(f.do)
	if a := rows[f.a+" 2024-03-02"]; !close6(a.Tariff.Value, 24*0.22) {
		t.Errorf("A on March 2 after its market prices changed: %+v, want %v", a, 24*0.22)
	}
	if got := f.priced() - p0; got != 2 {
		t.Errorf("a market-price write for March 2 priced %d buckets, want 2 (March 1 and 2 of A)", got)
	}

	f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": f.b, "direction": "IMPORT", "type": "NON_COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
		"schedule": flatRate([]any{map[string]any{"fixed": 0.05}})}))
	rows, n = f.fleet(f.do, f.a)
	if n != 0 || len(rows) != 5 {
		t.Errorf("location A after a tariff of location B: %d rows, %d pricing statements (want 5, none)", len(rows), n)
	}
	p0 = f.priced()
	rows, _ = f.fleet(f.do)
	if got := f.priced() - p0; got != 5 {
		t.Errorf("after a tariff of location B the fleet priced %d buckets, want B's 5 days", got)
	}
	if b := rows[f.b+" 2024-03-02"]; !close6(b.Tariff.Value, 24*0.30) {
		t.Errorf("B on March 2 after its non-commodity tariff: %+v, want %v", b, 24*0.30)
	}

	f.readings(f.a, time.Date(2024, 3, 3, 12, 30, 0, 0, time.UTC), 1, 500)
	p0 = f.priced()
	rows, _ = f.fleet(f.do)
	if got := f.priced() - p0; got != 1 {
		t.Errorf("a new reading of March 3 priced %d buckets, want that day's 1", got)
	}
	if a := rows[f.a+" 2024-03-03"]; !close6(a.Energy.ValueExact, 24500) || !close6(a.Tariff.Value, 24.5*0.12) {
		t.Errorf("A on March 3 after a new reading: %+v", a)
	}

	// Buckets are written back after the answer; one that lands after the delete is never
	// served (the delete changes the price of every date of the location), but stays.
	if err := f.api.App.Pricer.WaitBucketWrites(context.Background(), f.scope); err != nil {
		t.Fatal(err)
	}
	if r := f.do("DELETE", "/locations/"+f.a, nil); r.Status != 202 {
		t.Fatalf("delete A: %d %s", r.Status, r.Body)
	}
	waitNoBuckets(t, f.api, f.a)
}

// waitNoBuckets waits until the location's priced buckets are deleted (a mutation).
func waitNoBuckets(t *testing.T, api *apitest.API, loc string) {
	t.Helper()
	var n uint64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		err := api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT count() FROM priced_buckets WHERE location_id = ?"), loc).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatalf("%d priced buckets of deleted location %s remain", n, loc)
}

// TestFleetPagesByIDReadOnlyTheLocationsTheyNeed pages a fleet by id two rows at a time: the
// first page serves only the first location's buckets (not the whole fleet's), the first
// page lists the skipped location as the one answer does and the later pages list it once,
// on the page whose rows pass it, and the pages add up to the one answer.
func TestFleetPagesByIDReadOnlyTheLocationsTheyNeed(t *testing.T) {
	f := newBucketFleet(t, nil)
	body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z", "aggregation": "DAY"}
	ask := func() fleetPage[json.RawMessage] { t.Helper(); return askPage[json.RawMessage](f, body) }
	ask() // prices every bucket
	body["limit"] = 2
	served := f.api.App.Pricer.BucketCounts().Served
	if p := ask(); len(p.Data) != 2 || !p.HasMore {
		t.Fatalf("first page: %d rows, has_more %t", len(p.Data), p.HasMore)
	}
	if got := f.api.App.Pricer.BucketCounts().Served - served; got != 5 {
		t.Errorf("the first page of 2 rows served %d buckets, want the first location's 5", got)
	}

	// A location without a tariff but with readings is skipped on every page.
	bare := f.must(f.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}))["id"].(string)
	f.readings(bare, time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), 3, 100)
	delete(body, "limit")
	whole := ask()
	if len(whole.Data) != 10 || whole.Skipped.Count != 1 || whole.Skipped.Data[0].ID != bare {
		t.Fatalf("one answer: %d rows, skipped %+v", len(whole.Data), whole.Skipped)
	}
	body["limit"] = 2
	var rows []json.RawMessage
	later, firstEnd := 0, "" // the later pages' listings of bare; the first page's last location
	for n := 0; ; n++ {
		p := ask()
		if n == 0 || p.Skipped.Count > 0 {
			if p.Skipped.Count != 1 || p.Skipped.Data[0].ID != bare || p.Skipped.Data[0].Code != "no_tariff_connected" {
				t.Errorf("page %d: skipped %+v", n, p.Skipped)
			}
		}
		if n == 0 {
			var last struct {
				LocationID string `json:"location_id"`
			}
			_ = json.Unmarshal(p.Data[len(p.Data)-1], &last)
			firstEnd = last.LocationID
		} else {
			later += p.Skipped.Count
		}
		rows = append(rows, p.Data...)
		if !p.HasMore {
			break
		}
		if n > 6 || p.NextCursor == nil {
			t.Fatalf("paging does not end (page %d)", n)
		}
		body["starting_after"] = *p.NextCursor
	}
	if want := map[bool]int{true: 0, false: 1}[bare < firstEnd]; later != want {
		t.Errorf("later pages listed the skipped location %d times, want %d (on the page whose rows pass it)", later, want)
	}
	if len(rows) != len(whole.Data) {
		t.Fatalf("pages gave %d rows, the one answer %d", len(rows), len(whole.Data))
	}
	for i := range rows {
		if string(rows[i]) != string(whole.Data[i]) {
			t.Errorf("row %d: %s, the one answer %s", i, rows[i], whole.Data[i])
		}
	}
}

// TestFleetOfASecondProcessSeesWritesMadeElsewhere: a process that has answered (its
// locations, tariffs and plans read) answers after another process's writes with them: a
// tariff added to B re-prices B, a new location with a tariff and readings is in the
// answer, and A is served as it was.
func TestFleetOfASecondProcessSeesWritesMadeElsewhere(t *testing.T) {
	f := newBucketFleet(t, nil)
	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	f2 := *f
	f2.count = second
	first, _ := f2.fleet(other.As(f.auth))
	if len(first) != 10 {
		t.Fatalf("first answer of the second process: %d rows, want 10", len(first))
	}
	f.must(f.do("POST", "/tariffs/elements", map[string]any{"location_id": f.b, "direction": "IMPORT", "type": "NON_COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
		"schedule": flatRate([]any{map[string]any{"fixed": 0.05}})}))
	c := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.5}})})
	f.readings(c, time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), 24, 1000)
	rows, _ := f2.fleet(other.As(f.auth))
	if len(rows) != 11 {
		t.Fatalf("after writes elsewhere: %d rows, want 11 (A and B five days, C one)", len(rows))
	}
	if b := rows[f.b+" 2024-03-02"]; !close6(b.Tariff.Value, 24*0.30) {
		t.Errorf("B on March 2 after a tariff written elsewhere: %+v, want %v", b, 24*0.30)
	}
	if got := rows[c+" 2024-03-02"]; !close6(got.Tariff.Value, 24*0.5) {
		t.Errorf("C, onboarded elsewhere, on March 2: %+v, want %v", got, 24*0.5)
	}
	if a := rows[f.a+" 2024-03-02"]; !close6(a.Tariff.Value, first[f.a+" 2024-03-02"].Tariff.Value) {
		t.Errorf("A changed: %+v against %+v", a, first[f.a+" 2024-03-02"])
	}
	// B moved to Paris elsewhere (a new version of a location this process has read): its
	// days are Paris's, the window's last hour a sixth local day.
	f.must(f.do("PATCH", "/locations/"+f.b, map[string]any{"timezone": "Europe/Paris"}))
	rows, _ = f2.fleet(other.As(f.auth))
	if _, ok := rows[f.b+" 2024-03-06"]; !ok || len(rows) != 12 {
		t.Errorf("after B moved to Paris elsewhere: %d rows, B on March 6 %v (want 12 rows, and it)", len(rows), ok)
	}
}

// A year by MONTH of priced buckets is summed per month in ClickHouse: asked again it
// reads no day of a bucket; a month with one stale day re-prices that day only, and its
// total is exact (hand-computed: A's hours at 0.1 + 0.02, B's at 0.25, all of local March).
func TestAMonthWithOneStaleDayPricesThatDayOnly(t *testing.T) {
	f := newBucketFleet(t, nil)
	seen := f.count
	for _, loc := range []string{f.a, f.b} { // to 23:00 UTC on the 31st, local midnight (BST)
		f.readings(loc, time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC), 25*24+23, 1000)
	}
	f.prices(time.Date(2024, 3, 7, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 2, 0, 0, 0, 0, time.UTC), 0.1)
	check := func(what string, rows map[string]bucketRow, aMarch float64) {
		t.Helper()
		want := map[string][2]float64{f.a + " 2024-03": {aMarch, aMarch / 1000 * 0.12}, f.b + " 2024-03": {743000, 743 * 0.25}}
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d: %v", what, len(rows), len(want), rows)
		}
		for k, w := range want {
			if g := rows[k]; !close6(g.Energy.ValueExact, w[0]) || !close6(g.Tariff.Value, w[1]) {
				t.Errorf("%s, %s: %v Wh, %v, want %v Wh, %v", what, k, g.Energy.ValueExact, g.Tariff.Value, w[0], w[1])
			}
		}
	}
	check("first answer", f.months(), 743000)
	seen.take()
	check("asked again", f.months(), 743000)
	if n := seen.take(); n["query.bucket_stored"] != 0 || n["query.bucket_counts"] != 0 || n["query.bucket_months"] == 0 {
		t.Errorf("asked again: %v, want the months summed in ClickHouse and no day read", n)
	}

	f.readings(f.a, time.Date(2024, 3, 3, 12, 30, 0, 0, time.UTC), 1, 500)
	p0 := f.priced()
	check("after a new reading of March 3", f.months(), 743500)
	if got := f.priced() - p0; got != 1 {
		t.Errorf("a new reading of March 3 priced %d buckets, want that day's 1", got)
	}
	if n := seen.take(); n["query.bucket_stored"] != 1 {
		t.Errorf("after a new reading of March 3: %v, want one read of days (A's March)", n)
	}
	// March 3 of A is stored twice until a merge: its month is served day by day, the latest version.
	p0 = f.priced()
	check("asked again after March 3 was priced again", f.months(), 743500)
	if got := f.priced() - p0; got != 0 {
		t.Errorf("asked again after March 3 was priced again: %d buckets priced, want none", got)
	}
}
