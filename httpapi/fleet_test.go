package httpapi_test

import (
	"encoding/csv"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// mixedFleet is a small fleet priced by hand:
//   - tiered (London, GBP, customer cu): 10 kWh a month at 0.10, then 0.30; 1 kWh every UTC
//     hour of Mar 30 and 31, 2024 (Mar 31 is the 23-hour spring-forward day);
//   - market (New York, USD, customer cu): (price + 0.02) × 1.05, one reading without a price;
//   - bare (London, no customer): readings but no tariff → skipped;
//   - quiet (London, customer cu): a tariff but no readings → no rows.
type mixedFleet struct {
	*costEnv
	tiered, market, bare, quiet, cu string
}

const fleetFrom, fleetTo = "2024-03-30T00:00:00Z", "2024-04-01T00:00:00Z"

func newMixedFleet(t *testing.T) *mixedFleet {
	e := newCostEnv(t, "Europe/London")
	f := &mixedFleet{costEnv: e, tiered: e.loc}
	f.cu = e.do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	e.do("PATCH", "/locations/"+f.tiered, map[string]any{"customer_id": f.cu})
	f.market = f.location("America/New_York", "USD", f.cu)
	f.bare = f.location("Europe/London", "GBP", "")
	f.quiet = f.location("Europe/London", "GBP", f.cu)

	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.10, "to_kwh": 10}, map[string]any{"fixed": 0.30})})
	e.reads(hourly("2024-03-30T00:00:00Z", 48, 1000, nil)...)

	m := e.do("POST", "/markets", map[string]any{"display_name": "NY spot", "currency_code": "USD"}).Map(t)["id"].(string)
	if r := e.do("PUT", "/markets/"+m+"/prices", []any{
		map[string]any{"start_time": "2024-03-30T12:00:00Z", "end_time": "2024-03-30T12:30:00Z", "price": 0.10},
		map[string]any{"start_time": "2024-03-30T12:30:00Z", "end_time": "2024-03-30T13:00:00Z", "price": -0.05},
		map[string]any{"start_time": "2024-03-31T02:00:00Z", "end_time": "2024-03-31T03:00:00Z", "price": 0.30},
	}); r.Status != 200 {
		t.Fatalf("prices: %d %s", r.Status, r.Body)
	}
	f.tariffAt(f.market, map[string]any{"market_rates": true, "market_id": m,
		"schedule": flat(map[string]any{"surcharge_fixed": 0.02, "surcharge_percentage": 5})})
	f.tariffAt(f.quiet, map[string]any{"schedule": flat(map[string]any{"fixed": 0.5})})
	e.reads(
		// Mar 30, 08:00–09:00 EDT: 1 kWh at (0.10 + 0.02) × 1.05 + 1 kWh at (−0.05 + 0.02) × 1.05 = 0.0945.
		map[string]any{"location_id": f.market, "start_time": "2024-03-30T12:00:00Z", "end_time": "2024-03-30T13:00:00Z", "value": 2000},
		// Mar 30, 22:00 EDT: (0.30 + 0.02) × 1.05 = 0.336.
		map[string]any{"location_id": f.market, "start_time": "2024-03-31T02:00:00Z", "end_time": "2024-03-31T03:00:00Z", "value": 1000},
		// Mar 29, 21:00 EDT: no market price → 0, confidence 0.
		map[string]any{"location_id": f.market, "start_time": "2024-03-30T01:00:00Z", "end_time": "2024-03-30T02:00:00Z", "value": 1000},
		map[string]any{"location_id": f.bare, "start_time": "2024-03-30T10:00:00Z", "end_time": "2024-03-30T11:00:00Z", "value": 500},
	)
	return f
}

func (f *mixedFleet) location(zone, currency, customer string) string {
	body := map[string]any{"timezone": zone, "currency_code": currency}
	if customer != "" {
		body["customer_id"] = customer
	}
	return f.do("POST", "/locations", body).Map(f.t)["id"].(string)
}

func (f *mixedFleet) tariffAt(loc string, fields map[string]any) {
	saved := f.loc
	f.loc = loc
	f.tariff(fields)
	f.loc = saved
}

func (f *mixedFleet) fleet(body map[string]any) fleetBody {
	f.t.Helper()
	if _, ok := body["start_time"]; !ok {
		body["start_time"], body["end_time"] = fleetFrom, fleetTo
	}
	r := f.do("POST", "/costs/fleet", body)
	if r.Status != 200 {
		f.t.Fatalf("fleet %v: %d %s", body, r.Status, r.Body)
	}
	var out fleetBody
	r.JSON(f.t, &out)
	return out
}

// want is a row as the tests write it: group id, date, start, end, currency, Wh, money, confidence.
type want struct {
	id, date, start, end, currency string
	wh, money, conf                float64
}

func checkRows(t *testing.T, what string, got []fleetRow, ws []want) {
	t.Helper()
	if len(got) != len(ws) {
		t.Fatalf("%s: %d rows, want %d: %+v", what, len(got), len(ws), got)
	}
	for i, w := range ws {
		g := got[i]
		id := g.LocationID + g.DeviceID + g.CustomerID
		if id != w.id || g.Date != w.date || g.StartTime != w.start || g.EndTime != w.end || g.CurrencyCode != w.currency ||
			!close6(g.Energy.Value, w.wh) || !close6(g.Tariff.Value, w.money) || !close6(g.Tariff.Confidence, w.conf) {
			t.Errorf("%s row %d: %+v, want %+v", what, i, g, w)
		}
	}
}

func (f *mixedFleet) dayRows() []want {
	return []want{
		// Mar 30 (GMT): 10 kWh × 0.10 + 14 kWh × 0.30 = 5.2. Mar 31 (23 h, all past the tier): 6.9.
		// Apr 1 starts 23:00Z (BST); its hour opens April's counter: 0.10.
		{f.tiered, "2024-03-30", "2024-03-30T00:00:00Z", "2024-03-31T00:00:00Z", "GBP", 24000, 5.2, 1},
		{f.tiered, "2024-03-31", "2024-03-31T00:00:00Z", "2024-03-31T23:00:00Z", "GBP", 23000, 6.9, 1},
		{f.tiered, "2024-04-01", "2024-03-31T23:00:00Z", "2024-04-01T23:00:00Z", "GBP", 1000, 0.1, 1},
		{f.market, "2024-03-29", "2024-03-29T04:00:00Z", "2024-03-30T04:00:00Z", "USD", 1000, 0, 0},
		{f.market, "2024-03-30", "2024-03-30T04:00:00Z", "2024-03-31T04:00:00Z", "USD", 3000, 0.4305, 1},
	}
}

func sortedWant(ws []want) []want {
	out := append([]want(nil), ws...)
	for i := range out { // rows ascend by group id, then date
		for j := i + 1; j < len(out); j++ {
			if out[j].id < out[i].id || out[j].id == out[i].id && out[j].date < out[i].date {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestFleetMixedFleetByLocationDayMonthAndWindow(t *testing.T) {
	f := newMixedFleet(t)
	day := f.fleet(map[string]any{"aggregation": "DAY"})
	checkRows(t, "DAY", day.Data, sortedWant(f.dayRows()))
	if day.Skipped.Count != 1 || len(day.Skipped.Data) != 1 || day.Skipped.Data[0].ID != f.bare || day.Skipped.Data[0].Code != "no_tariff_connected" {
		t.Errorf("skipped %+v, want %s no_tariff_connected", day.Skipped, f.bare)
	}
	month := f.fleet(map[string]any{"aggregation": "MONTH"})
	checkRows(t, "MONTH", month.Data, sortedWant([]want{
		{f.tiered, "2024-03", "2024-03-01T00:00:00Z", "2024-03-31T23:00:00Z", "GBP", 47000, 12.1, 1},
		{f.tiered, "2024-04", "2024-03-31T23:00:00Z", "2024-04-30T23:00:00Z", "GBP", 1000, 0.1, 1},
		{f.market, "2024-03", "2024-03-01T05:00:00Z", "2024-04-01T04:00:00Z", "USD", 4000, 0.4305, 0},
	}))
	whole := f.fleet(map[string]any{})
	checkRows(t, "NONE", whole.Data, sortedWant([]want{
		{f.tiered, "", fleetFrom, fleetTo, "GBP", 48000, 12.2, 1},
		{f.market, "", fleetFrom, fleetTo, "USD", 4000, 0.4305, 0},
	}))
	only := f.fleet(map[string]any{"location_ids": []string{f.market, f.quiet}, "aggregation": "DAY"})
	checkRows(t, "location_ids", only.Data, f.dayRows()[3:])
	if only.Skipped.Count != 0 {
		t.Errorf("skipped %+v for locations that can be priced", only.Skipped)
	}
}

func TestFleetByCustomerSumsPerDateAndCurrency(t *testing.T) {
	f := newMixedFleet(t)
	got := f.fleet(map[string]any{"aggregation": "DAY", "group_by": "customer"})
	checkRows(t, "customer DAY", got.Data, []want{
		{f.cu, "2024-03-29", "", "", "USD", 1000, 0, 0},
		{f.cu, "2024-03-30", "", "", "GBP", 24000, 5.2, 1},
		{f.cu, "2024-03-30", "", "", "USD", 3000, 0.4305, 1},
		{f.cu, "2024-03-31", "", "", "GBP", 23000, 6.9, 1},
		{f.cu, "2024-04-01", "", "", "GBP", 1000, 0.1, 1},
	})
	// A customer with a location that cannot be priced is skipped as a whole.
	other := f.do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	f.do("PATCH", "/locations/"+f.bare, map[string]any{"customer_id": other})
	got = f.fleet(map[string]any{"group_by": "customer"})
	checkRows(t, "customer NONE", got.Data, []want{{f.cu, "", "", "", "GBP", 48000, 12.2, 1}, {f.cu, "", "", "", "USD", 4000, 0.4305, 0}})
	if got.Skipped.Count != 1 || got.Skipped.Data[0].ID != other {
		t.Errorf("skipped %+v, want customer %s", got.Skipped, other)
	}
	mine := f.fleet(map[string]any{"group_by": "location", "customer_id": other})
	if len(mine.Data) != 0 || mine.Skipped.Count != 1 || mine.Skipped.Data[0].ID != f.bare {
		t.Errorf("customer_id filter: %+v", mine)
	}
}

func TestFleetOrderAndPaging(t *testing.T) {
	f := newMixedFleet(t)
	byCost := f.fleet(map[string]any{"order": "cost_desc"})
	if len(byCost.Data) != 2 || byCost.Data[0].LocationID != f.tiered || byCost.Data[1].LocationID != f.market {
		t.Errorf("cost_desc: %+v", byCost.Data)
	}
	asc := f.fleet(map[string]any{"order": "cost_asc"})
	if len(asc.Data) != 2 || asc.Data[0].LocationID != f.market {
		t.Errorf("cost_asc: %+v", asc.Data)
	}
	for _, order := range []string{"id", "cost_desc", "cost_asc", "energy_desc"} {
		all := f.fleet(map[string]any{"aggregation": "DAY", "order": order})
		var paged []fleetRow
		body := map[string]any{"aggregation": "DAY", "order": order, "limit": 2}
		for page := 0; ; page++ {
			p := f.fleet(body)
			paged = append(paged, p.Data...)
			if !p.HasMore {
				if p.NextCursor != nil {
					t.Errorf("%s: next_cursor %q on the last page", order, *p.NextCursor)
				}
				break
			}
			if page > 5 || p.NextCursor == nil {
				t.Fatalf("%s: paging does not end (page %d, cursor %v)", order, page, p.NextCursor)
			}
			body["starting_after"] = *p.NextCursor
		}
		if !reflect.DeepEqual(paged, all.Data) || len(all.Data) != 5 {
			t.Errorf("%s: pages %+v, one answer %+v", order, paged, all.Data)
		}
		for i := 1; i < len(all.Data); i++ {
			a, b := all.Data[i-1], all.Data[i]
			if (order == "cost_desc" && a.Tariff.Value < b.Tariff.Value) || (order == "cost_asc" && a.Tariff.Value > b.Tariff.Value) ||
				(order == "energy_desc" && a.Energy.Value < b.Energy.Value) {
				t.Errorf("%s: row %d %+v before %+v", order, i, a, b)
			}
		}
	}
}

func TestFleetCSVStreamsEveryRow(t *testing.T) {
	f := newMixedFleet(t)
	r := f.api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: f.acc.Test(), Header: map[string]string{"Accept": "text/csv"},
		Body: map[string]any{"start_time": fleetFrom, "end_time": fleetTo, "aggregation": "DAY", "limit": 1}})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	lines, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"location_id", "date", "start_time", "end_time", "currency_code", "energy_value", "energy_value_exact", "tariff_value", "tariff_confidence"}
	if len(lines) != 6 || !reflect.DeepEqual(lines[0], header) {
		t.Fatalf("csv (limit is ignored: 5 rows): %q", lines)
	}
	first := fmt.Sprint(lines[1:])
	for _, w := range []string{f.tiered + " 2024-03-30 2024-03-30T00:00:00Z 2024-03-31T00:00:00Z GBP 24000 24000 5.2 1",
		f.market + " 2024-03-30 2024-03-30T04:00:00Z 2024-03-31T04:00:00Z USD 3000 3000 0.4305 1"} {
		if !strings.Contains(first, w) {
			t.Errorf("csv lacks %q: %s", w, first)
		}
	}
}

func TestFleetRequestErrors(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("fleet-errors")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}}).Map(t)["id"].(string)
	many := make([]string, 10001)
	for i := range many {
		many[i] = loc
	}
	cases := []struct {
		body        map[string]any
		code, param string
	}{
		{map[string]any{"end_time": fleetTo}, "parameter_missing", "start_time"},
		{map[string]any{"start_time": fleetFrom}, "parameter_missing", "end_time"},
		{map[string]any{"end_time": fleetFrom, "start_time": fleetTo}, "invalid_window", "end_time"},
		{map[string]any{"start_time": "2023-01-01T00:00:00Z", "end_time": "2024-03-01T00:00:00Z"}, "window_too_long", "end_time"},
		{map[string]any{"direction": "UP"}, "invalid_value", "direction"},
		{map[string]any{"aggregation": "WEEK"}, "invalid_value", "aggregation"},
		{map[string]any{"group_by": "site"}, "invalid_value", "group_by"},
		{map[string]any{"order": "price"}, "invalid_value", "order"},
		{map[string]any{"limit": 10001}, "invalid_value", "limit"},
		{map[string]any{"limit": -1}, "invalid_value", "limit"},
		{map[string]any{"location_ids": []string{"nope"}}, "invalid_value", "location_ids"},
		{map[string]any{"location_ids": []string{"loc_000000000000000000000000"}}, "resource_missing", "location_ids"},
		{map[string]any{"location_ids": many}, "too_many_locations", "location_ids"},
		{map[string]any{"customer_id": "loc_1"}, "invalid_value", "customer_id"},
		{map[string]any{"customer_id": "cus_000000000000000000000000"}, "resource_missing", "customer_id"},
		{map[string]any{"starting_after": "not-a-cursor"}, "invalid_cursor", "starting_after"},
		{map[string]any{"colour": "red"}, "unknown_field", "colour"},
	}
	for _, c := range cases {
		body := map[string]any{"start_time": fleetFrom, "end_time": fleetTo}
		for k, v := range c.body {
			body[k] = v
		}
		for k := range body {
			if c.body[k] == nil && k != "colour" && (k == "start_time" || k == "end_time") && c.param == k {
				delete(body, k)
			}
		}
		r := api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: acc.Test(), Body: body})
		m := r.Map(t)
		if r.Status != 400 || m["code"] != c.code || m["param"] != c.param || m["message"] == "" {
			t.Errorf("%v: %d %s, want 400 %s %s", c.body, r.Status, r.Body, c.code, c.param)
		}
	}
}
