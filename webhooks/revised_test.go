package webhooks_test

import (
	"encoding/json"
	"testing"
	"time"
)

// Late readings for a closed local day emit one cost.revised per (object, direction, day)
// with the day's energy and money before and after; a re-sent identical reading, a new
// day and a day not yet closed emit none.
func TestLateReadingsForAClosedDayEmitCostRevised(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, always(200))
	d := h.dispatcher()
	h.endpoint(rcv.url(), "cost.revised")
	loc, day := closedDay(t, h)
	// read stores a half-hour reading of wh at each of at (one request).
	read := func(wh float64, at ...time.Time) {
		t.Helper()
		var recs []any
		for _, s := range at {
			recs = append(recs, map[string]any{"location_id": loc, "units": "WH", "value": wh,
				"start_time": s.UTC().Format(time.RFC3339), "end_time": s.Add(30 * time.Minute).UTC().Format(time.RFC3339)})
		}
		r := h.do("PUT", "/meters/interval", recs)
		if r.Status != 200 || r.Map(t)["records_accepted"] != float64(len(at)) {
			t.Fatalf("reading: %d %s", r.Status, r.Body)
		}
	}
	revised := func() []map[string]any {
		var out []map[string]any
		for _, e := range h.do("GET", "/events?event_type=cost.revised", nil).Map(t)["data"].([]any) {
			out = append(out, e.(map[string]any)["data"].(map[string]any))
		}
		return out
	}

	read(1000, day, day.Add(30*time.Minute))
	if got := revised(); len(got) != 0 {
		t.Fatalf("a day's first readings are new, not revised: %v", got)
	}
	read(500, day.Add(10*time.Hour)) // late: 2 kWh → 2.5 kWh at 0.20/kWh
	got := revised()
	if len(got) != 1 {
		t.Fatalf("%d cost.revised after a late reading, want 1: %v", len(got), got)
	}
	want := `{"after":{"energy":{"value":2500,"value_exact":2500},"tariff":{"confidence":1,"value":0.5}},` +
		`"before":{"energy":{"value":2000,"value_exact":2000},"tariff":{"confidence":1,"value":0.4}},` +
		`"currency_code":"GBP","date":"` + day.Format(time.DateOnly) + `","direction":"IMPORT","location_id":"` + loc + `","timezone":"Europe/London"}`
	if b, _ := json.Marshal(got[0]); string(b) != want {
		t.Errorf("cost.revised data\n%s\nwant\n%s", b, want)
	}

	read(500, day.Add(10*time.Hour)) // the same reading again
	if n := len(revised()); n != 1 {
		t.Errorf("a re-sent identical reading emitted an event (%d in all)", n)
	}
	yesterday := day.AddDate(0, 0, 2)
	read(100, yesterday)
	read(100, yesterday.Add(time.Hour))
	if n := len(revised()); n != 1 { // yesterday ended less than a day ago
		t.Errorf("a day that ended less than revision_after ago emitted cost.revised (%d in all)", n)
	}
	read(700, day.Add(10*time.Hour)) // a correction: 2.5 kWh → 2.7 kWh
	got = revised()
	if len(got) != 2 {
		t.Fatalf("%d cost.revised after a correction, want 2", len(got))
	}
	if b, a := got[0]["before"].(map[string]any), got[0]["after"].(map[string]any); b["tariff"].(map[string]any)["value"] != 0.5 ||
		a["tariff"].(map[string]any)["value"] != 0.54 || a["energy"].(map[string]any)["value_exact"] != float64(2700) {
		t.Errorf("correction: before %v after %v", b, a)
	}
	drive(t, d, func() bool { return len(rcv.requests()) == 2 })
}

// An account with no endpoint taking cost.revised pays nothing for late readings: no day
// is priced before and after, and no event is stored.
func TestLateReadingsWithoutSubscriberEmitNothing(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, always(200))
	h.endpoint(rcv.url(), "location.create") // an endpoint, but not of cost.revised
	loc, day := closedDay(t, h)
	for _, wh := range []float64{1000, 1500} { // the second re-sends the reading: a revision
		r := h.do("PUT", "/meters/interval", []any{map[string]any{"location_id": loc, "units": "WH", "value": wh,
			"start_time": day.UTC().Format(time.RFC3339), "end_time": day.Add(30 * time.Minute).UTC().Format(time.RFC3339)}})
		if r.Status != 200 {
			t.Fatalf("reading: %d %s", r.Status, r.Body)
		}
	}
	if n := len(h.do("GET", "/events?event_type=cost.revised", nil).Map(t)["data"].([]any)); n != 0 {
		t.Errorf("%d cost.revised events without an endpoint taking them, want 0", n)
	}
}

// closedDay creates a London location priced at 0.20/kWh and returns it with the start of
// the local day three days ago (closed: older than revision_after).
func closedDay(t *testing.T, h *harness) (string, time.Time) {
	t.Helper()
	loc := h.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	if r := h.do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2035-01-01T00:00:00Z",
		"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"},
			"hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.20}}}}}}}},
	}); r.Status != 200 {
		t.Fatalf("tariff: %d %s", r.Status, r.Body)
	}
	london, _ := time.LoadLocation("Europe/London")
	now := h.clock.Now().In(london)
	day := time.Date(now.Year(), now.Month(), now.Day()-3, 0, 0, 0, 0, london)
	return loc, day
}
