package query

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse/tariffs"
)

// timelineCacheSize bounds the reusable spans kept in memory (a 3-day span of a
// half-hourly market tariff is about 150 segments, some 6 KB).
const timelineCacheSize = 8192

// spanDays is the length of a reusable span: the UTC day a window starts on and the two
// after it, so every "next 24 hours" request of a day reuses one span.
const spanDays = 3

// priceSpan is the price segments of one location, direction and span, computed under a
// pricing epoch.
type priceSpan struct {
	comps []int
	segs  []segment
}

func newTimelineCache(t *tariffs.Service) *tariffs.EpochMemo[priceSpan] {
	return tariffs.NewEpochMemo[priceSpan](t, timelineCacheSize)
}

// spanOf returns the span that holds [w0, w1): spanDays UTC days from w0's day, or the
// window itself when it is longer.
func spanOf(w0, w1 int64) (int64, int64) {
	s0 := w0 - ((w0%86400)+86400)%86400
	s1 := s0 + spanDays*86400
	if w1 > s1 {
		return w0, w1
	}
	return s0, s1
}

// spanSegments returns the segments of r's location and direction over the span holding
// the window, from memory when the scope's pricing epoch has not moved.
func (c *Pricer) spanSegments(ctx context.Context, r timelineRequest, zone string) (priceSpan, error) {
	s0, s1 := spanOf(r.start.Unix(), r.end.Unix())
	key := fmt.Sprintf("%s|%s|%d|%d", r.locationID, r.direction, s0, s1)
	return c.timelines.Get(ctx, r.scope, key, func() (priceSpan, error) { return c.loadSpan(ctx, r, zone, s0, s1) })
}
