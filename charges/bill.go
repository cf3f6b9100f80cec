package charges

import (
	"iter"
	"sort"
	"time"
)

// bill sums charges into the top level and the buckets; tax is taken per tariff on what
// that tariff charges (taxed is linear, so adding it piece by piece equals taxing the sums).
type bill struct {
	buckets []Bucket
	top     Totals
	each    []Totals
	tariffs []Tariff // their tax rates, by ID
	last    int      // the bucket add found last
}

func newBill(req Request) *bill {
	return &bill{buckets: req.Buckets, each: make([]Totals, len(req.Buckets)), tariffs: req.Tariffs}
}

// pct is the tax rate of tariff id (0 for "" or an unknown id): a location has a few
// tariffs, so a scan costs less than a map made per bill.
func (b *bill) pct(id string) float64 {
	for i := range b.tariffs {
		if b.tariffs[i].ID == id {
			return b.tariffs[i].TaxPercent
		}
	}
	return 0
}

// add puts x, charged by tariff id at instant at, into the top level (when top) and into
// the bucket containing at (when inBucket).
func (b *bill) add(at time.Time, id string, x Totals, top, inBucket bool) {
	x = b.taxed(id, x)
	if top {
		b.top = plus(b.top, x)
	}
	if !inBucket {
		return
	}
	if i := b.bucketOf(at); i >= 0 {
		b.each[i] = plus(b.each[i], x)
	}
}

// bucketOf is the index of the bucket containing at, or -1. Energy comes in time order,
// so the bucket of the last call is tried first.
func (b *bill) bucketOf(at time.Time) int {
	in := func(i int) bool { return !b.buckets[i].Start.After(at) && b.buckets[i].End.After(at) }
	if b.last < len(b.buckets) && in(b.last) {
		return b.last
	}
	i := sort.Search(len(b.buckets), func(i int) bool { return b.buckets[i].End.After(at) })
	if i < len(b.buckets) && in(i) {
		b.last = i
		return i
	}
	return -1
}

// taxed is x with the tax of tariff id on it.
func (b *bill) taxed(id string, x Totals) Totals {
	x.Tax = (x.Energy + x.Standing + x.Demand) * b.pct(id) / 100
	return x
}

// addStanding puts t's standing charges over [from, to) into the top level and into the
// buckets holding their days' starts: per bucket, the count of its days times the charge.
// Counts are differences of dayIndex, each bound's taken once.
func (b *bill) addStanding(t *Tariff, from, to time.Time) {
	lo, hi := maxTime(from, t.From), minTime(to, t.To)
	if t.Standing == 0 || !lo.Before(hi) {
		return
	}
	first, last := dayIndex(t.Zone, lo), dayIndex(t.Zone, hi)
	b.top = plus(b.top, b.taxed(t.ID, Totals{Standing: float64(last-first) * t.Standing}))
	var end time.Time // the bucket before's end, at index n
	n := first
	for i, k := range b.buckets {
		s, e := maxTime(lo, k.Start), minTime(hi, k.End)
		if !s.Before(e) {
			continue
		}
		from := first
		if !s.Equal(lo) {
			from = n
			if !s.Equal(end) {
				from = dayIndex(t.Zone, s)
			}
		}
		end, n = e, last
		if !e.Equal(hi) {
			n = dayIndex(t.Zone, e)
		}
		if n > from {
			b.each[i] = plus(b.each[i], b.taxed(t.ID, Totals{Standing: float64(n-from) * t.Standing}))
		}
	}
}

func plus(a, x Totals) Totals {
	a.Energy += x.Energy
	a.Standing += x.Standing
	a.Demand += x.Demand
	a.Tax += x.Tax
	return a
}

// finish sets every total (energy + standing + demand + tax).
func (b *bill) finish() (Totals, []Totals) {
	total := func(t Totals) Totals {
		t.Total = t.Energy + t.Standing + t.Demand + t.Tax
		return t
	}
	for i := range b.each {
		b.each[i] = total(b.each[i])
	}
	return total(b.top), b.each
}

// dayIndex numbers the first local day of zone starting at or after t (days since
// 1970-01-01 of its date): the days starting in [lo, hi) — those a standing charge is
// charged for; 23- and 25-hour days are one day each — are dayIndex(hi) − dayIndex(lo).
func dayIndex(zone *time.Location, t time.Time) int64 {
	y, m, d := t.In(zone).Date()
	n := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	if time.Date(y, m, d, 0, 0, 0, 0, zone).Before(t) {
		n++
	}
	return n
}

// monthsOf yields the local months of zone that overlap [lo, hi) (a tariff's contract and
// a window, intersected), in order.
func monthsOf(zone *time.Location, lo, hi time.Time) iter.Seq[Bucket] {
	return func(yield func(Bucket) bool) {
		y, mo, _ := lo.In(zone).Date()
		for m := time.Date(y, mo, 1, 0, 0, 0, 0, zone); m.Before(hi); {
			my, mm, _ := m.Date()
			next := time.Date(my, mm+1, 1, 0, 0, 0, 0, zone)
			if !yield(Bucket{Start: m, End: next}) {
				return
			}
			m = next
		}
	}
}

// monthsBetween is how many local months of zone monthsOf yields for [lo, hi): room to
// make for them.
func monthsBetween(lo, hi time.Time, zone *time.Location) int {
	if !lo.Before(hi) {
		return 0
	}
	y0, m0, _ := lo.In(zone).Date()
	y1, m1, _ := hi.Add(-time.Nanosecond).In(zone).Date()
	return (y1-y0)*12 + int(m1-m0) + 1
}
