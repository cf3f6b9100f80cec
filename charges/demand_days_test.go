package charges

import (
	"testing"
	"time"
)

// A month's peak is the highest of its days' peaks, and the days from one on are measured
// alike from the readings that reach them only. October 2024 in London (a 25-hour day on
// the 27th, quarter hours and hours), half-hourly readings rising by the hour of the day and
// a three-day reading from the 24th: the days from the 26th measured from the readings
// starting from the 23rd (a day before the three-day reading's start) equal those measured
// from the whole month, and their highest is the month's: 3.5 kW, the 2.3 kW of 23:00 on a
// day of the three-day reading's 1.2 kW.
func TestDayPeaksPartitionTheMonth(t *testing.T) {
	lon := zone(t, "Europe/London")
	oct := Bucket{time.Date(2024, 10, 1, 0, 0, 0, 0, lon), time.Date(2024, 11, 1, 0, 0, 0, 0, lon)}
	tr := &Tariff{Zone: lon, From: oct.Start.AddDate(-1, 0, 0), To: oct.End.AddDate(1, 0, 0), Demand: []Demand{
		{Covers: always, RatePerKW: 1, Interval: 15 * time.Minute}, {Covers: always, RatePerKW: 1, Interval: time.Hour}}}
	var all []Reading
	for s := oct.Start.Add(-DemandLookback); s.Before(oct.End); s = s.Add(30 * time.Minute) {
		all = append(all, Reading{s, s.Add(30 * time.Minute), float64(s.In(lon).Hour()) * 50}) // up to 2.3 kW
	}
	long := time.Date(2024, 10, 24, 0, 0, 0, 0, lon)
	all = append(all, Reading{long, long.Add(72 * time.Hour), 72 * 1200}) // 1.2 kW for three days
	days := MonthDays(oct, lon)
	if len(days) != 32 || days[27].Sub(days[26]) != 25*time.Hour {
		t.Fatalf("October's days: %d bounds, the 27th %v long", len(days), days[27].Sub(days[26]))
	}
	whole := DayPeaks(tr, oct, all, 0)
	month := MonthPeaks(tr, oct, all)
	for i := range month {
		top := 0.0
		for _, d := range whole {
			top = max(top, d[i])
		}
		near(t, "the month's peak against its days'", month[i], top)
	}
	near(t, "the month's quarter-hour peak", month[0], 2.3+1.2)
	var late []Reading
	for _, r := range all {
		if !r.Start.Before(long.AddDate(0, 0, -1)) {
			late = append(late, r)
		}
	}
	from := DayPeaks(tr, oct, late, 25)
	if len(from) != 6 {
		t.Fatalf("%d days from the 26th, want 6", len(from))
	}
	for d := range from {
		for i := range from[d] {
			near(t, days[25+d].Format("Jan 2"), from[d][i], whole[25+d][i])
		}
	}
	near(t, "the 26th (the three-day reading's last day)", from[0][1], 2.3+1.2)
	near(t, "the 27th", from[1][1], 2.3)
}
