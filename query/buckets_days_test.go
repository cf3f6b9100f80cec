package query

import (
	"reflect"
	"testing"
	"time"
)

func TestDayRunKeepsTheWindowsPartOfItsFirstAndLastDays(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	sydney, _ := time.LoadLocation("Australia/Sydney")
	utc := func(d, h int) time.Time { return time.Date(2024, 3, d, h, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		zone       *time.Location
		w0, w1     time.Time
		first, end string
		spans      map[string][2]uint32
	}{
		// London in March is on UTC: whole days only.
		{london, utc(1, 0), utc(4, 0), "2024-03-01T00:00:00Z", "2024-03-04T00:00:00Z", map[string][2]uint32{}},
		// Sydney is UTC+11: the window starts at 11:00 on the 1st and ends at 11:00 on the 4th.
		{sydney, utc(1, 0), utc(4, 0), "2024-02-29T13:00:00Z", "2024-03-04T13:00:00Z", map[string][2]uint32{
			"2024-03-01": {uint32(utc(1, 0).Unix()), uint32(utc(1, 13).Unix())},
			"2024-03-04": {uint32(utc(3, 13).Unix()), uint32(utc(4, 0).Unix())}}},
		// Inside one local day.
		{london, utc(1, 6), utc(1, 9), "2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z", map[string][2]uint32{
			"2024-03-01": {uint32(utc(1, 6).Unix()), uint32(utc(1, 9).Unix())}}},
	} {
		r := dayRunOf(c.w0, c.w1, c.zone)
		if got := r.first.UTC().Format(time.RFC3339); got != c.first {
			t.Errorf("%s: first %s, want %s", c.zone, got, c.first)
		}
		if got := r.end.UTC().Format(time.RFC3339); got != c.end {
			t.Errorf("%s: end %s, want %s", c.zone, got, c.end)
		}
		if !reflect.DeepEqual(r.spans, c.spans) {
			t.Errorf("%s: spans %v, want %v", c.zone, r.spans, c.spans)
		}
	}
}

func TestRollUpAddsDaysIntoMonthsAndTheWindow(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	day := func(m time.Month, d int) uint32 { return uint32(time.Date(2024, m, d, 0, 0, 0, 0, london).Unix()) }
	days := []fleetSum{
		{Loc: "a", Key: day(3, 30), Energy: 1, Money: 0.5, MoneyCom: 0.5, Confidence: 1, NImport: 2},
		{Loc: "a", Key: day(3, 31), Energy: 2, Money: 1, MoneyCom: 0.75, MoneyNon: 0.25, Confidence: 0.6, NImport: 1},
		{Loc: "a", Key: day(4, 1), Energy: 4, Money: 2, MoneyCom: 2, Confidence: 0.8, NImport: 1},
		{Loc: "b", Key: day(3, 30), Energy: 8, Money: 4, MoneyCom: 4, Confidence: 1, NExport: 1},
	}
	months := rollUp(AggregationMonth, days, london)
	want := map[[2]any]fleetSum{
		{"a", day(3, 1)}: {Energy: 3, Money: 1.5, MoneyCom: 1.25, MoneyNon: 0.25, Confidence: 0.6, NImport: 3},
		{"a", day(4, 1)}: {Energy: 4, Money: 2, MoneyCom: 2, Confidence: 0.8, NImport: 1},
		{"b", day(3, 1)}: {Energy: 8, Money: 4, MoneyCom: 4, Confidence: 1, NExport: 1},
	}
	if len(months) != len(want) {
		t.Fatalf("%d months, want %d: %+v", len(months), len(want), months)
	}
	for _, m := range months {
		w := want[[2]any{m.Loc, m.Key}]
		if m.Energy != w.Energy || m.Money != w.Money || m.MoneyCom != w.MoneyCom || m.MoneyNon != w.MoneyNon ||
			m.Confidence != w.Confidence || m.NImport != w.NImport || m.NExport != w.NExport {
			t.Errorf("%s %d: %+v, want %+v", m.Loc, m.Key, m, w)
		}
	}
	if whole := rollUp(FleetAggregationNone, days, london); len(whole) != 2 || whole[0].Key != 0 || whole[0].Energy != 7 || whole[0].Confidence != 0.6 {
		t.Errorf("window: %+v", whole)
	}
}
