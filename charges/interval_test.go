package charges

import (
	"math/rand"
	"testing"
	"time"
)

// intervalEnergyOfTimes is IntervalEnergy written on time.Time values with a zone lookup
// per piece: the rule as docs/costs.md states it, which the arithmetic on Unix
// nanoseconds must equal to the bit.
func intervalEnergyOfTimes(readings []Reading, zone *time.Location, step time.Duration, lo, hi time.Time) map[int64]float64 {
	out := map[int64]float64{}
	for _, r := range readings {
		if !r.End.After(r.Start) || !r.End.After(lo) || !r.Start.Before(hi) {
			continue
		}
		span := r.End.Sub(r.Start).Seconds()
		for s := r.Start; s.Before(r.End); {
			_, off := s.In(zone).Zone()
			wall, n := s.Unix()+int64(off), int64(step/time.Second)
			is := time.Unix(s.Unix()-((wall%n)+n)%n, 0)
			e := minTime(r.End, is.Add(step))
			if !is.Before(lo) && is.Before(hi) {
				out[is.Unix()] += r.Wh * e.Sub(s).Seconds() / span
			}
			s = e
		}
	}
	return out
}

// IntervalEnergy equals the rule on time values bit for bit: random readings (whole
// seconds and not, from a minute to three days, some straddling each 2024 clock change)
// in zones with hour, half-hour and 45-minute offsets, a half-hour clock change (Lord
// Howe) and none (UTC), in 15-, 30- and 60-minute intervals, bounds inside a second too.
func TestIntervalEnergyEqualsTheRuleOnTimes(t *testing.T) {
	rng := rand.New(rand.NewSource(30))
	zones := []string{"UTC", "Europe/London", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
		"Pacific/Chatham", "America/St_Johns"}
	y0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range zones {
		z := zone(t, name)
		for _, step := range []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour} {
			var rs []Reading
			for i := 0; i < 3000; i++ {
				s := y0.Add(time.Duration(rng.Int63n(int64(366 * 24 * time.Hour))))
				if i%3 == 0 {
					s = s.Truncate(time.Second)
				}
				d := time.Duration(rng.Int63n(int64(72*time.Hour))) + time.Minute
				if i%5 == 0 {
					d = 30 * time.Minute
				}
				rs = append(rs, Reading{Start: s, End: s.Add(d), Wh: rng.Float64() * 5000})
			}
			for _, m := range []int{3, 4, 10, 11} { // the months of 2024's clock changes, either side
				lo := time.Date(2024, time.Month(m), 1, 0, 0, 0, 0, z).Add(time.Duration(rng.Int63n(int64(time.Second))))
				hi := lo.AddDate(0, 1, 0).Add(-time.Duration(rng.Int63n(int64(time.Second))))
				got, want := IntervalEnergy(rs, z, step, lo, hi), intervalEnergyOfTimes(rs, z, step, lo, hi)
				if len(got) != len(want) {
					t.Fatalf("%s %v month %d: %d intervals, want %d", name, step, m, len(got), len(want))
				}
				for k, w := range want {
					if g, ok := got[k]; !ok || g != w {
						t.Fatalf("%s %v month %d: interval %v = %v, want %v", name, step, m, time.Unix(k, 0).UTC(), g, w)
					}
				}
			}
		}
	}
}

// A month measured from its own readings of a year's, sorted (MonthReadings), has the
// peaks it has measured from the whole year: readings starting from a day before it to its
// end count, a reading ending inside it that starts earlier does not.
func TestMonthReadingsAreTheOnesThatCount(t *testing.T) {
	lon := zone(t, "Europe/London")
	tr := &Tariff{Zone: lon, From: time.Date(2023, 1, 1, 0, 0, 0, 0, lon), To: time.Date(2026, 1, 1, 0, 0, 0, 0, lon), Demand: []Demand{
		{Covers: always, RatePerKW: 1, Interval: 15 * time.Minute}, {Covers: always, RatePerKW: 1, Interval: time.Hour}}}
	rng := rand.New(rand.NewSource(44))
	var year []Reading
	for s := time.Date(2023, 12, 30, 0, 0, 0, 0, time.UTC); s.Year() < 2025; s = s.Add(30 * time.Minute) {
		year = append(year, Reading{s, s.Add(30 * time.Minute), rng.Float64() * 2000})
		if rng.Intn(500) == 0 { // now and then a reading of two or three days
			year = append(year, Reading{s, s.Add(time.Duration(48+rng.Intn(24)) * time.Hour), rng.Float64() * 90000})
		}
	}
	for m := 1; m <= 12; m++ {
		st := time.Date(2024, time.Month(m), 1, 0, 0, 0, 0, lon)
		b := Bucket{Start: st, End: st.AddDate(0, 1, 0)}
		got, want := MonthPeaks(tr, b, MonthReadings(year, b)), MonthPeaks(tr, b, year)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("month %d entry %d: %v kW from its readings, %v from the year's", m, i, got[i], want[i])
			}
		}
	}
}
