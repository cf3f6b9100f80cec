package query

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
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

// devicesAtStmt says per device whether any of its records in the window is at the
// location, and one location it is at. device_id is not in the sorting key after
// location_id: this reads the account's records of the window.
var devicesAtStmt = chstore.Register("query.devices_at", `SELECT device_id, max(location_id = ?) AS here, any(location_id) AS elsewhere
	FROM meter_records
	WHERE account_id = ? AND live_mode = ? AND device_id IN ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)
	GROUP BY device_id`)

// DevicesElsewhere returns the devices of ids whose records starting in [start, end) are
// all at locations other than locationID, each with one of those locations. Devices
// without records there are not returned.
func (c *Pricer) DevicesElsewhere(ctx context.Context, scope kwhouse.Scope, locationID string, ids []string, start, end time.Time) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := c.db.Query(ctx, devicesAtStmt, locationID, scope.AccountID, scope.LiveByte(), chstore.Set(ids),
		uint32(start.Unix()), uint32(end.Unix()))
	if err != nil {
		return nil, fmt.Errorf("locations of devices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, other string
		var here uint8
		if err := rows.Scan(&id, &here, &other); err != nil {
			return nil, fmt.Errorf("scan device location: %w", err)
		}
		if here == 0 {
			out[id] = other
		}
	}
	return out, rows.Err()
}
