package httpapi_test

import (
	"testing"
)

// A time zone ClickHouse cannot load (right/… with leap seconds, posix/… copies: Go loads
// both from the host's tz database) is refused on every write that names one; before,
// such a location answered 500 to every local-day query, its account's fleet too.
func TestTimeZonesClickHouseCannotLoadAreRefused(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	for _, zone := range []string{"right/UTC", "right/Europe/London", "posix/Europe/London", "posix/UTC",
		"Europe/London/", "europe/london", "Etc/GMT+13", "GB", "EST5EDT"} {
		for _, w := range []struct {
			method, path string
			body         map[string]any
		}{
			{"POST", "/locations", map[string]any{"timezone": zone, "currency_code": "GBP"}},
			{"PATCH", "/locations/" + e.loc, map[string]any{"timezone": zone}},
			{"POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
				"timezone": zone, "contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
				"schedule": flat(map[string]any{"fixed": 0.1})}},
		} {
			r := e.do(w.method, w.path, w.body)
			if m := r.Map(t); r.Status != 400 || m["code"] != "invalid_timezone" || m["param"] != "timezone" {
				t.Errorf("%s %s with timezone %q: %d %s, want 400 invalid_timezone param timezone", w.method, w.path, zone, r.Status, r.Body)
			}
		}
	}
	if n := len(e.do("GET", "/locations", nil).Map(t)["data"].([]any)); n != 1 {
		t.Errorf("%d locations, want the env's one: a refused create stores nothing", n)
	}
	if l := e.do("GET", "/locations/"+e.loc, nil).Map(t); l["timezone"] != "Europe/London" {
		t.Errorf("location zone %v after refused PATCHes, want Europe/London", l["timezone"])
	}
}

// Old names of zones, fixed-offset Etc zones and UTC are accepted, and a location in each
// is priced by local day, alone and in the account's fleet.
func TestAcceptedZonesPriceByLocalDay(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	for _, zone := range []string{"US/Eastern", "Europe/Kiev", "Asia/Calcutta", "Etc/GMT-1", "Etc/UTC", "UTC"} {
		r := e.do("POST", "/locations", map[string]any{"timezone": zone, "currency_code": "GBP"})
		if r.Status != 201 {
			t.Fatalf("location in %s: %d %s", zone, r.Status, r.Body)
		}
		e.loc = r.Map(t)["id"].(string)
		e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.5})})
		e.reads(hourly("2024-03-10T00:00:00Z", 24, 1000, nil)...)
		r = e.do("POST", "/costs/interval/"+e.loc+"?aggregation=DAY",
			map[string]any{"start_time": "2024-03-09T00:00:00Z", "end_time": "2024-03-12T00:00:00Z"})
		if r.Status != 200 {
			t.Errorf("DAY cost of a location in %s: %d %s", zone, r.Status, r.Body)
		}
	}
	for _, agg := range []string{"DAY", "MONTH"} {
		r := e.do("POST", "/costs/fleet", map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z",
			"aggregation": agg})
		if r.Status != 200 || len(r.Map(t)["data"].([]any)) == 0 {
			t.Errorf("fleet by %s: %d %s", agg, r.Status, r.Body)
		}
	}
}
