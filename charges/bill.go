package charges

import (
	"sort"
	"time"
)

// bill sums charges into the top level and the buckets; tax is taken per tariff on what
// that tariff charges (taxed is linear, so adding it piece by piece equals taxing the sums).
type bill struct {
	buckets []Bucket
	top     Totals
	each    []Totals
	pct     map[string]float64
}

func newBill(req Request) *bill {
	b := &bill{buckets: req.Buckets, each: make([]Totals, len(req.Buckets)), pct: map[string]float64{}}
	for _, t := range req.Tariffs {
		b.pct[t.ID] = t.TaxPercent
	}
	return b
}

// add puts x, charged by tariff id at instant at, into the top level (when top) and into
// the bucket containing at (when inBucket).
func (b *bill) add(at time.Time, id string, x Totals, top, inBucket bool) {
	x.Tax = (x.Energy + x.Standing + x.Demand) * b.pct[id] / 100
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

// standingDays lists the starts of t's local days that lie in its contract and in
// [from, to), when it has a standing charge.
func standingDays(t *Tariff, from, to time.Time) []time.Time {
	if t.Standing == 0 {
		return nil
	}
	lo, hi := maxTime(from, t.From), minTime(to, t.To)
	var out []time.Time
	l := lo.In(t.Zone)
	d := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, t.Zone)
	for ; d.Before(hi); d = nextDay(d) {
		if !d.Before(lo) {
			out = append(out, d)
		}
	}
	return out
}

// nextDay is the start of the local day after the one starting at d (23, 24 or 25 hours on).
func nextDay(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, d.Location())
}

// monthsOf lists t's local months that overlap both its contract and [from, to).
func monthsOf(t *Tariff, from, to time.Time) []Bucket {
	lo, hi := maxTime(from, t.From), minTime(to, t.To)
	var out []Bucket
	l := lo.In(t.Zone)
	for m := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, t.Zone); m.Before(hi); {
		next := time.Date(m.Year(), m.Month()+1, 1, 0, 0, 0, 0, t.Zone)
		out = append(out, Bucket{Start: m, End: next})
		m = next
	}
	return out
}
