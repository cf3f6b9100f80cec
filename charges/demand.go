package charges

import (
	"math"
	"slices"
	"sort"
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

// MonthReadings are the readings of sorted (by start) that count towards month m's
// demand: those starting in [m's start − DemandLookback, m's end), as a part of sorted. A
// caller measuring a year's months gives each its own, not the year's twelve times.
func MonthReadings(sorted []Reading, m Bucket) []Reading {
	from := m.Start.Add(-DemandLookback)
	lo := sort.Search(len(sorted), func(i int) bool { return !sorted[i].Start.Before(from) })
	hi := lo + sort.Search(len(sorted)-lo, func(i int) bool { return !sorted[lo+i].Start.Before(m.End) })
	return sorted[lo:hi:hi]
}

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
	outside := func(r Reading) bool { s := r.Start.UnixNano(); return s < from || s >= to }
	in := readings // a month's own (MonthReadings) as they are, others filtered
	if slices.ContainsFunc(readings, outside) {
		in = make([]Reading, 0, len(readings)/8) // a year's readings give each month about a twelfth
		for _, r := range readings {
			if !outside(r) {
				in = append(in, r)
			}
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
// Instants are Unix nanoseconds (readings and bounds lie within 1678–2262) and the zone's
// offset is looked up once per offset period (zoneOffsets): measuring a London year by
// month (BenchmarkMonthPeaksYear, load 4–6) took 7.8–11.7 ms with time.Time values, a
// lookup per piece and each month's readings filtered from the year's, 3.3–5.3 ms so.
func IntervalEnergy(readings []Reading, zone *time.Location, step time.Duration, lo, hi time.Time) map[int64]float64 {
	// Sized once: a month of half-hourly readings fills about 3,000 quarter hours, and
	// growing the map to them took a third of measuring a year's peaks.
	out := make(map[int64]float64, min(2*len(readings), int(hi.Sub(lo)/step)+1))
	lo0, hi0, n := lo.UnixNano(), hi.UnixNano(), int64(step/time.Second)
	offsets := zoneOffsets{zone: zone}
	for _, r := range readings {
		rs, re := r.Start.UnixNano(), r.End.UnixNano()
		if re <= rs || re <= lo0 || rs >= hi0 {
			continue
		}
		span := time.Duration(re - rs).Seconds()
		for s := rs; s < re; {
			is := intervalStart(s, &offsets, n)
			e := min(re, (is+n)*int64(time.Second))
			if at := is * int64(time.Second); at >= lo0 && at < hi0 {
				out[is] += r.Wh * time.Duration(e-s).Seconds() / span
			}
			s = e
		}
	}
	return out
}

// intervalStart is the start (Unix seconds) of the local-clock interval of n seconds
// containing the instant t (Unix nanoseconds): the last whole second at or before t whose
// local wall clock is a multiple of n.
func intervalStart(t int64, offsets *zoneOffsets, n int64) int64 {
	sec := t / int64(time.Second)
	if t%int64(time.Second) < 0 {
		sec-- // the second holding t, as time.Time.Unix floors
	}
	wall := sec + offsets.at(sec)
	return sec - ((wall%n)+n)%n
}

// zoneOffsets is a zone's UTC offset at instants, looked up once per period of one offset.
type zoneOffsets struct {
	zone     *time.Location
	from, to int64 // the period [from, to) of off, Unix seconds
	off      int64
	known    bool
}

// at is the zone's offset (seconds east of UTC) at Unix second sec.
func (z *zoneOffsets) at(sec int64) int64 {
	if z.known && sec >= z.from && sec < z.to {
		return z.off
	}
	t := time.Unix(sec, 0).In(z.zone)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	z.from, z.to, z.off, z.known = math.MinInt64, math.MaxInt64, int64(off), true
	if !start.IsZero() {
		z.from = start.Unix()
	}
	if !end.IsZero() {
		z.to = end.Unix()
	}
	return z.off
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
