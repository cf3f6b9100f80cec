package httpapi_test

import (
	"fmt"
	"testing"
	"time"
)

type slotsBody struct {
	Object   string  `json:"object"`
	Duration float64 `json:"duration"`
	Data     []struct {
		StartTime string `json:"start_time"`
		EndTime   string `json:"end_time"`
		Tariff    struct {
			Rate       float64 `json:"rate"`
			RateAvg    float64 `json:"rate_avg"`
			Confidence float64 `json:"confidence"`
		} `json:"tariff"`
	} `json:"data"`
	Request struct {
		Relative *float64 `json:"relative"`
		Absolute *float64 `json:"absolute"`
	} `json:"request"`
}

// echo renders the request's relative and absolute numbers ("-" when absent).
func (s slotsBody) echo() string {
	f := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%g", *v)
	}
	return "relative=" + f(s.Request.Relative) + " absolute=" + f(s.Request.Absolute)
}

func (e *costEnv) slots(path string) slotsBody {
	e.t.Helper()
	r := e.do("GET", path, nil)
	if r.Status != 200 {
		e.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var s slotsBody
	r.JSON(e.t, &s)
	return s
}

// describeSlots renders slots as "HH:MM-HH:MM@rate~conf" (UTC) for compact expectations.
func describeSlots(s slotsBody) string {
	out := ""
	for _, d := range s.Data {
		a, _ := time.Parse(time.RFC3339, d.StartTime)
		b, _ := time.Parse(time.RFC3339, d.EndTime)
		out += fmt.Sprintf("%s-%s@%g~%g ", a.Format("01-02T15:04"), b.Format("01-02T15:04"), d.Tariff.RateAvg, d.Tariff.Confidence)
	}
	return out + fmt.Sprintf("(%g min)", s.Duration)
}

// agileDay is a half-hourly market day on 2024-01-10 (London = UTC in January):
// 00:00–16:00 at 0.10, 16:00–19:00 at 0.40, 19:00–20:00 at 0.30, 20:00–24:00 at 0.15.
func agileDay(e *costEnv) {
	m := e.do("POST", "/markets", map[string]any{"display_name": "day-ahead", "currency_code": "GBP"}).Map(e.t)["id"].(string)
	var prices []any
	t0 := mustTime("2024-01-10T00:00:00Z")
	for i := 0; i < 48; i++ {
		p := 0.10
		switch h := i / 2; {
		case h >= 16 && h < 19:
			p = 0.40
		case h == 19:
			p = 0.30
		case h >= 20:
			p = 0.15
		}
		s := t0.Add(time.Duration(i) * 30 * time.Minute)
		prices = append(prices, map[string]any{"start_time": s.Format(rfc), "end_time": s.Add(30 * time.Minute).Format(rfc), "price": p})
	}
	if r := e.do("PUT", "/markets/"+m+"/prices", prices); r.Status != 200 {
		e.t.Fatalf("prices: %d %s", r.Status, r.Body)
	}
	e.tariff(map[string]any{"market_rates": true, "market_id": m})
}

const dayWindow = "start_time=2024-01-10T00:00:00Z&end_time=2024-01-11T00:00:00Z"

func TestSlotsThresholdOnAMarketDay(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	agileDay(e)
	// HIGH r = 0.25 needs 6 h: 0.40 gives 3 h, 0.30 makes 4 h, 0.15 makes 8 h ≥ 6 h, so the cut
	// is 0.15 and every period at or above it is kept (ties kept): 16:00–24:00, one slot,
	// time-weighted (3 × 0.40 + 1 × 0.30 + 4 × 0.15) / 8 = 2.1 / 8 = 0.2625.
	s := e.slots("/slots/threshold/" + e.loc + "?segment=HIGH&relative=0.25&" + dayWindow)
	if got, want := describeSlots(s), "01-10T16:00-01-11T00:00@0.2625~1 (480 min)"; got != want || s.Object != "slot_threshold" {
		t.Errorf("HIGH: %s, want %s", got, want)
	}
	// The echo carries the price the cut resolved to (docs/api.md, "FlatPeak wire compatibility").
	if got, want := s.echo(), "relative=0.25 absolute=0.15"; got != want {
		t.Errorf("HIGH echo: %s, want %s", got, want)
	}
	// LOW r = 0.25: 0.10 alone covers 16 h ≥ 6 h: 00:00–16:00.
	s = e.slots("/slots/threshold/" + e.loc + "?segment=LOW&relative=0.25&" + dayWindow)
	if got, want := describeSlots(s), "01-10T00:00-01-10T16:00@0.1~1 (960 min)"; got != want {
		t.Errorf("LOW: %s, want %s", got, want)
	}
	if got, want := s.echo(), "relative=0.25 absolute=0.1"; got != want {
		t.Errorf("LOW echo: %s, want %s", got, want)
	}
	// Time slots: the cheapest 90 minutes come from the start of the 0.10 stretch; the
	// dearest 240 minutes are 16:00–19:00 at 0.40 then 19:00–20:00 at 0.30: (3 × 0.4 + 0.3) / 4 = 0.375.
	s = e.slots("/slots/time/" + e.loc + "?segment=LOW&duration=90&" + dayWindow)
	if got, want := describeSlots(s), "01-10T00:00-01-10T01:30@0.1~1 (90 min)"; got != want || s.Object != "slot_time" {
		t.Errorf("time LOW: %s, want %s", got, want)
	}
	s = e.slots("/slots/time/" + e.loc + "?segment=HIGH&duration=240&" + dayWindow)
	if got, want := describeSlots(s), "01-10T16:00-01-10T20:00@0.375~1 (240 min)"; got != want {
		t.Errorf("time HIGH: %s, want %s", got, want)
	}
}

func TestSlotsTwoRateDayTopPriceCoversMoreThanR(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "07:00:00", "valid_to": "23:00:00", "rate": []any{map[string]any{"fixed": 0.30}}},
		map[string]any{"valid_from": "23:00:00", "valid_to": "07:00:00", "rate": []any{map[string]any{"fixed": 0.10}}}}}}}}})
	// 0.30 covers 16 h of 24, more than the 6 h asked: all of it is kept.
	s := e.slots("/slots/threshold/" + e.loc + "?segment=HIGH&relative=0.25&" + dayWindow)
	if got, want := describeSlots(s), "01-10T07:00-01-10T23:00@0.3~1 (960 min)"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}

func TestSlotsAcrossTheFallBackNight(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": []any{
		map[string]any{"valid_from": "00:00:00", "valid_to": "07:00:00", "rate": []any{map[string]any{"fixed": 0.10}}},
		map[string]any{"valid_from": "07:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.30}}}}}}}}})
	// Oct 27 00:00 BST = Oct 26 23:00Z; 07:00 GMT = 07:00Z: the local night lasts 8 h.
	// Window 13 h; LOW r = 0.5 needs 6.5 h: the night (8 h) is the cut.
	w := "start_time=2024-10-26T23:00:00Z&end_time=2024-10-27T12:00:00Z"
	s := e.slots("/slots/threshold/" + e.loc + "?segment=LOW&relative=0.5&" + w)
	if got, want := describeSlots(s), "10-26T23:00-10-27T07:00@0.1~1 (480 min)"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	r := e.do("GET", "/tariffs/rates/"+e.loc+"?"+w, nil)
	var rates struct {
		Object string `json:"object"`
		Data   []struct {
			ValidFrom string `json:"valid_from"`
			ValidTo   string `json:"valid_to"`
			Tariff    struct{ Rate, Confidence float64 }
		}
	}
	r.JSON(t, &rates)
	if r.Status != 200 || rates.Object != "tariff_rate" || len(rates.Data) != 2 || rates.Data[0].ValidTo != "2024-10-27T07:00:00Z" || rates.Data[1].Tariff.Rate != 0.3 {
		t.Errorf("rates: %d %s", r.Status, r.Body)
	}
}

func TestSlotsContractSwitchAndConfidencePastTheEnd(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2024-01-10T12:00:00Z", "schedule": flat(map[string]any{"fixed": 0.20})})
	e.tariff(map[string]any{"contract_start_date": "2024-01-10T12:00:00Z", "contract_end_date": "2024-02-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.40})})
	// The switch at noon: 0.40 covers the 12 h after it, more than the 6 h asked.
	s := e.slots("/slots/threshold/" + e.loc + "?segment=HIGH&relative=0.25&" + dayWindow)
	if got, want := describeSlots(s), "01-10T12:00-01-11T00:00@0.4~1 (720 min)"; got != want {
		t.Errorf("switch: %s, want %s", got, want)
	}
	// Feb 15 is 14 days after the last contract ended: its price, confidence 0.8.
	s = e.slots("/slots/threshold/" + e.loc + "?segment=HIGH&relative=1&start_time=2024-02-15T00:00:00Z&end_time=2024-02-15T06:00:00Z")
	if got, want := describeSlots(s), "02-15T00:00-02-15T06:00@0.4~0.8 (360 min)"; got != want {
		t.Errorf("past the end: %s, want %s", got, want)
	}
}

func TestSlotsAbsoluteThresholdWithNegativePrices(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	m := e.do("POST", "/markets", map[string]any{"display_name": "m", "currency_code": "GBP"}).Map(t)["id"].(string)
	e.do("PUT", "/markets/"+m+"/prices", []any{
		map[string]any{"start_time": "2024-01-10T00:00:00Z", "end_time": "2024-01-10T00:30:00Z", "price": -0.05},
		map[string]any{"start_time": "2024-01-10T00:30:00Z", "end_time": "2024-01-10T01:00:00Z", "price": -0.02},
		map[string]any{"start_time": "2024-01-10T01:00:00Z", "end_time": "2024-01-10T01:30:00Z", "price": 0.05},
		map[string]any{"start_time": "2024-01-10T01:30:00Z", "end_time": "2024-01-10T02:00:00Z", "price": 0.10},
	})
	e.tariff(map[string]any{"market_rates": true, "market_id": m})
	w := "start_time=2024-01-10T00:00:00Z&end_time=2024-01-10T02:00:00Z"
	// LOW at or below 0: 00:00–01:00, (−0.05 − 0.02) / 2 = −0.035.
	if got, want := describeSlots(e.slots("/slots/threshold/"+e.loc+"?segment=LOW&absolute=0&relative=0.9&"+w)), "01-10T00:00-01-10T01:00@-0.035~1 (60 min)"; got != want {
		t.Errorf("LOW absolute: %s, want %s", got, want)
	}
	// HIGH at or above 0.06: only 01:30–02:00.
	s := e.slots("/slots/threshold/" + e.loc + "?segment=HIGH&absolute=0.06&" + w)
	if got, want := describeSlots(s), "01-10T01:30-01-10T02:00@0.1~1 (30 min)"; got != want {
		t.Errorf("HIGH absolute: %s, want %s", got, want)
	}
	// absolute sent: relative is the share of the window kept, 30 of 120 minutes (docs/api.md).
	if got, want := s.echo(), "relative=0.25 absolute=0.06"; got != want {
		t.Errorf("HIGH absolute echo: %s, want %s", got, want)
	}
	// Nothing at or above 1: relative 0.
	if got, want := e.slots("/slots/threshold/"+e.loc+"?segment=HIGH&absolute=1&"+w).echo(), "relative=0 absolute=1"; got != want {
		t.Errorf("HIGH absolute=1 echo: %s, want %s", got, want)
	}
}

func TestRatesAddNonCommodityAndSlotErrors(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	r := e.do("GET", "/slots/threshold/"+e.loc+"?segment=HIGH&relative=0.5&"+dayWindow, nil)
	if r.Status != 422 || r.Map(t)["code"] != "no_tariff_connected" {
		t.Errorf("no tariff: %d %s", r.Status, r.Body)
	}
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.20})})
	e.tariff(map[string]any{"type": "NON_COMMODITY", "schedule": flat(map[string]any{"fixed": 0.05})})
	rr := e.do("GET", "/tariffs/rates/"+e.loc+"?include_tariff=true&"+dayWindow, nil).Map(t)
	d := rr["data"].([]any)
	tar := d[0].(map[string]any)["tariff"].(map[string]any)
	comps := tar["components"].(map[string]any)
	if len(d) != 1 || !near(tar["rate"].(float64), 0.25) || !near(comps["non_commodity"].(float64), 0.05) {
		t.Errorf("import timeline: %v", d)
	}
	for q, param := range map[string]string{
		"?relative=0.5&" + dayWindow:                "segment",
		"?segment=MIDDLE&relative=0.5&" + dayWindow: "segment",
		"?segment=HIGH&" + dayWindow:                "relative",
		"?segment=HIGH&relative=0&" + dayWindow:     "relative",
		"?segment=HIGH&relative=1.5&" + dayWindow:   "relative",
		"?segment=HIGH&relative=0.5&start_time=2024-01-10T00:00:00Z&end_time=2024-06-10T00:00:00Z": "end_time",
		"?segment=HIGH&relative=0.5&start_time=2024-01-10T00:00:00Z&end_time=2024-01-10T00:00:00Z": "end_time",
		"?segment=HIGH&relative=0.5&start_time=2024-01-10T00:00:00Z":                               "end_time",
	} {
		r := e.do("GET", "/slots/threshold/"+e.loc+q, nil)
		if m := r.Map(t); r.Status != 400 || m["param"] != param {
			t.Errorf("%s: %d %v, want 400 param %s", q, r.Status, m["param"], param)
		}
	}
	if r := e.do("GET", "/slots/time/"+e.loc+"?segment=LOW&duration=2000&"+dayWindow, nil); r.Status != 400 {
		t.Errorf("duration longer than the window: %d", r.Status)
	}
}
