package query

import (
	"context"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
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

// timelineCache keeps recent spans; an entry is found only under the epoch it was
// computed in, so a price write makes every older entry unreachable.
type timelineCache struct{ spans *lru.Cache[string, priceSpan] }

func newTimelineCache() timelineCache {
	c, err := lru.New[string, priceSpan](timelineCacheSize)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return timelineCache{spans: c}
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

func spanKey(epoch string, scope kwhouse.Scope, location, direction string, s0, s1 int64) string {
	return fmt.Sprintf("%s|%s|%t|%s|%s|%d|%d", epoch, scope.AccountID, scope.LiveMode, location, direction, s0, s1)
}

// spanSegments returns the segments of r's location and direction over the span holding
// the window, from memory when the scope's pricing epoch has not moved.
func (c *Coster) spanSegments(ctx context.Context, r timelineRequest, zone string) (priceSpan, error) {
	s0, s1 := spanOf(r.start.Unix(), r.end.Unix())
	epoch := c.tariffs.PricingEpoch(ctx, r.scope)
	key := spanKey(epoch, r.scope, r.locationID, r.direction, s0, s1)
	if epoch != "" {
		if sp, ok := c.timelines.spans.Get(key); ok {
			return sp, nil
		}
	}
	sp, err := c.loadSpan(ctx, r, zone, s0, s1)
	if err == nil && epoch != "" {
		c.timelines.spans.Add(key, sp)
	}
	return sp, err
}
