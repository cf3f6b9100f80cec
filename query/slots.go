package query

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// Segments of slot requests.
const (
	SegmentHigh = "HIGH"
	SegmentLow  = "LOW"
)

// SlotRequest asks for the high- or low-price time of a window.
type SlotRequest struct {
	LocationID string
	Direction  string
	Segment    string
	Start, End time.Time
	Relative   *float64 // fraction of the window, (0, 1]
	Absolute   *float64 // price threshold; overrides Relative
	Duration   *float64 // minutes, for time slots
}

// SlotValue is the price of a slot.
type SlotValue struct {
	Rate       Amount `json:"rate"`
	RateAvg    Amount `json:"rate_avg"`
	Confidence Amount `json:"confidence"`
}

// Slot is a stretch of kept time.
type Slot struct {
	StartTime catalog.Timestamp `json:"start_time"`
	EndTime   catalog.Timestamp `json:"end_time"`
	Tariff    SlotValue         `json:"tariff"`
}

// SlotRequestEcho repeats a slot request.
type SlotRequestEcho struct {
	Direction string            `json:"direction"`
	Segment   string            `json:"segment"`
	Relative  *float64          `json:"relative,omitempty"` // threshold slots echo both numbers (docs/api.md)
	Absolute  *float64          `json:"absolute,omitempty"`
	Duration  *float64          `json:"duration,omitempty"`
	StartTime catalog.Timestamp `json:"start_time"`
	EndTime   catalog.Timestamp `json:"end_time"`
}

// Slots is the slot_threshold or slot_time response.
type Slots struct {
	LocationAnswer
	Duration    int64             `json:"duration"`
	NextUpdate  catalog.Timestamp `json:"next_update"`
	Request     SlotRequestEcho   `json:"request"`
	Data        []Slot            `json:"data"`
	TimeCreated catalog.Timestamp `json:"time_created"`
	AccountID   string            `json:"account_id"`
}

// validate reports every problem of a threshold (or, threshold false, a duration) slot
// request (kwhouse.Problems); the window is the timeline's to check.
func (r *SlotRequest) validate(threshold bool) error {
	var p kwhouse.Problems
	switch {
	case r.Segment == "":
		p.Add("parameter_missing", "segment", "segment is required (HIGH or LOW)")
	case r.Segment != SegmentHigh && r.Segment != SegmentLow:
		p.Add("invalid_value", "segment", "segment must be HIGH or LOW")
	}
	if threshold {
		r.validateThreshold(&p)
	} else {
		r.validateDuration(&p)
	}
	return p.Err()
}

func (r *SlotRequest) validateThreshold(p *kwhouse.Problems) {
	switch {
	case r.Absolute == nil && r.Relative == nil:
		p.Add("parameter_missing", "relative", "give relative (0 < r ≤ 1) or absolute (a price)")
	case r.Absolute == nil && (*r.Relative <= 0 || *r.Relative > 1 || math.IsNaN(*r.Relative)):
		p.Add("invalid_value", "relative", "relative must be within (0, 1]")
	case r.Absolute != nil && (math.IsNaN(*r.Absolute) || math.IsInf(*r.Absolute, 0)):
		p.Add("invalid_value", "absolute", "absolute must be a finite price")
	}
}

func (r *SlotRequest) validateDuration(p *kwhouse.Problems) {
	switch {
	case r.Duration == nil:
		p.Add("parameter_missing", "duration", "duration (minutes) is required")
	case *r.Duration <= 0 || math.IsNaN(*r.Duration):
		p.Add("invalid_value", "duration", "duration must be a positive number of minutes")
	case !r.End.IsZero() && *r.Duration*60 > r.End.Sub(r.Start).Seconds():
		p.Add("invalid_value", "duration", "duration is longer than the window")
	}
}

func (c *Pricer) slotTimeline(ctx context.Context, scope kwhouse.Scope, req SlotRequest, threshold bool) (catalog.Location, []RatePeriod, error) {
	if err := req.validate(threshold); err != nil {
		return catalog.Location{}, nil, err
	}
	return c.timeline(ctx, timelineRequest{scope: scope, locationID: req.LocationID, direction: req.Direction, start: req.Start, end: req.End})
}

// Threshold answers GET /slots/threshold: the periods at or above (HIGH) or at or below
// (LOW) a price: `absolute`, or the price reached by the top (bottom) `relative` fraction of
// the window's time, ties kept.
func (c *Pricer) Threshold(ctx context.Context, scope kwhouse.Scope, req SlotRequest) (Slots, error) {
	loc, periods, err := c.slotTimeline(ctx, scope, req, true)
	if err != nil {
		return Slots{}, err
	}
	cut := 0.0
	if req.Absolute != nil {
		cut = *req.Absolute
	} else {
		cut = relativeCut(periods, req.Segment, *req.Relative*float64(req.End.Unix()-req.Start.Unix()))
	}
	var kept []RatePeriod
	var keptSecs int64
	for _, p := range periods {
		if (req.Segment == SegmentHigh && p.Rate >= cut) || (req.Segment == SegmentLow && p.Rate <= cut) {
			kept = append(kept, p)
			keptSecs += p.End - p.Start
		}
	}
	out := c.slotsResponse(scope, loc, req, "slot_threshold", kept)
	// FlatPeak requires both numbers: the one not sent is what the cut resolved to (docs/api.md).
	absolute, relative := cut, 0.0
	if window := req.End.Unix() - req.Start.Unix(); window > 0 {
		relative = float64(keptSecs) / float64(window)
	}
	if req.Absolute == nil {
		relative = *req.Relative
	}
	out.Request.Absolute, out.Request.Relative = &absolute, &relative
	return out, nil
}

// relativeCut walks distinct prices from the highest (HIGH) or lowest (LOW) until the time
// at or beyond the price reaches want seconds, and returns that price.
func relativeCut(periods []RatePeriod, segment string, want float64) float64 {
	byRate := map[float64]int64{}
	for _, p := range periods {
		byRate[p.Rate] += p.End - p.Start
	}
	rates := make([]float64, 0, len(byRate))
	for r := range byRate {
		rates = append(rates, r)
	}
	sort.Float64s(rates)
	if segment == SegmentHigh {
		for i, j := 0, len(rates)-1; i < j; i, j = i+1, j-1 {
			rates[i], rates[j] = rates[j], rates[i]
		}
	}
	var acc int64
	for _, r := range rates {
		acc += byRate[r]
		if float64(acc) >= want {
			return r
		}
	}
	if len(rates) == 0 {
		return 0
	}
	return rates[len(rates)-1]
}

// TimeSlots answers GET /slots/time: the cheapest (LOW) or dearest (HIGH) time adding up to
// duration minutes. Periods are taken best price first, earlier first on equal prices; the
// last one needed is taken from its start.
func (c *Pricer) TimeSlots(ctx context.Context, scope kwhouse.Scope, req SlotRequest) (Slots, error) {
	loc, periods, err := c.slotTimeline(ctx, scope, req, false)
	if err != nil {
		return Slots{}, err
	}
	order := append([]RatePeriod(nil), periods...)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Rate != order[j].Rate {
			return (order[i].Rate < order[j].Rate) == (req.Segment == SegmentLow)
		}
		return order[i].Start < order[j].Start
	})
	left := int64(math.Round(*req.Duration * 60))
	var kept []RatePeriod
	for _, p := range order {
		if left <= 0 {
			break
		}
		if n := p.End - p.Start; n > left {
			p.End = p.Start + left
		}
		left -= p.End - p.Start
		kept = append(kept, p)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
	return c.slotsResponse(scope, loc, req, "slot_time", kept), nil
}

// slotsResponse merges adjacent kept periods into slots with time-weighted mean rates.
func (c *Pricer) slotsResponse(scope kwhouse.Scope, loc catalog.Location, req SlotRequest, object string, kept []RatePeriod) Slots {
	prefix := kwhouse.PrefixSlot
	now := catalog.Timestamp(c.now())
	out := Slots{LocationAnswer: newLocationAnswer(prefix, object, scope, loc, directionOr(req.Direction)),
		NextUpdate: catalog.Timestamp(req.End), TimeCreated: now, AccountID: scope.AccountID, Data: []Slot{},
		Request: SlotRequestEcho{Direction: directionOr(req.Direction), Segment: req.Segment, Relative: req.Relative,
			Absolute: req.Absolute, Duration: req.Duration, StartTime: catalog.Timestamp(req.Start), EndTime: catalog.Timestamp(req.End)}}
	type acc struct {
		start, end  int64
		money, conf float64
	}
	var slots []acc
	for _, p := range kept {
		n := len(slots)
		if n > 0 && slots[n-1].end == p.Start {
			slots[n-1].end = p.End
			slots[n-1].money += p.Rate * float64(p.End-p.Start)
			slots[n-1].conf = math.Min(slots[n-1].conf, p.Confidence)
			continue
		}
		slots = append(slots, acc{start: p.Start, end: p.End, money: p.Rate * float64(p.End-p.Start), conf: p.Confidence})
	}
	var secs int64
	for _, s := range slots {
		avg := Amount(s.money / float64(s.end-s.start))
		out.Data = append(out.Data, Slot{StartTime: unixTS(s.start), EndTime: unixTS(s.end),
			Tariff: SlotValue{Rate: avg, RateAvg: avg, Confidence: Amount(s.conf)}})
		secs += s.end - s.start
	}
	out.Duration = secs / 60
	return out
}
