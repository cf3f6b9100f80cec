package query

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// MaxRateWindow is the longest window of a timeline or slot request.
const MaxRateWindow = 90 * 24 * time.Hour

// RatePeriod is a stretch of constant price: the sum of the direction's components.
type RatePeriod struct {
	Start, End   int64
	Rate         float64
	Confidence   float64
	Commodity    float64
	NonCommodity float64
}

// segment is one component's price over [s, e).
type segment struct {
	comp       int
	s, e       int64
	rate, conf float64
}

// timelineRequest resolves the location and plan of a rate-based request.
type timelineRequest struct {
	scope      kwhouse.Scope
	locationID string
	direction  string
	start, end time.Time
}

func (r *timelineRequest) defaults() {
	if r.direction == "" {
		r.direction = "IMPORT"
	}
}

// validate reports every problem of the request (kwhouse.Problems).
func (r *timelineRequest) validate() error {
	var p kwhouse.Problems
	if r.direction != "IMPORT" && r.direction != "EXPORT" {
		p.Add("invalid_value", "direction", "direction must be IMPORT or EXPORT")
	}
	checkWindow(&p, r.start, r.end, MaxRateWindow, "90 days")
	return p.Err()
}

// timeline returns the location and its constant-price periods over the window, split
// wherever any component's price changes.
func (c *Pricer) timeline(ctx context.Context, r timelineRequest) (catalog.Location, []RatePeriod, error) {
	r.defaults()
	if err := r.validate(); err != nil {
		return catalog.Location{}, nil, err
	}
	if !kwhouse.ValidID(kwhouse.PrefixLocation, r.locationID) {
		return catalog.Location{}, nil, kwhouse.NotFound("id", r.locationID)
	}
	loc, err := c.catalog.LocationInfo(ctx, r.scope, r.locationID)
	if err != nil {
		return loc, nil, err
	}
	sp, err := c.spanSegments(ctx, r, loc.Timezone)
	if err != nil {
		return loc, nil, err
	}
	return loc, sweep(sp.segs, sp.comps, r.start.Unix(), r.end.Unix()), nil
}

// loadSpan reads the segments of [s0, s1) from ClickHouse. Sources and periods are cut at
// points fixed by the contracts, so a window's timeline is the same cut from any span
// that holds it.
func (c *Pricer) loadSpan(ctx context.Context, r timelineRequest, zone string, s0, s1 int64) (priceSpan, error) {
	a := costArgs{scope: r.scope, location: r.locationID, direction: r.direction, w0: s0, w1: s1, zone: zone}
	var err error
	if a.plan, err = c.tariffs.PlanPrices(ctx, r.scope, r.locationID, s0, s1); err != nil {
		return priceSpan{}, err
	}
	comps := componentsOf(r.direction, a.plan)
	if len(comps) == 0 {
		return priceSpan{}, &kwhouse.Error{Kind: kwhouse.KindUnprocessable, Code: "no_tariff_connected", Param: "direction",
			Message: fmt.Sprintf("location %s has no %s tariff", r.locationID, r.direction)}
	}
	segs, err := c.planSegments(ctx, r.scope, r.locationID, a.plan, comps, s0, s1, maxTimelineSegments)
	if err != nil {
		return priceSpan{}, err
	}
	return priceSpan{comps: comps, segs: segs}, nil
}

// componentsOf lists the direction's components that have tariffs.
func componentsOf(direction string, p tariffs.Plan) []int {
	want := []int{tariffs.CompImportCommodity, tariffs.CompImportNonCommodity}
	if direction == "EXPORT" {
		want = []int{tariffs.CompExportCommodity}
	}
	return withTariffs(p, want)
}

// withTariffs keeps the components of want that have tariffs in the plan.
func withTariffs(p tariffs.Plan, want []int) []int {
	var out []int
	for _, c := range want {
		if len(p.Sources[c]) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// sweep combines the components' segments into periods over [w0, w1). Time a component
// with tariffs does not cover (a missing market price) adds 0 with confidence 0.
func sweep(segs []segment, comps []int, w0, w1 int64) []RatePeriod {
	cuts := map[int64]bool{w0: true, w1: true}
	for _, s := range segs {
		cuts[s.s], cuts[s.e] = true, true
	}
	points := make([]int64, 0, len(cuts))
	for p := range cuts {
		if p >= w0 && p <= w1 {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	byComp := map[int][]segment{}
	for _, s := range segs {
		byComp[s.comp] = append(byComp[s.comp], s)
	}
	idx := map[int]int{}
	var out []RatePeriod
	for i := 0; i+1 < len(points); i++ {
		a, b := points[i], points[i+1]
		p := RatePeriod{Start: a, End: b, Confidence: 1}
		for _, comp := range comps {
			list := byComp[comp]
			for idx[comp] < len(list) && list[idx[comp]].e <= a {
				idx[comp]++
			}
			rate, conf := 0.0, 0.0
			if k := idx[comp]; k < len(list) && list[k].s <= a {
				rate, conf = list[k].rate, list[k].conf
			}
			p.Rate += rate
			p.Confidence = math.Min(p.Confidence, conf)
			if comp == tariffs.CompImportNonCommodity {
				p.NonCommodity = rate
			} else {
				p.Commodity = rate
			}
		}
		if n := len(out); n > 0 && out[n-1].End == a && sameParts(out[n-1], p) {
			out[n-1].End = b
			continue
		}
		out = append(out, p)
	}
	return out
}

func sameParts(a, b RatePeriod) bool {
	return a.Commodity == b.Commodity && a.NonCommodity == b.NonCommodity && a.Confidence == b.Confidence
}

// maxTimelineSegments bounds the segments one timeline reads: 90 days of 5-minute market
// prices on two components are 51,840.
const maxTimelineSegments = 1 << 20
