package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// An unaggregated cost answer lists at most costs.max_raw_items records (10,000 by
// default): a window holding more is a 400 naming the limit and what to do instead; the
// same window aggregated, and a window of exactly the limit, are answered.
func TestRawCostOverTheItemCapIsRefused(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25})})
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for from := 0; from < 10_001; from += 5_000 {
		var recs []map[string]any
		for i := from; i < min(from+5_000, 10_001); i++ {
			s := t0.Add(time.Duration(i) * time.Minute)
			recs = append(recs, map[string]any{"start_time": s.Format(rfc), "end_time": s.Add(time.Minute).Format(rfc), "value": 10})
		}
		e.reads(recs...)
	}
	week := map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-08T00:00:00Z"}
	r := e.do("POST", "/costs/interval/"+e.loc, week)
	m := r.Map(t)
	if r.Status != 400 || m["code"] != "too_many_items" || m["param"] != "end_time" ||
		!strings.Contains(m["message"].(string), "10000") || !strings.Contains(m["message"].(string), "aggregation") {
		t.Fatalf("10,001 records raw: %d %.300s, want 400 too_many_items naming 10000 and aggregation", r.Status, r.Body)
	}
	if r := e.do("POST", "/costs/interval/"+e.loc+"?aggregation=DAY", week); r.Status != 200 || len(r.Map(t)["data"].([]any)) != 7 {
		t.Errorf("the week by DAY: %d %.300s, want 7 days", r.Status, r.Body)
	}
	limit := map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": t0.Add(10_000 * time.Minute).Format(rfc)}
	if r := e.do("POST", "/costs/interval/"+e.loc, limit); r.Status != 200 || len(r.Map(t)["data"].([]any)) != 10_000 {
		t.Errorf("exactly 10,000 records raw: %d %.300s, want all of them", r.Status, r.Body)
	}
}

// The bound is config (costs.max_raw_items) and holds for a session's answer too.
func TestSessionOverTheItemCapIsRefused(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) { c.Costs.MaxRawItems = 5 }})
	e := &costEnv{t: t, api: api, acc: api.NewAccount("sessions")}
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25})})
	t0 := time.Date(2024, 1, 10, 18, 0, 0, 0, time.UTC)
	var recs []map[string]any
	for i := 0; i < 6; i++ {
		s := t0.Add(time.Duration(i) * 10 * time.Minute)
		recs = append(recs, map[string]any{"session_reference_id": "long", "start_time": s.Format(rfc),
			"end_time": s.Add(10 * time.Minute).Format(rfc), "value": 100})
	}
	e.reads(recs...)
	r := e.do("POST", "/costs/session/long", nil)
	if m := r.Map(t); r.Status != 400 || m["code"] != "too_many_items" || m["param"] != "id" || !strings.Contains(m["message"].(string), "5 records") {
		t.Fatalf("a session of 6 records over a bound of 5: %d %s, want 400 too_many_items naming 5", r.Status, r.Body)
	}
	window := map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-11T00:00:00Z"}
	if r := e.do("POST", "/costs/interval/"+e.loc, window); r.Status != 400 || !strings.Contains(r.Map(t)["message"].(string), "5 records") {
		t.Errorf("6 records raw over a bound of 5: %d %s", r.Status, r.Body)
	}
}
