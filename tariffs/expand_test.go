package tariffs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func mustRules(t *testing.T, js string) []rule {
	t.Helper()
	var s Schedule
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	rules, err := s.compile(false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkComplete(rules); err != nil {
		t.Fatal(err)
	}
	return rules
}

func utc(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func show(ps []Period) string {
	var b []string
	for _, p := range ps {
		b = append(b, fmt.Sprintf("%s–%s %v", time.Unix(p.Start, 0).UTC().Format("01-02T15:04"), time.Unix(p.End, 0).UTC().Format("01-02T15:04"), p.Bands.Fixed))
	}
	return strings.Join(b, "\n")
}

// Peak 16:00–19:00 at 0.40, otherwise 0.20, every day.
const peakTOU = `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[
	{"valid_from":"00:00:00","valid_to":"16:00:00","rate":[{"fixed":0.20}]},
	{"valid_from":"16:00:00","valid_to":"19:00:00","rate":[{"fixed":0.40}]},
	{"valid_from":"19:00:00","valid_to":"00:00:00","rate":[{"fixed":0.20}]}]}]}]`

func TestExpandSpringForwardLondon(t *testing.T) {
	// 2024-03-31: clocks go 01:00 GMT → 02:00 BST. The local day is 23 h long:
	// 00:00 local = 00:00Z, 16:00 BST = 15:00Z, 19:00 BST = 18:00Z, next midnight = 23:00Z.
	loc, _ := time.LoadLocation("Europe/London")
	ps := expandAll(mustRules(t, peakTOU), loc, TierMonth, utc("2024-03-31T00:00:00Z"), utc("2024-03-31T23:00:00Z"))
	want := "03-31T00:00–03-31T15:00 [0.2]\n03-31T15:00–03-31T18:00 [0.4]\n03-31T18:00–03-31T23:00 [0.2]"
	if got := show(ps); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestExpandSkippedHourHasNoLength(t *testing.T) {
	// A rate only for 01:00–02:00 local: that hour does not exist on 2024-03-31 in London.
	rules := mustRules(t, `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[
		{"valid_from":"00:00:00","valid_to":"01:00:00","rate":[{"fixed":0.1}]},
		{"valid_from":"01:00:00","valid_to":"02:00:00","rate":[{"fixed":9}]},
		{"valid_from":"02:00:00","valid_to":"00:00:00","rate":[{"fixed":0.1}]}]}]}]`)
	loc, _ := time.LoadLocation("Europe/London")
	for _, p := range expandAll(rules, loc, TierMonth, utc("2024-03-31T00:00:00Z"), utc("2024-03-31T23:00:00Z")) {
		if p.Bands.Fixed[0] == 9 {
			t.Fatalf("the skipped hour got a period: %s", show([]Period{p}))
		}
	}
	// On the fall-back day (2024-10-27) 01:00–02:00 local happens twice: 00:00Z–01:00Z (BST)
	// and 01:00Z–02:00Z (GMT), so the 9.0 rate covers two real hours.
	var hours int64
	for _, p := range expandAll(rules, loc, TierMonth, utc("2024-10-26T23:00:00Z"), utc("2024-10-28T00:00:00Z")) {
		if p.Bands.Fixed[0] == 9 {
			hours += (p.End - p.Start) / 3600
		}
	}
	if hours != 2 {
		t.Fatalf("repeated hour priced for %d h, want 2", hours)
	}
}

func TestExpandWrapAndSpecificity(t *testing.T) {
	// Economy 7 style: 00:30–07:30 cheap (written as a wrap from 00:30 to 07:30 is not a wrap;
	// use a wrap 22:00–06:00 for weekends), weekday day rate, a holiday date override.
	rules := mustRules(t, `[
	 {"months":["All"],"days_and_hours":[
	   {"days":["Weekday"],"hours":[{"valid_from":"00:30:00","valid_to":"07:30:00","rate":[{"fixed":0.10}]},
	                                {"valid_from":"07:30:00","valid_to":"00:30:00","rate":[{"fixed":0.30}]}]},
	   {"days":["Weekend"],"hours":[{"valid_from":"22:00:00","valid_to":"06:00:00","rate":[{"fixed":0.05}]},
	                                {"valid_from":"06:00:00","valid_to":"22:00:00","rate":[{"fixed":0.25}]}]}]},
	 {"months":["Dec"],"dates":[25],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":0.01}]}]}]}]`)
	loc := time.UTC
	// Friday 2024-12-20: 00:00–00:30 is the tail of the 07:30→00:30 wrap (0.30).
	got := show(expandAll(rules, loc, TierMonth, utc("2024-12-20T00:00:00Z"), utc("2024-12-21T00:00:00Z")))
	want := "12-20T00:00–12-20T00:30 [0.3]\n12-20T00:30–12-20T07:30 [0.1]\n12-20T07:30–12-21T00:00 [0.3]"
	if got != want {
		t.Errorf("weekday:\n%s\nwant\n%s", got, want)
	}
	// Saturday 2024-12-21: wrap 22:00–06:00 covers 00:00–06:00 and 22:00–24:00 of the same date.
	got = show(expandAll(rules, loc, TierMonth, utc("2024-12-21T00:00:00Z"), utc("2024-12-22T00:00:00Z")))
	want = "12-21T00:00–12-21T06:00 [0.05]\n12-21T06:00–12-21T22:00 [0.25]\n12-21T22:00–12-22T00:00 [0.05]"
	if got != want {
		t.Errorf("weekend:\n%s\nwant\n%s", got, want)
	}
	// Wednesday 2024-12-25: the dates entry beats every other rule.
	got = show(expandAll(rules, loc, TierMonth, utc("2024-12-25T00:00:00Z"), utc("2024-12-26T00:00:00Z")))
	if want = "12-25T00:00–12-26T00:00 [0.01]"; got != want {
		t.Errorf("holiday:\n%s\nwant\n%s", got, want)
	}
}

func TestExpandCutsAtTierPeriods(t *testing.T) {
	flat := mustRules(t, `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":0.2,"to_kwh":100},{"fixed":0.3}]}]}]}]`)
	loc, _ := time.LoadLocation("America/New_York")
	ps := expandAll(flat, loc, TierMonth, utc("2024-01-15T00:00:00Z"), utc("2024-03-15T00:00:00Z"))
	// Local month starts: 2024-02-01 00:00 EST = 05:00Z, 2024-03-01 05:00Z.
	if len(ps) != 3 || ps[1].Start != utc("2024-02-01T05:00:00Z") || ps[2].TierStart != utc("2024-03-01T05:00:00Z") || ps[0].TierStart != utc("2024-01-01T05:00:00Z") {
		t.Fatalf("month cuts:\n%s", show(ps))
	}
	if days := expandAll(flat, loc, TierDay, utc("2024-01-15T05:00:00Z"), utc("2024-01-18T05:00:00Z")); len(days) != 3 {
		t.Fatalf("day cuts: %d periods\n%s", len(days), show(days))
	}
}

func TestScheduleErrorsNameTheRuleAndPath(t *testing.T) {
	for js, want := range map[string]string{
		`[]`: "schedule",
		`[{"months":["Smarch"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1}]}]}]}]`:                                                                                              "schedule[0].months",
		`[{"months":["All"],"days_and_hours":[{"days":["Funday"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1}]}]}]}]`:                                                                                              "schedule[0].days_and_hours[0].days",
		`[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1}]}]},{"days":["Mon"],"hours":[{"valid_from":"25:00:00","valid_to":"02:00:00","rate":[{"fixed":1}]}]}]}]`: "schedule[0].days_and_hours[1].hours[0].valid_from",
		`[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1,"to_kwh":5},{"fixed":2,"to_kwh":3},{"fixed":3}]}]}]}]`:                                                   "schedule[0].days_and_hours[0].hours[0].rate[1].to_kwh",
		`[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"to_kwh":null}]}]}]}]`:                                                                                             "schedule[0].days_and_hours[0].hours[0].rate[0].fixed",
	} {
		var s Schedule
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		_, err := s.compile(false)
		if err == nil || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("%.70s: %v, want param %s", js, err, want)
		}
	}
}

func TestIncompleteScheduleIsRefused(t *testing.T) {
	for _, js := range []string{
		// 07:00–23:00 only.
		`[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"07:00:00","valid_to":"23:00:00","rate":[{"fixed":1}]}]}]}]`,
		// Weekdays only.
		`[{"months":["All"],"days_and_hours":[{"days":["Weekday"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1}]}]}]}]`,
		// January only.
		`[{"months":["Jan"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":1}]}]}]}]`,
		// from = to (not midnight) covers nothing.
		`[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[{"valid_from":"06:00:00","valid_to":"06:00:00","rate":[{"fixed":1}]}]}]}]`,
	} {
		var s Schedule
		_ = json.Unmarshal([]byte(js), &s)
		rules, err := s.compile(false)
		if err == nil {
			err = checkComplete(rules)
		}
		if err == nil || !strings.Contains(err.Error(), "no rate covers") {
			t.Errorf("%.60s…: %v, want incomplete_time_period", js, err)
		}
	}
	// Day numbers as strings or integers, "All" mixed with a name counts as All.
	mustRules(t, `[{"months":["All","Jan"],"days_and_hours":[{"days":[1,"2","3",4,"Fri","Saturday","7"],"hours":[{"valid_from":"00:00:00","valid_to":"24:00:00","rate":[{"fixed":1}]}]}]}]`)
}

// TestExpandAnyWindowMatchesTheStoredYear: cost and slot queries expand a schedule over
// their own window (tariffs.Tariff.Periods) instead of reading the stored calendar-year
// periods; both must give the same price at every instant, across DST changes too.
func TestExpandAnyWindowMatchesTheStoredYear(t *testing.T) {
	loc, _ := time.LoadLocation("America/New_York")
	rules := mustRules(t, peakTOU)
	year := expandAll(rules, loc, TierMonth, utc("2024-01-01T00:00:00Z"), utc("2025-01-01T00:00:00Z"))
	priceAt := func(ps []Period, u int64) (float64, bool) {
		for _, p := range ps {
			if p.Start <= u && u < p.End {
				return p.Bands.Fixed[0], true
			}
		}
		return 0, false
	}
	// Windows starting at odd minutes, some across the March and November changes.
	for _, w := range [][2]string{
		{"2024-03-09T13:17:00Z", "2024-03-12T05:00:00Z"},
		{"2024-11-02T23:59:00Z", "2024-11-04T16:30:00Z"},
		{"2024-06-15T20:45:00Z", "2024-07-20T00:00:00Z"},
	} {
		from, to := utc(w[0]), utc(w[1])
		ps := expandAll(rules, loc, TierMonth, from, to)
		for u := from; u < to; u += 900 {
			got, ok := priceAt(ps, u)
			want, _ := priceAt(year, u)
			if !ok || got != want {
				t.Fatalf("window %s: at %s price %v (covered %v), the stored year says %v",
					w[0], time.Unix(u, 0).UTC().Format(time.RFC3339), got, ok, want)
			}
		}
	}
}

// expandAll expands with a context that never ends.
func expandAll(rules []rule, loc *time.Location, tier string, from, to int64) []Period {
	ps, err := expand(context.Background(), rules, loc, tier, from, to)
	if err != nil {
		panic(err)
	}
	return ps
}
