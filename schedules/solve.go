package schedules

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/plan"
	"github.com/kwhouse/kwhouse/query"
)

// mJPerKWh converts the solver's energy unit to the unit prices are per.
const mJPerKWh = 3.6e9

// prices are what the plan is priced and weighed by over [from, to).
type prices struct {
	from, to int64
	rates    map[string][]query.RatePeriod // by direction
	carbon   []carbon.Piece                // nil unless carbon is asked for
}

// plan prices the location's time, solves and builds the answer.
func (s *Service) plan(ctx context.Context, scope kwhouse.Scope, n need) (Schedule, error) {
	pr, err := s.prices(ctx, scope, n)
	if err != nil {
		return Schedule{}, err
	}
	slots := pr.slots(n.devices)
	allowed := pr.allowed(n.req.ShavingThreshold, slots)
	weight := 0.0
	if n.opt.CarbonWeight != nil {
		weight = *n.opt.CarbonWeight
	}
	p := plan.Problem{Slots: slots, MaxPower: n.maxPower}
	for _, d := range n.devices {
		p.Devices = append(p.Devices, plan.Device{Start: d.start, End: d.end, MaxPower: d.maxPower, Energy: d.energy})
	}
	p.Cost = func(d, s int) (float64, bool) {
		dir := n.devices[d].direction
		if !allowed[dir][s] {
			return 0, false
		}
		rate, _ := pr.rate(dir, slots[s].Start)
		grams, _ := pr.intensity(slots[s].Start)
		var v float64
		switch n.opt.Objective {
		case ObjectiveCarbon:
			v = grams
		case ObjectiveBlend:
			v = rate + weight*grams
		default:
			v = rate
		}
		if dir == "EXPORT" {
			return -v, true // earnings (and displaced carbon) are maximised
		}
		return v, true
	}
	sol, err := plan.Solve(p)
	if err != nil {
		return Schedule{}, err
	}
	return pr.answer(n, slots, sol), nil
}

// prices reads each used direction's timeline over its devices' span, and the carbon
// intensities when the objective or the answer needs them.
func (s *Service) prices(ctx context.Context, scope kwhouse.Scope, n need) (prices, error) {
	span := map[string][2]int64{}
	pr := prices{from: math.MaxInt64, to: math.MinInt64, rates: map[string][]query.RatePeriod{}}
	for _, d := range n.devices {
		sp, ok := span[d.direction]
		if !ok {
			sp = [2]int64{d.start, d.end}
		}
		span[d.direction] = [2]int64{min(sp[0], d.start), max(sp[1], d.end)}
		pr.from, pr.to = min(pr.from, d.start), max(pr.to, d.end)
	}
	for dir, sp := range span {
		_, periods, err := s.pricer.Timeline(ctx, scope, n.loc.ID, dir, time.Unix(sp[0], 0), time.Unix(sp[1], 0))
		if err != nil {
			return pr, err
		}
		pr.rates[dir] = periods
	}
	if n.opt.IncludeCarbon || (n.opt.Objective != "" && n.opt.Objective != ObjectiveCost) {
		ivs, err := s.pricer.CarbonIntervals(ctx, scope, n.loc, pr.from, pr.to)
		if err != nil {
			return pr, err
		}
		pr.carbon = carbon.Cut(pr.from, pr.to, ivs)
	}
	return pr, nil
}

// slots cuts [from, to) at every window bound and wherever a price, its confidence or the
// intensity changes, and nowhere else: neighbouring timeline periods of equal total price
// (a commodity change that a surcharge change offsets) are one slot of the plan.
func (pr prices) slots(devices []deviceNeed) []plan.Slot {
	bounds := map[int64]bool{pr.from: true, pr.to: true}
	for _, d := range devices {
		bounds[d.start], bounds[d.end] = true, true
	}
	cuts := maps.Clone(bounds)
	for _, periods := range pr.rates {
		for _, p := range periods {
			cuts[p.Start], cuts[p.End] = true, true
		}
	}
	for _, c := range pr.carbon {
		cuts[c.Start], cuts[c.End] = true, true
	}
	points := make([]int64, 0, len(cuts))
	for t := range cuts {
		if t >= pr.from && t <= pr.to {
			points = append(points, t)
		}
	}
	slices.Sort(points)
	out := make([]plan.Slot, 0, len(points))
	for i := 0; i+1 < len(points); i++ {
		if n := len(out); n > 0 && !bounds[points[i]] && pr.same(out[n-1].Start, points[i]) {
			out[n-1].End = points[i+1]
			continue
		}
		out = append(out, plan.Slot{Start: points[i], End: points[i+1]})
	}
	return out
}

// same reports whether every direction's price and confidence, and the intensity, are
// the same at a as at b.
func (pr prices) same(a, b int64) bool {
	for dir := range pr.rates {
		ra, ca := pr.rate(dir, a)
		rb, cb := pr.rate(dir, b)
		if ra != rb || ca != cb {
			return false
		}
	}
	ia, ka := pr.intensity(a)
	ib, kb := pr.intensity(b)
	return ia == ib && ka == kb
}

// rate is the direction's price and confidence at t (0, 0 outside its timeline).
func (pr prices) rate(dir string, t int64) (float64, float64) {
	ps := pr.rates[dir]
	i := sort.Search(len(ps), func(k int) bool { return ps[k].End > t })
	if i == len(ps) || ps[i].Start > t {
		return 0, 0
	}
	return ps[i].Rate, ps[i].Confidence
}

// intensity is the grid's grams CO2e per kWh at t and its confidence (0 where unknown).
func (pr prices) intensity(t int64) (float64, float64) {
	cs := pr.carbon
	i := sort.Search(len(cs), func(k int) bool { return cs[k].End > t })
	if i == len(cs) || cs[i].Start > t {
		return 0, 0
	}
	return cs[i].Intensity, cs[i].Confidence()
}

// allowed marks, per direction, the slots the shaving threshold leaves: an import price
// above it (an export price below it) is not used. relative places each price between
// the direction's lowest (0) and highest (1) price over its span; absolute overrides it.
func (pr prices) allowed(t *Threshold, slots []plan.Slot) map[string][]bool {
	out := map[string][]bool{}
	for dir, periods := range pr.rates {
		ok := make([]bool, len(slots))
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range periods {
			lo, hi = math.Min(lo, p.Rate), math.Max(hi, p.Rate)
		}
		for i, sl := range slots {
			rate, _ := pr.rate(dir, sl.Start)
			ok[i] = withinThreshold(t, dir, rate, lo, hi)
		}
		out[dir] = ok
	}
	return out
}

func withinThreshold(t *Threshold, dir string, rate, lo, hi float64) bool {
	switch {
	case t == nil:
		return true
	case t.Absolute != nil && dir == "EXPORT":
		return rate >= *t.Absolute
	case t.Absolute != nil:
		return rate <= *t.Absolute
	case t.Relative == nil || hi <= lo:
		return true
	case dir == "EXPORT":
		return (hi-rate)/(hi-lo) <= *t.Relative
	}
	return (rate-lo)/(hi-lo) <= *t.Relative
}
