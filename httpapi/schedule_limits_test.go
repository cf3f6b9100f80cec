package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// hoursList is n equal periods covering a day from offset seconds on (wrapping past
// midnight), price blocks of four periods alternating 0.1 and 0.2.
func hoursList(n, offset int) []any {
	step := 86400 / n
	clock := func(s int) string {
		s %= 86400
		return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"valid_from": clock(offset + i*step), "valid_to": clock(offset + (i+1)*step),
			"rate": []any{map[string]any{"fixed": 0.1 * float64(i/4%2+1)}}}
	}
	return out
}

// A schedule with 8,640 ten-second periods in one hours list is refused, naming the list.
func TestDenseScheduleIsRefusedNamingTheList(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	r := e.do("POST", "/tariffs/elements", map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2025-01-01T00:00:00Z",
		"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{
			map[string]any{"days": []string{"All"}, "hours": hoursList(8640, 0)}}}}})
	m := r.Map(t)
	if r.Status != 400 || m["param"] != "schedule[0].days_and_hours[0].hours" || m["code"] != "too_many_periods" ||
		!strings.Contains(m["message"].(string), "96") {
		t.Fatalf("8,640 periods: %d %s, want 400 too_many_periods naming schedule[0].days_and_hours[0].hours and the limit", r.Status, r.Body)
	}
	if list := e.do("GET", "/tariffs/elements?location_id="+e.loc, nil).Map(t)["data"].([]any); len(list) != 0 {
		t.Errorf("a refused tariff was stored: %v", list)
	}
}

// largeSchedule is just within the limits: 20 overlapping lists of 96 periods, each
// cut at other seconds, all applying every day (the first list wins everywhere).
func largeSchedule() []any {
	var dh []any
	for k := 0; k < 20; k++ {
		dh = append(dh, map[string]any{"days": []string{"All"}, "hours": hoursList(96, k*45)})
	}
	return []any{map[string]any{"months": []string{"All"}, "days_and_hours": dh}}
}

// expandedYears reads kwhouse_tariff_years_expanded_total from /metrics.
func expandedYears(t *testing.T, api *apitest.API) string {
	t.Helper()
	line := metric(t, api, "kwhouse_tariff_years_expanded_total ")
	if line == "" {
		t.Fatal("no kwhouse_tariff_years_expanded_total in /metrics")
	}
	return strings.TrimPrefix(line, "kwhouse_tariff_years_expanded_total ")
}

// A schedule at the limits prices: concurrent timelines of one year expand that year
// once, and later ones read it stored.
func TestLargeScheduleExpandsOnceForConcurrentRequests(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) {
		c.Limits = config.Limits{Queries: 8, AccountQueries: 8, QueryQueue: 8, QueryWait: time.Minute}
	}})
	acc := api.NewAccount("dense")
	e := &costEnv{t: t, api: api, acc: acc}
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": largeSchedule()})
	// 90 days inside 2024: only 2024 is expanded.
	path := "/tariffs/rates/" + e.loc + "?start_time=2024-03-01T00:00:00Z&end_time=2024-05-30T00:00:00Z"
	var wg sync.WaitGroup
	items := make([]int, 4)
	for i := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("GET", path, nil)
			if r.Status != 200 {
				t.Errorf("rates %d: %d %s", i, r.Status, r.Body)
				return
			}
			items[i] = len(r.Map(t)["data"].([]any))
		}()
	}
	wg.Wait()
	// March 31 is 23 hours long in London: 6 price changes a day, 89 days and one short.
	for i, n := range items {
		if n < 89*6 {
			t.Errorf("rates %d: %d items, want a price change every hour", i, n)
		}
	}
	if got := expandedYears(t, api); got != "1" {
		t.Fatalf("4 concurrent timelines of 2024 expanded %s years, want 1", got)
	}
	if r := e.do("GET", path, nil); r.Status != 200 || expandedYears(t, api) != "1" {
		t.Errorf("a later timeline: %d, %s years expanded, want 200 and still 1", r.Status, expandedYears(t, api))
	}
}

// Two accounts with alike tariffs (one stored expansion name) each get their own
// stored periods: the second is priced too.
func TestAlikeTariffsOfTwoAccountsArePricedForBoth(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	for _, name := range []string{"first", "second"} {
		e := &costEnv{t: t, api: api, acc: api.NewAccount(name)}
		e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
		e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3})})
		r := e.do("GET", "/tariffs/rates/"+e.loc+"?start_time=2024-01-10T00:00:00Z&end_time=2024-01-11T00:00:00Z", nil)
		data, _ := r.Map(t)["data"].([]any)
		if r.Status != 200 || len(data) != 1 || data[0].(map[string]any)["tariff"].(map[string]any)["rate"] != 0.3 {
			t.Errorf("%s account's timeline: %d %s, want one item at 0.3", name, r.Status, r.Body)
		}
	}
}

// Timelines, slots and location status are heavy reads: with the process's one turn
// taken and no queue they are shed (503 too_busy); once the turn is free they are served.
func TestHeavyReadsAreShedWhenAdmissionIsFull(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) {
		c.Limits = config.Limits{Queries: 1, AccountQueries: 1, QueryQueue: 0, QueryWait: time.Second}
	}})
	e := &costEnv{t: t, api: api, acc: api.NewAccount("reads")}
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": peakSchedule()})
	window := "start_time=2024-01-10T00:00:00Z&end_time=2024-01-11T00:00:00Z"
	paths := []string{"/tariffs/rates/" + e.loc + "?" + window, "/slots/threshold/" + e.loc + "?segment=HIGH&relative=0.5&" + window,
		"/slots/time/" + e.loc + "?segment=LOW&duration=60&" + window, "/locations/" + e.loc + "/status"}
	release, err := api.App.Limits.EnterQuery(context.Background(), "acc_other")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if r := e.do("GET", p, nil); r.Status != 503 || r.Map(t)["code"] != "too_busy" || r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s with the only turn taken: %d %s, want 503 too_busy with Retry-After", p, r.Status, r.Body)
		}
	}
	release()
	for _, p := range paths {
		if r := e.do("GET", p, nil); r.Status != 200 {
			t.Errorf("GET %s after the turn was freed: %d %s", p, r.Status, r.Body)
		}
	}
}
