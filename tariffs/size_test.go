package tariffs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
)

// denseHours is an hours list of n equal periods covering the day, alternating prices.
func denseHours(n int) []HourRange {
	out := make([]HourRange, n)
	step := 86400 / n
	for i := range out {
		price := float64(i%2 + 1)
		from, to := clock(i*step), clock((i+1)*step)
		if i == n-1 {
			to = "24:00:00"
		}
		out[i] = HourRange{ValidFrom: from, ValidTo: to, Rate: []Band{{Fixed: &price}}}
	}
	return out
}

func clock(sec int) string { return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec%3600/60, sec%60) }

func TestScheduleSizeLimitsNameTheList(t *testing.T) {
	dense := Schedule{{Months: []string{"All"}, DaysAndHours: []DaysAndHour{
		{Days: []DayName{"Weekday"}, Hours: denseHours(48)},
		{Days: []DayName{"Weekend"}, Hours: denseHours(8640)}}}}
	e := kwhouse.AsError(dense.checkSize())
	if e == nil || e.Kind != kwhouse.KindInvalid || e.Param != "schedule[0].days_and_hours[1].hours" || e.Code != "too_many_periods" {
		t.Fatalf("8,640 periods in one list: %v, want too_many_periods on schedule[0].days_and_hours[1].hours", e)
	}
	// 96 a list is allowed; 22 lists of 96 exceed the schedule's total.
	var many Schedule
	for m := 1; m <= 22; m++ {
		many = append(many, ScheduleEntry{Months: []string{time.Month(m%12 + 1).String()}, DaysAndHours: []DaysAndHour{
			{Days: []DayName{"All"}, Hours: denseHours(MaxHoursPerEntry)}}})
	}
	if err := many[:12].checkSize(); err != nil {
		t.Fatalf("12 lists of %d: %v", MaxHoursPerEntry, err)
	}
	if e := kwhouse.AsError(many.checkSize()); e == nil || e.Param != "schedule" || e.Code != "too_many_periods" {
		t.Fatalf("22 lists of %d: %v, want too_many_periods on schedule", MaxHoursPerEntry, e)
	}
}

// The sweep of resolveDay gives, at every second that starts a piece, the rule a
// direct search over every rule picks (the definition of specificity).
func TestResolveDayMatchesDirectSearch(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		var rules []rule
		for i := 0; i < 1+rnd.IntN(30); i++ {
			var r rule
			r.order, r.entryRank, r.dayRank = i, rnd.IntN(3), rnd.IntN(3)
			for m := 1; m <= 12; m++ {
				r.months[m] = rnd.IntN(2) == 0
			}
			for d := 1; d <= 7; d++ {
				r.days[d] = rnd.IntN(3) > 0
			}
			r.from, r.to = 900*rnd.IntN(96), 900*(1+rnd.IntN(96))
			rules = append(rules, r)
		}
		month, weekday := 1+rnd.IntN(12), 1+rnd.IntN(7)
		pieces := resolveDay(rules, month, 10, weekday)
		for sec := 0; sec < 86400; sec += 300 {
			var want *rule
			for i := range rules {
				if r := &rules[i]; r.coversAt(month, 10, weekday, sec) && (want == nil || r.specificity(want) < 0) {
					want = r
				}
			}
			if got := pieceAt(pieces, sec); got != want {
				t.Fatalf("round %d, second %d: resolveDay picked %+v, direct search %+v", round, sec, got, want)
			}
		}
	}
}

// coversAt reports whether r applies at second sec of a day (the definition resolveDay
// must agree with).
func (r *rule) coversAt(month, date, weekday, sec int) bool {
	if !r.applies(month, date, weekday) {
		return false
	}
	switch {
	case r.from < r.to:
		return sec >= r.from && sec < r.to
	case r.from > r.to:
		return sec < r.to || sec >= r.from
	}
	return false
}

func pieceAt(pieces []dayPiece, sec int) *rule {
	for _, p := range pieces {
		if p.from <= sec && sec < p.to {
			return p.rule
		}
	}
	panic(fmt.Sprintf("no piece at second %d", sec))
}

// A schedule at the size limit expands a year: 96 periods every day.
func TestLargestScheduleExpandsAYear(t *testing.T) {
	s := Schedule{{Months: []string{"All"}, DaysAndHours: []DaysAndHour{{Days: []DayName{"All"}, Hours: denseHours(MaxHoursPerEntry)}}}}
	rules, err := s.compile(false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkComplete(rules); err != nil {
		t.Fatal(err)
	}
	ps := expandAll(rules, time.UTC, TierMonth, utc("2024-01-01T00:00:00Z"), utc("2025-01-01T00:00:00Z"))
	if len(ps) != 366*MaxHoursPerEntry {
		t.Fatalf("%d periods, want %d", len(ps), 366*MaxHoursPerEntry)
	}
}

// A context that has ended stops an expansion with its error.
func TestExpandStopsWhenTheContextEnds(t *testing.T) {
	rules := mustRules(t, peakTOU)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ps, err := expand(ctx, rules, time.UTC, TierMonth, utc("2024-01-01T00:00:00Z"), utc("2025-01-01T00:00:00Z"))
	if !errors.Is(err, context.Canceled) || ps != nil {
		t.Fatalf("expansion after cancel: %d periods, err %v; want none and context.Canceled", len(ps), err)
	}
}
