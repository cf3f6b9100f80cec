package dashboard_test

import (
	"fmt"
	"math"
	"net/url"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

type caller = func(method, path string, body any) apitest.Response

// costRow is what the checks read of a fleet row or a cost item.
type costRow struct {
	LocationID   string `json:"location_id"`
	Date         string `json:"date"`
	StartTime    string `json:"start_time"`
	EndTime      string `json:"end_time"`
	CurrencyCode string `json:"currency_code"`
	Energy       struct {
		Value int64 `json:"value"`
	} `json:"energy"`
	Tariff struct {
		Value      float64 `json:"value"`
		Confidence float64 `json:"confidence"`
	} `json:"tariff"`
}

// sums is one table row's figures: Wh and money in millionths, import and export.
type sums struct{ importWh, importMoney, exportWh, exportMoney int64 }

// cells are the figures as the page must show them: kWh with 3 decimals, money to the
// cent (rounded half away from zero), net = import cost − export earnings.
func (s sums) cells() []string {
	return []string{kwh(s.importWh), money(s.importMoney), kwh(s.exportWh), money(s.exportMoney), money(s.importMoney - s.exportMoney)}
}

func kwh(wh int64) string { return fmt.Sprintf("%.3f", float64(wh)/1000) }

func money(m int64) string {
	cents := int64(math.Round(math.Abs(float64(m)) / 1e4))
	if m < 0 && cents > 0 {
		return fmt.Sprintf("-%.2f", float64(cents)/100)
	}
	return fmt.Sprintf("%.2f", float64(cents)/100)
}

func micro(v float64) int64 { return int64(math.Round(v * 1e6)) }

func (s *sums) add(r costRow, export bool) {
	if export {
		s.exportWh += r.Energy.Value
		s.exportMoney += micro(r.Tariff.Value)
		return
	}
	s.importWh += r.Energy.Value
	s.importMoney += micro(r.Tariff.Value)
}

// fleetRows asks POST /costs/fleet for every row (the test fleet fits one page).
func fleetRows(t *testing.T, call caller, aggregation, direction string) []costRow {
	t.Helper()
	var body struct {
		HasMore bool      `json:"has_more"`
		Data    []costRow `json:"data"`
	}
	r := call("POST", "/costs/fleet", map[string]any{"start_time": from.Format(time.RFC3339), "end_time": to.Format(time.RFC3339),
		"aggregation": aggregation, "direction": direction, "limit": 10000})
	if r.Status != 200 {
		t.Fatalf("fleet %s %s: %d %s", aggregation, direction, r.Status, r.Body)
	}
	r.JSON(t, &body)
	if body.HasMore || len(body.Data) == 0 {
		t.Fatalf("fleet %s %s: %d rows, has_more %v", aggregation, direction, len(body.Data), body.HasMore)
	}
	return body.Data
}

// byKey sums both directions' rows per currency and key.
func byKey(imports, exports []costRow, key func(costRow) string) map[string]map[string]*sums {
	out := map[string]map[string]*sums{}
	for i, rows := range [][]costRow{imports, exports} {
		for _, r := range rows {
			if out[r.CurrencyCode] == nil {
				out[r.CurrencyCode] = map[string]*sums{}
			}
			if out[r.CurrencyCode][key(r)] == nil {
				out[r.CurrencyCode][key(r)] = &sums{}
			}
			out[r.CurrencyCode][key(r)].add(r, i == 1)
		}
	}
	return out
}

// checkTable requires the page's table id to hold exactly want's keys, in key order, each
// with want's figures from column skip on.
func checkTable(t *testing.T, b *browser, id string, skip int, want map[string]*sums) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	got := b.table(id)
	if len(got) != len(keys) {
		t.Fatalf("table %s: %d rows, the API has %d: %+v", id, len(got), len(keys), got)
	}
	for i, k := range keys {
		if got[i].Key != k || len(got[i].Cells) < skip || !reflect.DeepEqual(got[i].Cells[skip:], want[k].cells()) {
			t.Errorf("table %s row %s: page %v, the API's figures %v", id, k, got[i], want[k].cells())
		}
	}
}

// checkFleet compares the fleet view's day, month and location tables with POST /costs/fleet.
func checkFleet(t *testing.T, b *browser, call caller) {
	t.Helper()
	date := func(r costRow) string { return r.Date }
	for _, agg := range []struct{ aggregation, table string }{{"DAY", "days"}, {"MONTH", "months"}} {
		per := byKey(fleetRows(t, call, agg.aggregation, "IMPORT"), fleetRows(t, call, agg.aggregation, "EXPORT"), date)
		if len(per) != 2 {
			t.Errorf("the test fleet should have two currencies, the API shows %d", len(per))
		}
		for currency, want := range per {
			checkTable(t, b, "fleet-"+agg.table+"-"+currency, 1, want)
		}
		if agg.aggregation == "MONTH" && len(per["GBP"]) != 2 {
			t.Errorf("the window spans two months; GBP has %d", len(per["GBP"]))
		}
	}
	// A location's row is its months summed; each must also be what the API answers for
	// the whole window, to the cent.
	locations, whole := perLocation(t, call, "MONTH"), perLocation(t, call, "NONE")
	for id, s := range whole {
		if locations[id] == nil || !reflect.DeepEqual(locations[id].cells(), s.cells()) {
			t.Errorf("location %s: months %+v, the whole window %+v", id, locations[id], s)
		}
	}
	checkTable(t, b, "fleet-locations", 2, locations)
}

// checkLocation compares a location's page with POST /costs/interval (days, both
// directions; its last 48 readings) and its shaded slots with GET /slots/threshold.
func checkLocation(t *testing.T, b *browser, call caller, id string) {
	t.Helper()
	window := map[string]any{"start_time": from.Format(time.RFC3339), "end_time": to.Format(time.RFC3339)}
	interval := func(query string) []costRow {
		var body struct{ Data []costRow }
		r := call("POST", "/costs/interval/"+id+"?"+query, window)
		if r.Status != 200 {
			t.Fatalf("interval %s %s: %d %s", id, query, r.Status, r.Body)
		}
		r.JSON(t, &body)
		return body.Data
	}
	start := func(r costRow) string { return r.StartTime }
	days := byKey(interval("aggregation=DAY&direction=IMPORT"), interval("aggregation=DAY&direction=EXPORT"), start)
	for _, want := range days {
		checkTable(t, b, "loc-days", 1, want)
	}

	raw := interval("direction=IMPORT")
	raw = raw[max(0, len(raw)-48):]
	got := b.table("loc-readings")
	if len(got) != len(raw) {
		t.Fatalf("readings of %s: %d rows, want the API's last %d", id, len(got), len(raw))
	}
	for i, r := range raw {
		want := []string{kwh(r.Energy.Value), money(micro(r.Tariff.Value))}
		if got[i].Key != r.StartTime || !reflect.DeepEqual(got[i].Cells[1:3], want) {
			t.Errorf("reading %s of %s: page %v, the API's %v", r.StartTime, id, got[i], want)
		}
	}

	for _, segment := range []string{"HIGH", "LOW"} {
		q := url.Values{"start_time": {from.Format(time.RFC3339)}, "end_time": {to.Format(time.RFC3339)},
			"segment": {segment}, "relative": {"0.25"}}
		r := call("GET", "/slots/threshold/"+id+"?"+q.Encode(), nil)
		if r.Status != 200 {
			t.Fatalf("slots %s: %d %s", segment, r.Status, r.Body)
		}
		var slots struct{ Data []costRow }
		r.JSON(t, &slots)
		var want []string
		for _, s := range slots.Data {
			want = append(want, s.StartTime+" "+s.EndTime)
		}
		shaded := eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll("rect.slot-%s")].map((r) =>
			r.dataset.start + " " + r.dataset.end)`, map[string]string{"HIGH": "high", "LOW": "low"}[segment]))
		if len(want) == 0 || !reflect.DeepEqual(shaded, want) {
			t.Errorf("%s slots of %s: shaded %v, the API's %v", segment, id, shaded, want)
		}
	}
}

// perLocation sums the fleet's rows of both directions per location.
func perLocation(t *testing.T, call caller, aggregation string) map[string]*sums {
	out := map[string]*sums{}
	for _, perID := range byKey(fleetRows(t, call, aggregation, "IMPORT"), fleetRows(t, call, aggregation, "EXPORT"),
		func(r costRow) string { return r.LocationID }) {
		for id, s := range perID {
			out[id] = s
		}
	}
	return out
}
