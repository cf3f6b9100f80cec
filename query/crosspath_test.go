package query_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// The window crosses both daylight-saving changes of 2024's spring (US Mar 10, EU Mar 31)
// and a month end.
var crossFrom, crossTo = time.Date(2024, 3, 8, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 3, 0, 0, 0, 0, time.UTC)

// TestEveryCostPathPricesRandomFleetsAlike prices random tariffs (time-of-use with
// wrap-around hours and negative prices, day and month tiers, market prices with
// surcharges and gaps, non-commodity, contracts that start inside the window) and random
// records (straddling price changes, DST days, four zones) through every path — the
// interval's array path, its JOIN path and the fleet query's array and JOIN paths — and requires the same money,
// energy and confidence to 1e-6 for every record, day, month and window.
// KWHOUSE_TEST_SEED repeats a run.
func TestEveryCostPathPricesRandomFleetsAlike(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("KWHOUSE_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (KWHOUSE_TEST_SEED repeats it)", seed)
	rng := rand.New(rand.NewSource(seed))
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("crosspath")
	g := &generator{t: t, rng: rng, do: api.As(acc.Test()), markets: map[string]string{}, kinds: map[string]string{},
		products: map[int][]map[string]any{}, sent: map[string][]any{}}
	var locs []string
	ctx := context.Background()
	// Re-sent readings must still be stored twice when priced: merges would fold them.
	held := api.App.DB.Exec(ctx, chstore.Tool("SYSTEM STOP MERGES meter_records")) == nil
	defer api.App.DB.Exec(ctx, chstore.Tool("SYSTEM START MERGES meter_records"))
	for i := 0; i < 12; i++ {
		locs = append(locs, g.location(i%4, ""))
	}
	// Always a month and a day tier: the inner window's counters start before it.
	locs = append(locs, g.location(rng.Intn(4), "tiered MONTH"), g.location(rng.Intn(4), "tiered DAY"))
	for _, loc := range locs[:6] {
		g.resend(loc)
	}
	if held {
		requireResent(t, api, acc.ID)
	}
	scope := kwhouse.Scope{AccountID: acc.ID}
	coster := query.WithoutBuckets(query.WithoutHints(api.App.Pricer))
	// Two Pricers keeping priced buckets in the same tables, as two kwhouse processes do:
	// the buckets are kept across windows and changes of the records.
	cached, second := query.WithBuckets(coster), query.WithBuckets(coster)
	// The whole window, then one that starts and ends at random quarter-hours inside it:
	// records before its start run the tier counters, and some straddle its start.
	inner := g.innerWindow()
	for _, win := range [][2]time.Time{{crossFrom, crossTo}, inner} {
		priceEveryPath(t, g, coster, cached, second, scope, locs, win[0], win[1])
	}
	// Records change under the cache: new readings at a clean location, and on the first
	// day only at the month-tiered one (its counter then crosses its band bound sooner: later
	// days' money changes, their own records do not); re-sent ones at two others. Every
	// path, the cached one too, must see them.
	g.sent[locs[6]] = append(g.sent[locs[6]], g.records(locs[6])...)
	g.sent[locs[12]] = append(g.sent[locs[12]], g.recordsIn(locs[12], crossFrom, crossFrom.Add(24*time.Hour), 12)...)
	g.resend(locs[7])
	g.resend(locs[13])
	// The inner window first: for it the first day is lookback, its buckets' own records unchanged.
	for _, win := range [][2]time.Time{inner, {crossFrom, crossTo}} {
		priceEveryPath(t, g, coster, cached, second, scope, locs, win[0], win[1])
	}
	first, other := cached.BucketCounts(), second.BucketCounts()
	if first.Served == 0 || first.Priced == 0 || first.Invalidated == 0 || other.Served == 0 {
		t.Fatalf("priced buckets: the first process served %d, priced %d, found %d stale; the second served %d: all must happen",
			first.Served, first.Priced, first.Invalidated, other.Served)
	}
	t.Logf("priced buckets: first process %+v, second %+v", first, other)
}

// priceEveryPath prices the window through every path and compares them.
// cached and second keep priced buckets in ClickHouse: cached is asked first, second
// (another process) answers from the buckets cached wrote where nothing changed.
func priceEveryPath(t *testing.T, g *generator, coster, cached, second *query.Pricer, scope kwhouse.Scope, locs []string, w0, w1 time.Time) {
	t.Logf("window %s – %s", w0.Format(time.RFC3339), w1.Format(time.RFC3339))
	ctx := context.Background()
	joins := query.JoinOnly(coster)
	for _, agg := range []string{query.AggregationNone, query.AggregationDay, query.AggregationMonth} {
		fleetAgg := agg
		if agg == query.AggregationNone {
			fleetAgg = query.FleetAggregationNone
		}
		rows := map[string]map[string][]query.FleetRow{} // by path, location
		paths := map[string]*query.Pricer{"fleet arrays": coster, "fleet arrays FINAL": query.FinalAlways(coster), "fleet join": joins,
			"fleet arrays dedup first": query.DedupAlways(coster), "fleet join dedup first": query.DedupAlways(joins)}
		for path, c := range paths {
			fleet, err := c.Fleet(ctx, scope, query.FleetRequest{Start: w0, End: w1, Aggregation: fleetAgg, Limit: 10000})
			if err != nil {
				t.Fatalf("%s %s: %v", path, fleetAgg, err)
			}
			rows[path] = map[string][]query.FleetRow{}
			for _, r := range fleet.Data {
				rows[path][r.LocationID] = append(rows[path][r.LocationID], r)
			}
		}
		for _, p := range []struct {
			path string
			c    *query.Pricer
		}{{"fleet buckets", cached}, {"fleet buckets, second process", second}} {
			path := p.path
			fleet, err := p.c.Fleet(ctx, scope, query.FleetRequest{Start: w0, End: w1, Aggregation: fleetAgg, Limit: 10000})
			if err != nil {
				t.Fatalf("%s %s: %v", path, fleetAgg, err)
			}
			// Buckets are written back after the answer: the other process reads them once written.
			if err := p.c.WaitBucketWrites(ctx, scope); err != nil {
				t.Fatal(err)
			}
			rows[path] = map[string][]query.FleetRow{}
			for _, r := range fleet.Data {
				rows[path][r.LocationID] = append(rows[path][r.LocationID], r)
			}
		}
		for _, loc := range locs {
			req := query.CostRequest{ObjectID: loc, Aggregation: agg, Start: w0, End: w1}
			arr, err1 := coster.Interval(ctx, scope, req)
			join, err2 := joins.Interval(ctx, scope, req)
			if err1 != nil || err2 != nil {
				t.Fatalf("interval %s %s: %v / %v", loc, agg, err1, err2)
			}
			what := fmt.Sprintf("%s %s (%s)", loc, fleetAgg, g.kinds[loc])
			sameItems(t, what+" array vs join", arr, join)
			for path, byLoc := range rows {
				sameAsFleet(t, what+" interval vs "+path, arr, byLoc[loc], agg)
			}
		}
	}
}

// innerWindow is a window inside crossFrom–crossTo that starts 5 to 15 days in and ends
// 1 to 5 days before its end, at random quarter-hours.
func (g *generator) innerWindow() [2]time.Time {
	q := func(days, spread int) time.Duration {
		return time.Duration(days*96+g.rng.Intn(spread*96)) * 15 * time.Minute
	}
	return [2]time.Time{crossFrom.Add(q(5, 10)), crossTo.Add(-q(1, 4))}
}

func sameItems(t *testing.T, what string, a, b query.EnergyCost) {
	t.Helper()
	if len(a.Data) != len(b.Data) {
		t.Fatalf("%s: %d items against %d", what, len(a.Data), len(b.Data))
	}
	for i := range a.Data {
		x, y := a.Data[i], b.Data[i]
		if !x.StartTime.Time().Equal(y.StartTime.Time()) || !x.EndTime.Time().Equal(y.EndTime.Time()) || !close6(float64(x.Energy.ValueExact), float64(y.Energy.ValueExact)) ||
			!close6(float64(x.Tariff.Value), float64(y.Tariff.Value)) || !close6(float64(x.Tariff.Confidence), float64(y.Tariff.Confidence)) {
			t.Errorf("%s item %d: %+v against %+v", what, i, x, y)
		}
	}
	if !close6(float64(a.Tariff.Value), float64(b.Tariff.Value)) || !close6(float64(a.Tariff.Confidence), float64(b.Tariff.Confidence)) {
		t.Errorf("%s totals: %+v against %+v", what, a.Tariff, b.Tariff)
	}
}

func sameAsFleet(t *testing.T, what string, c query.EnergyCost, rows []query.FleetRow, agg string) {
	t.Helper()
	if agg == query.AggregationNone {
		if len(c.Data) == 0 {
			if len(rows) != 0 {
				t.Errorf("%s: rows %+v without records", what, rows)
			}
			return
		}
		if len(rows) != 1 || !close6(float64(rows[0].Energy.ValueExact), float64(c.Energy.ValueExact)) ||
			!close6(float64(rows[0].Tariff.Value), float64(c.Tariff.Value)) || !close6(float64(rows[0].Tariff.Confidence), float64(c.Tariff.Confidence)) {
			t.Errorf("%s: %+v against total %+v %+v", what, rows, c.Energy, c.Tariff)
		}
		return
	}
	if len(rows) != len(c.Data) {
		t.Fatalf("%s: %d rows against %d items", what, len(rows), len(c.Data))
	}
	for i, it := range c.Data {
		r := rows[i]
		if !r.StartTime.Time().Equal(it.StartTime.Time()) || !r.EndTime.Time().Equal(it.EndTime.Time()) || !close6(float64(r.Energy.ValueExact), float64(it.Energy.ValueExact)) ||
			!close6(float64(r.Tariff.Value), float64(it.Tariff.Value)) || !close6(float64(r.Tariff.Confidence), float64(it.Tariff.Confidence)) {
			t.Errorf("%s row %d: %+v against %+v", what, i, r, it)
		}
	}
}

func close6(a, b float64) bool { return math.Abs(a-b) <= 1e-6 }

// generator creates random locations, tariffs, market prices and records over the API.
type generator struct {
	t        *testing.T
	rng      *rand.Rand
	do       func(method, path string, body any) apitest.Response
	markets  map[string]string        // currency → market id
	kinds    map[string]string        // location → what prices it
	products map[int][]map[string]any // zone → the tariffs of its last product
	sent     map[string][]any         // location → the records sent
}

var crossZones = []struct{ zone, currency string }{
	{"Europe/London", "GBP"}, {"America/New_York", "USD"}, {"Europe/Berlin", "EUR"}, {"Australia/Sydney", "AUD"},
}

func (g *generator) must(r apitest.Response, what string) map[string]any {
	g.t.Helper()
	if r.Status != 200 && r.Status != 201 {
		g.t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	return r.Map(g.t)
}

// location creates a location in zone z with random tariffs (or, one time in three, the
// same product as the zone's previous location; want, when set, a new product of that
// kind) and random records.
func (g *generator) location(z int, want string) string {
	zc := crossZones[z]
	loc := g.must(g.do("POST", "/locations", map[string]any{"timezone": zc.zone, "currency_code": zc.currency}), "location")["id"].(string)
	product, kind := g.products[z], "same product as before"
	if product == nil || want != "" || g.rng.Intn(3) != 0 {
		product, kind = g.product(zc.currency, want)
		g.products[z] = product
	}
	g.kinds[loc] = kind + " " + zc.zone
	for _, body := range product {
		b := map[string]any{"location_id": loc}
		for k, v := range body {
			b[k] = v
		}
		g.must(g.do("POST", "/tariffs/elements", b), "tariff")
	}
	g.sent[loc] = g.records(loc)
	return loc
}

// resend sends a third of loc's readings again with new values: the later version counts.
func (g *generator) resend(loc string) {
	var recs []any
	for _, r := range g.sent[loc] {
		if g.rng.Intn(3) == 0 {
			again := map[string]any{}
			for k, v := range r.(map[string]any) {
				again[k] = v
			}
			again["value"] = math.Round(g.rng.Float64()*3000*1000) / 1000
			recs = append(recs, again)
		}
	}
	if len(recs) > 0 {
		g.must(g.do("PUT", "/meters/interval", recs), "re-sent records")
	}
}

// requireResent fails unless the account's table holds two versions of some reading, so
// that the fleet paths' first, undeduplicated read meets them.
func requireResent(t *testing.T, api *apitest.API, account string) {
	t.Helper()
	var rows, readings uint64
	err := api.App.DB.QueryRow(context.Background(), chstore.Tool(`SELECT count(), uniqExact(location_id, device_id,
		direction, tariff_rate, start_time, end_time) FROM meter_records WHERE account_id = ?`), account).Scan(&rows, &readings)
	if err != nil {
		t.Fatal(err)
	}
	if rows <= readings {
		t.Fatalf("%d rows hold %d readings: no re-sent reading is stored twice", rows, readings)
	}
	t.Logf("%d rows hold %d readings", rows, readings)
}

// product is a random set of tariff bodies (without location_id) and its description;
// want ("tiered MONTH", say), when set, is its kind and tier period.
func (g *generator) product(currency, want string) ([]map[string]any, string) {
	kind, period, _ := strings.Cut(want, " ")
	if want == "" {
		kind = []string{"tou", "tiered", "market", "tou+noncommodity", "market without prices"}[g.rng.Intn(5)]
	}
	base := map[string]any{"direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z"}
	if g.rng.Intn(3) == 0 { // starts inside the window: earlier records are extrapolated
		base["contract_start_date"] = crossFrom.Add(time.Duration(1+g.rng.Intn(20)) * 24 * time.Hour).Format(time.RFC3339)
	}
	with := func(fields map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range []map[string]any{base, fields} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	switch kind {
	case "tiered":
		bound := 1 + g.rng.Intn(30)
		if period == "" {
			period = []string{"MONTH", "DAY"}[g.rng.Intn(2)]
		} else if period == "MONTH" {
			bound = 40 + g.rng.Intn(20) // crossed mid-window by some 3.5 kWh a day of records
		}
		return []map[string]any{with(map[string]any{"tier_period": period, "schedule": flatRate([]any{
			map[string]any{"fixed": g.price(), "to_kwh": bound}, map[string]any{"fixed": g.price()}})})}, kind + " " + period
	case "market":
		return []map[string]any{with(map[string]any{"market_rates": true, "market_id": g.market(currency),
			"schedule": flatRate([]any{map[string]any{"surcharge_fixed": g.price(), "surcharge_percentage": float64(g.rng.Intn(40)) - 10}})})}, kind
	case "market without prices": // every record unpriced: money 0, confidence 0 on every path
		id := g.must(g.do("POST", "/markets", map[string]any{"display_name": "empty " + currency, "currency_code": currency}), "market")["id"].(string)
		return []map[string]any{with(map[string]any{"market_rates": true, "market_id": id,
			"schedule": flatRate([]any{map[string]any{"surcharge_fixed": g.price()}})})}, kind
	case "tou+noncommodity":
		return []map[string]any{with(map[string]any{"schedule": g.touSchedule()}),
			with(map[string]any{"type": "NON_COMMODITY", "schedule": g.touSchedule()})}, kind
	}
	return []map[string]any{with(map[string]any{"schedule": g.touSchedule()})}, kind
}

// price is a random price per kWh, sometimes negative.
func (g *generator) price() float64 { return math.Round((g.rng.Float64()*0.7-0.1)*1e4) / 1e4 }

// touSchedule cuts the day at 2–4 random times (half hours too); the last period wraps
// past midnight back to the first cut.
func (g *generator) touSchedule() []any {
	n := 2 + g.rng.Intn(3)
	seen := map[int]bool{}
	var cuts []int
	for len(cuts) < n {
		c := g.rng.Intn(48)
		if !seen[c] {
			seen[c] = true
			cuts = append(cuts, c)
		}
	}
	sortInts(cuts)
	clock := func(c int) string { return fmt.Sprintf("%02d:%02d:00", c/2, 30*(c%2)) }
	var hours []any
	for i, c := range cuts {
		next := cuts[(i+1)%n]
		hours = append(hours, map[string]any{"valid_from": clock(c), "valid_to": clock(next), "rate": []any{map[string]any{"fixed": g.price()}}})
	}
	return []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": hours}}}}
}

func sortInts(a []int) {
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			if a[j] < a[i] {
				a[i], a[j] = a[j], a[i]
			}
		}
	}
}

func flatRate(rate []any) []any {
	return []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{
		"days": []string{"All"}, "hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": rate}}}}}}
}

// market returns the currency's market, creating it with half-hourly prices over the
// window (about one in twenty missing).
func (g *generator) market(currency string) string {
	if id, ok := g.markets[currency]; ok {
		return id
	}
	id := g.must(g.do("POST", "/markets", map[string]any{"display_name": "spot " + currency, "currency_code": currency}), "market")["id"].(string)
	var prices []any
	for t := crossFrom.Add(-24 * time.Hour); t.Before(crossTo.Add(48 * time.Hour)); t = t.Add(30 * time.Minute) {
		if g.rng.Intn(20) == 0 {
			continue
		}
		prices = append(prices, map[string]any{"start_time": t.Format(time.RFC3339), "end_time": t.Add(30 * time.Minute).Format(time.RFC3339), "price": g.price()})
	}
	g.must(g.do("PUT", "/markets/"+id+"/prices", prices), "prices")
	g.markets[currency] = id
	return id
}

// records sends 60 random records: quarter-hour aligned, 15 minutes to 3 hours long, a few
// LOCAL, a few of direction EXPORT.
func (g *generator) records(loc string) []any { return g.recordsIn(loc, crossFrom, crossTo, 60) }

// recordsIn sends n random records starting in [from, to), as records does.
func (g *generator) recordsIn(loc string, from, to time.Time, n int) []any {
	var recs []any
	slots := int(to.Sub(from) / (15 * time.Minute))
	for i := 0; i < n; i++ {
		start := from.Add(time.Duration(g.rng.Intn(slots)) * 15 * time.Minute)
		end := start.Add(time.Duration(1+g.rng.Intn(12)) * 15 * time.Minute)
		rate := "IMPORT"
		if g.rng.Intn(10) == 0 {
			rate = "LOCAL"
		}
		rec := map[string]any{"location_id": loc, "start_time": start.Format(time.RFC3339), "end_time": end.Format(time.RFC3339),
			"value": math.Round(g.rng.Float64()*3000*1000) / 1000, "units": "WH", "tariff_rate": rate}
		if g.rng.Intn(8) == 0 {
			rec["direction"] = "EXPORT" // not priced for IMPORT, but tier counters read it
		}
		recs = append(recs, rec)
	}
	g.must(g.do("PUT", "/meters/interval", recs), "records")
	return recs
}
