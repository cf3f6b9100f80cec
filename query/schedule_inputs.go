package query

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

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

// devicesHereStmt lists the devices with a record at the location in the window: a read
// of the location's own rows (location_id follows the account in the sorting key).
var devicesHereStmt = chstore.Register("query.devices_here", `SELECT DISTINCT device_id FROM meter_records
	WHERE account_id = ? AND live_mode = ? AND location_id = ? AND device_id IN ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)`)

// devicesAtStmt says per device whether any of its records in the window is at the
// location, and one location it is at. device_id is not in the sorting key after
// location_id: this reads the account's records of the window (0.6–1.2 s for an account of
// 1,000 half-hourly locations), so it is asked only about devices devicesHereStmt did not
// find at the location and that have sent readings at all.
var devicesAtStmt = chstore.Register("query.devices_at", `SELECT device_id, max(location_id = ?) AS here, any(location_id) AS elsewhere
	FROM meter_records
	WHERE account_id = ? AND live_mode = ? AND device_id IN ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)
	GROUP BY device_id`)

// DevicesElsewhere returns the devices of ids whose records starting in [start, end) are
// all at locations other than locationID, each with one of those locations. Devices
// without records there are not returned. Devices with a record at the location, and
// devices that never sent a reading, are answered without reading other locations' records.
func (c *Pricer) DevicesElsewhere(ctx context.Context, scope kwhouse.Scope, locationID string, ids []string, start, end time.Time) (map[string]string, error) {
	out := map[string]string{}
	// Both at once: one round trip's wait, not two.
	var notHere, seen []string
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		notHere, err = c.devicesNotHere(gctx, scope, locationID, ids, start, end)
		return err
	})
	g.Go(func() (err error) {
		seen, err = c.catalog.SeenDevices(gctx, scope, ids) // no readings: no records anywhere
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var rest []string
	for _, id := range notHere {
		if slices.Contains(seen, id) {
			rest = append(rest, id)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	rows, err := c.db.Query(ctx, devicesAtStmt, locationID, scope.AccountID, scope.LiveByte(), chstore.Set(rest),
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

// devicesNotHere returns the devices of ids without a record at the location starting in
// [start, end).
func (c *Pricer) devicesNotHere(ctx context.Context, scope kwhouse.Scope, locationID string, ids []string, start, end time.Time) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := c.db.Query(ctx, devicesHereStmt, scope.AccountID, scope.LiveByte(), locationID, chstore.Set(ids),
		uint32(start.Unix()), uint32(end.Unix()))
	if err != nil {
		return nil, fmt.Errorf("devices at location: %w", err)
	}
	defer rows.Close()
	here := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("scan device at location: %w", err)
		}
		here[id] = true
	}
	var out []string
	for _, id := range ids {
		if !here[id] {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}
