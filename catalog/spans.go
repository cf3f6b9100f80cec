package catalog

import (
	"fmt"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
)

// Span is one [Start, End) interval of a series sent in a request (market prices, carbon
// intensities).
type Span struct{ Start, End time.Time }

// CheckSpans refuses spans that are empty, reversed, longer than maxLen (0: any length),
// outside 1971–2105, not whole seconds, or overlapping another of the request; what names
// the series ("prices") in messages and in the overlap code (overlapping_prices). Params
// name the index: "[3].start_time".
func CheckSpans(spans []Span, maxLen time.Duration, what string) error {
	order := make([]int, len(spans))
	for i, s := range spans {
		param := fmt.Sprintf("[%d]", i)
		switch {
		case !s.End.After(s.Start):
			return kwhouse.Invalid("invalid_interval", param+".end_time", "end_time must be after start_time")
		case maxLen > 0 && s.End.Sub(s.Start) > maxLen:
			return kwhouse.Invalid("invalid_interval", param+".end_time", "an interval may span at most %d days", maxLen/(24*time.Hour))
		case s.Start.Year() < 1971 || s.End.Year() > 2105:
			return kwhouse.Invalid("invalid_interval", param+".start_time", "%s must lie between 1971 and 2105", what)
		case s.Start.Nanosecond() != 0 || s.End.Nanosecond() != 0:
			return kwhouse.Invalid("invalid_interval", param+".start_time", "times are whole seconds")
		}
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return spans[order[a]].Start.Before(spans[order[b]].Start) })
	for k := 1; k < len(order); k++ {
		if spans[order[k]].Start.Before(spans[order[k-1]].End) {
			return kwhouse.Invalid("overlapping_"+what, fmt.Sprintf("[%d].start_time", order[k]), "overlaps the interval at [%d]", order[k-1])
		}
	}
	return nil
}
