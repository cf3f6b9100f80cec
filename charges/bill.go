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
	i := sort.Search(len(b.buckets), func(i int) bool { return b.buckets[i].End.After(at) })
	if i < len(b.buckets) && !b.buckets[i].Start.After(at) {
		b.each[i] = plus(b.each[i], x)
	}
}

// taxed is x with the tax of tariff id on it.
func (b *bill) taxed(id string, x Totals) Totals {
	x.Tax = (x.Energy + x.Standing + x.Demand) * b.pct(id) / 100
	return x
}

// addStanding puts t's standing charges over [from, to) into the top level and into the
// buckets holding their days' starts: per bucket, the count of its days times the charge.
func (b *bill) addStanding(t *Tariff, from, to time.Time) {
	if t.Standing == 0 {
		return
	}
	lo, hi := maxTime(from, t.From), minTime(to, t.To)
	b.top = plus(b.top, b.taxed(t.ID, Totals{Standing: float64(dayStartsIn(t.Zone, lo, hi)) * t.Standing}))
	for i, k := range b.buckets {
		if n := dayStartsIn(t.Zone, maxTime(lo, k.Start), minTime(hi, k.End)); n > 0 {
			b.each[i] = plus(b.each[i], b.taxed(t.ID, Totals{Standing: float64(n) * t.Standing}))
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

// dayStartsIn counts the local days of zone whose start lies in [lo, hi): the days a
// standing charge is charged for (23- and 25-hour days are one day each).
func dayStartsIn(zone *time.Location, lo, hi time.Time) int {
	if !lo.Before(hi) {
		return 0
	}
	first := dayStart(lo, zone)
	if first.Before(lo) {
		first = nextDay(first)
	}
	last := dayStart(hi.Add(-time.Nanosecond), zone) // the last day starting before hi
	if last.Before(first) {
		return 0
	}
	return int(civilDay(last)-civilDay(first)) + 1
}

// dayStart is the start of the local day of zone containing t.
func dayStart(t time.Time, zone *time.Location) time.Time {
	y, m, d := t.In(zone).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, zone)
}

// civilDay numbers the local date of a day start d (days since 1970-01-01).
func civilDay(d time.Time) int64 {
	y, m, day := d.Date()
	return time.Date(y, m, day, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// nextDay is the start of the local day after the one starting at d (23, 24 or 25 hours on).
func nextDay(d time.Time) time.Time {
	y, m, day := d.Date()
	return time.Date(y, m, day+1, 0, 0, 0, 0, d.Location())
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
