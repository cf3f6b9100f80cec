package charges

import (
	"math"
	"time"
)

// demandCharge is t's demand charge for a month of peaks (MonthPeaks): per entry, its
// peak, at least the entry's minimum, times its rate. A missing peak counts as 0 kW.
func demandCharge(t *Tariff, peaks []float64) float64 {
	total := 0.0
	for i, d := range t.Demand {
		peak := 0.0
		if i < len(peaks) {
			peak = peaks[i]
		}
		total += math.Max(peak, d.MinimumKW) * d.RatePerKW
	}
	return total
}

// DemandLookback is how long before a month the readings that count towards its demand
// (with their part inside it) may start.
const DemandLookback = 24 * time.Hour

// MonthPeaks are t's demand peaks in local month m, one per demand entry: the highest mean
// power (kW) over the entry's matching intervals that start in m and in t's contract,
// from the readings starting in [m's start − DemandLookback, m's end): the highest of its
// days' peaks (DayPeaks).
func MonthPeaks(t *Tariff, m Bucket, readings []Reading) []float64 {
	return HighestOfDays(len(t.Demand), DayPeaks(t, m, readings, 0))
}

// HighestOfDays is a month's peaks from its days' (DayPeaks; entries each): the highest
// of each entry.
func HighestOfDays(entries int, days ...[][]float64) []float64 {
	out := make([]float64, entries)
	for _, ds := range days {
		for _, day := range ds {
			for i, p := range day {
				out[i] = max(out[i], p)
			}
		}
	}
	return out
}

// MonthDays are the starts of the local days of month m in zone, and m's end: day i is
// [days[i], days[i+1]).
func MonthDays(m Bucket, zone *time.Location) []time.Time {
	local := m.Start.In(zone)
	days := []time.Time{m.Start}
	for i := 1; ; i++ {
		d := time.Date(local.Year(), local.Month(), local.Day()+i, 0, 0, 0, 0, zone)
		if !d.Before(m.End) {
			return append(days, m.End)
		}
		days = append(days, d)
	}
}

// DayPeaks are t's demand peaks of local month m by local day (MonthDays), from day first
// to the month's last, one per demand entry each: the highest mean power (kW) over the
// entry's matching intervals that start in the day and in t's contract, from the readings
// starting in [m's start − DemandLookback, m's end). The days partition the month's
// intervals by their start, so the month's peak is the highest of its days' peaks, and a
// day's peak depends only on the readings that overlap it: those whose day is unchanged
// need not be measured again.
func DayPeaks(t *Tariff, m Bucket, readings []Reading, first int) [][]float64 {
	days := MonthDays(m, t.Zone)
	out := make([][]float64, max(0, len(days)-1-first))
	for i := range out {
		out[i] = make([]float64, len(t.Demand))
	}
	if len(out) == 0 {
		return out
	}
	lo, hi := maxTime(days[first], maxTime(m.Start, t.From)), minTime(m.End, t.To)
	// Compared as nanoseconds: a year's readings are scanned once for each of its months.
	from, to := m.Start.Add(-DemandLookback).UnixNano(), m.End.UnixNano()
	in := make([]Reading, 0, len(readings)/8) // a year's readings give each month about a twelfth
	for _, r := range readings {
		if s := r.Start.UnixNano(); s >= from && s < to {
			in = append(in, r)
		}
	}
	from0 := days[first].Unix()
	ends := make([]int64, len(days)-1-first) // the ends of the days from first, Unix seconds
	for i := range ends {
		ends[i] = days[first+i+1].Unix()
	}
	byStep := map[time.Duration]map[int64]float64{}
	for i, d := range t.Demand {
		wh, ok := byStep[d.Interval]
		if !ok {
			wh = IntervalEnergy(in, t.Zone, d.Interval, lo, hi)
			byStep[d.Interval] = wh
		}
		hours := d.Interval.Hours()
		for start, e := range wh {
			day := dayOf(ends, from0, start)
			if kw := e / 1000 / hours; kw > out[day][i] && d.Covers(time.Unix(start, 0).In(t.Zone)) {
				out[day][i] = kw
			}
		}
	}
	return out
}

// IntervalEnergy sums the readings into intervals of length step aligned to the local
// clock of zone, keyed by the interval's start (Unix seconds), for the intervals starting
// in [lo, hi). A reading that straddles intervals is split in proportion to time.
func IntervalEnergy(readings []Reading, zone *time.Location, step time.Duration, lo, hi time.Time) map[int64]float64 {
	// Sized once: a month of half-hourly readings fills about 3,000 quarter hours, and
	// growing the map to them took a third of measuring a year's peaks.
	out := make(map[int64]float64, min(2*len(readings), int(hi.Sub(lo)/step)+1))
	for _, r := range readings {
		if !r.End.After(r.Start) || !r.End.After(lo) || !r.Start.Before(hi) {
			continue
		}
		span := r.End.Sub(r.Start).Seconds()
		for s := r.Start; s.Before(r.End); {
			is := intervalStart(s, zone, step)
			e := minTime(r.End, is.Add(step))
			if !is.Before(lo) && is.Before(hi) {
				out[is.Unix()] += r.Wh * e.Sub(s).Seconds() / span
			}
			s = e
		}
	}
	return out
}

// intervalStart is the start of the local-clock interval of length step containing t:
// the last instant at or before t whose local wall clock is a multiple of step.
func intervalStart(t time.Time, zone *time.Location, step time.Duration) time.Time {
	_, off := t.In(zone).Zone()
	wall := t.Unix() + int64(off)
	n := int64(step / time.Second)
	back := ((wall % n) + n) % n
	return time.Unix(t.Unix()-back, 0)
}

// dayOf is the index of the day holding the instant start among consecutive local days
// from the one starting at from, ends being their ends (Unix seconds): a day lasts 24 hours
// but on a clock change, so the guess is off by a day at most.
func dayOf(ends []int64, from, start int64) int {
	day := max(0, min(int((start-from)/86400), len(ends)-1))
	for day > 0 && ends[day-1] > start {
		day--
	}
	for ends[day] <= start {
		day++
	}
	return day
}
