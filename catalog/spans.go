package catalog

import (
	"fmt"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/strictjson"
)

// Span is one [Start, End) interval of a series sent in a request (market prices, carbon
// intensities).
type Span struct{ Start, End time.Time }

// Series describes a series of intervals sent in one request, for CheckSeries.
type Series struct {
	What    string        // the series' name in messages and codes: "prices" → overlapping_prices
	Max     int           // the most intervals a request may carry
	MaxSpan time.Duration // the longest interval (0: any length)
	// Item adds the problems of item i's value to p (params start with prefix, "[3]") and
	// returns its span.
	Item func(i int, prefix string, p *kwhouse.Problems) Span
}

// TooMany is the 413 of a request with more than max items of a series (too_many_<what>).
func TooMany(what string, max int) error {
	return &kwhouse.Error{Kind: kwhouse.KindTooLarge, Code: "too_many_" + what,
		Message: fmt.Sprintf("at most %d %s per request", max, what)}
}

// SeriesBound is what a series body may hold while it is read: the API stops reading at
// item max+1 with TooMany, before CheckSeries sees the items.
func SeriesBound(what string, max int) strictjson.Bound {
	return strictjson.Bound{Max: max, TooMany: func() error { return TooMany(what, max) }}
}

// CheckSeries reports every problem of a series of n intervals (kwhouse.Problems): none or
// more than s.Max (too_many_<what>, 413), each item's value, and spans that are empty,
// reversed, longer than s.MaxSpan, outside 1971–2105, not whole seconds, or overlapping
// another of the request. Params name the index: "[3].start_time".
func CheckSeries(n int, s Series) error {
	switch {
	case n == 0:
		return kwhouse.Invalid("parameter_missing", "", "send at least one of the %s", s.What)
	case n > s.Max:
		return TooMany(s.What, s.Max)
	}
	var p kwhouse.Problems
	spans := make([]Span, n)
	order := make([]int, 0, n)
	for i := range spans {
		prefix := fmt.Sprintf("[%d]", i)
		spans[i] = s.Item(i, prefix, &p)
		if checkSpan(&p, spans[i], prefix, s) {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return spans[order[a]].Start.Before(spans[order[b]].Start) })
	for k := 1; k < len(order); k++ {
		if spans[order[k]].Start.Before(spans[order[k-1]].End) {
			p.Add("overlapping_"+s.What, fmt.Sprintf("[%d].start_time", order[k]), "overlaps the interval at [%d]", order[k-1])
		}
	}
	return p.Err()
}

// checkSpan adds the problem of one span, if any, and reports whether it has none.
func checkSpan(p *kwhouse.Problems, sp Span, prefix string, s Series) bool {
	switch {
	case !sp.End.After(sp.Start):
		p.Add("invalid_interval", prefix+".end_time", "end_time must be after start_time")
	case s.MaxSpan > 0 && sp.End.Sub(sp.Start) > s.MaxSpan:
		p.Add("invalid_interval", prefix+".end_time", "an interval may span at most %d days", s.MaxSpan/(24*time.Hour))
	case sp.Start.Year() < 1971 || sp.End.Year() > 2105:
		p.Add("invalid_interval", prefix+".start_time", "%s must lie between 1971 and 2105", s.What)
	case sp.Start.Nanosecond() != 0 || sp.End.Nanosecond() != 0:
		p.Add("invalid_interval", prefix+".start_time", "times are whole seconds")
	default:
		return true
	}
	return false
}
