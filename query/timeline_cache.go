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
// after it, so every "next 24 hours" request of a day reuses one span; a longer window's
// span is the least multiple of spanDays days from that day that holds it, so every
// "next 7 days" request of a day reuses one span too.
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

// spanOf returns the span that holds [w0, w1): from the start of w0's UTC day, spanDays
// days or the least multiple of them that reaches w1.
func spanOf(w0, w1 int64) (int64, int64) {
	const length = spanDays * 86400
	s0 := w0 - ((w0%86400)+86400)%86400
	n := max(1, (w1-s0+length-1)/length)
	return s0, s0 + n*length
}

// spanSegments returns the segments of r's location and direction over the span holding
// the window, from memory when the scope's pricing epoch has not moved.
func (c *Pricer) spanSegments(ctx context.Context, r timelineRequest, zone string) (priceSpan, error) {
	s0, s1 := spanOf(r.start.Unix(), r.end.Unix())
	key := fmt.Sprintf("%s|%s|%d|%d", r.locationID, r.direction, s0, s1)
	return c.timelines.Get(ctx, r.scope, key, func() (priceSpan, error) { return c.loadSpan(ctx, r, zone, s0, s1) })
}
