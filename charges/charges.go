// Package charges computes what a bill charges beyond energy: standing charges per local
// day, demand (capacity) charges per local month from interval mean power, and tax on
// all of it (docs/costs.md, "Bill charges"). It is pure: callers bring the tariffs, the
// readings and the energy money.
package charges

import (
	"slices"
	"time"
)

// Tariff is what one tariff element charges beyond the energy it prices.
type Tariff struct {
	ID string
	// Key names what its demand charges are measured by (the tariff, its zone, contract and
	// demand entries): peaks kept under a key hold while the month's readings do.
	Key        string
	Zone       *time.Location // local days and months, interval alignment
	From, To   time.Time      // the contract [From, To)
	Standing   float64        // major units per local day
	Demand     []Demand
	TaxPercent float64 // on everything the tariff charges
}

// Demand is one demand charge entry of a tariff.
type Demand struct {
	// Covers says whether an interval counts, by its local start.
	Covers    func(local time.Time) bool
	RatePerKW float64
	Interval  time.Duration // 15, 30 or 60 minutes, aligned to the local clock
	MinimumKW float64       // the peak charged is at least this
}

// Reading is energy used over [Start, End).
type Reading struct {
	Start, End time.Time
	Wh         float64
}

// Energy is energy money priced by a tariff (TariffID; "" where none prices it), landing
// on the bucket that contains At.
type Energy struct {
	At       time.Time
	TariffID string
	Money    float64
}

// Bucket is a local day or month of an answer: [Start, End).
type Bucket struct {
	Start, End time.Time
}

// Totals are the charges of an answer or of one of its buckets, in major units.
type Totals struct {
	Energy, Standing, Demand, Tax, Total float64
}

// Request is one location's charges over a window.
type Request struct {
	Tariffs  []Tariff
	From, To time.Time // the request window
	Buckets  []Bucket  // ascending, not overlapping
	// MonthBuckets says the buckets are months: demand charges land on them (days carry none).
	MonthBuckets bool
	Energy       []Energy
	// Readings cover whole the months whose peaks are not given (TariffMonth.Peaks nil):
	// those are measured from them.
	Readings []Reading
	// Months are DemandMonths(Tariffs, From, To, MonthBuckets) when the caller listed them
	// already (to give their peaks); nil: Compute lists them.
	Months []TariffMonth
}

// TariffMonth is a local month whose demand charge a tariff bills.
type TariffMonth struct {
	Tariff *Tariff
	Month  Bucket
	// Whole says the month lies wholly inside the window: its charge counts at the top level.
	Whole bool
	// Peaks are the month's demand peaks (MonthPeaks) when the caller has them (kept, or
	// measured); nil: Compute measures them from Request.Readings.
	Peaks []float64
}

// DemandMonths lists the months whose demand charges an answer over [from, to) bills,
// per tariff with demand charges: the local months overlapping both its contract and the
// window when the buckets are months (monthBuckets), else only those wholly inside the
// window (the others' demand is counted nowhere).
func DemandMonths(ts []Tariff, from, to time.Time, monthBuckets bool) []TariffMonth {
	var out []TariffMonth
	for i := range ts {
		t := &ts[i]
		if len(t.Demand) == 0 {
			continue
		}
		lo, hi := maxTime(from, t.From), minTime(to, t.To)
		out = slices.Grow(out, monthsBetween(lo, hi, t.Zone))
		for m := range monthsOf(t.Zone, lo, hi) {
			whole := !m.Start.Before(from) && !m.End.After(to)
			if whole || monthBuckets {
				out = append(out, TariffMonth{Tariff: t, Month: m, Whole: whole})
			}
		}
	}
	return out
}

// Compute returns the charges of the whole window and of each bucket (in req.Buckets'
// order). Standing charges count the local days whose start lies in the contract and the
// window; demand charges count at the top level for the local months wholly inside the
// window and land on the month bucket containing their month's start (or the contract's
// start, when later); tax comes last, on each tariff's energy, standing and demand.
func Compute(req Request) (Totals, []Totals) {
	b := newBill(req)
	for _, e := range req.Energy {
		b.add(e.At, e.TariffID, Totals{Energy: e.Money}, true, true)
	}
	for i := range req.Tariffs {
		b.addStanding(&req.Tariffs[i], req.From, req.To)
	}
	months := req.Months
	if months == nil {
		months = DemandMonths(req.Tariffs, req.From, req.To, req.MonthBuckets)
	}
	for _, m := range months {
		peaks := m.Peaks
		if peaks == nil {
			peaks = MonthPeaks(m.Tariff, m.Month, req.Readings)
		}
		charge := demandCharge(m.Tariff, peaks)
		b.add(maxTime(m.Month.Start, m.Tariff.From), m.Tariff.ID, Totals{Demand: charge}, m.Whole, req.MonthBuckets)
	}
	return b.finish()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
