package query

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
)

// Timeline returns the location and its constant-price periods of direction over
// [start, end): the timeline GET /tariffs/rates answers, for planners that price time.
func (c *Pricer) Timeline(ctx context.Context, scope kwhouse.Scope, locationID, direction string, start, end time.Time) (catalog.Location, []RatePeriod, error) {
	return c.timeline(ctx, timelineRequest{scope: scope, locationID: locationID, direction: direction, start: start, end: end})
}

// CarbonIntervals returns the grid intensities the location is weighed by over [from, to).
func (c *Pricer) CarbonIntervals(ctx context.Context, scope kwhouse.Scope, loc catalog.Location, from, to int64) ([]carbon.Interval, error) {
	return c.seriesIntervals(ctx, scope, loc, from, to)
}

// DeviceLocations lists the locations of a device's records of direction that start in
// [start, end) (at most 2).
func (c *Pricer) DeviceLocations(ctx context.Context, scope kwhouse.Scope, deviceID, direction string, start, end time.Time) ([]string, error) {
	return c.deviceLocations(ctx, scope, CostRequest{ObjectID: deviceID, Direction: direction, Start: start, End: end})
}
