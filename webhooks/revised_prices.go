package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/tariffs"
)

// The objects, directions and UTC dates with readings of some locations: the reading
// change records (a counter per object, direction and date, kept for the priced buckets).
// DISTINCT because a SummingMergeTree keeps several rows of a key until it merges them.
var readingDaysStmt = chstore.Register("webhooks.reading_days", `SELECT DISTINCT location_id, device_id, direction, toString(day)
FROM reading_changes
WHERE account_id = ? AND live_mode = ? AND location_id IN ? AND day >= toDate(?) AND day <= toDate(?)`)

// RevisingPrices emits cost.revised for a write of tariffs or market prices
// (tariffs.PriceRevisions): it finds the closed local days with readings that the change
// touches (from the reading change records), prices them before the write, and returns
// what prices them again and reports the changes once the write and its change records are
// done. Prices of days that are not closed (the usual day-ahead prices) cost no look-up.
func (r *Reviser) RevisingPrices(ctx context.Context, scope kwhouse.Scope, ch tariffs.PriceChange) (func(context.Context, bool), error) {
	none := func(context.Context, bool) {}
	now := r.now()
	edge := now.Add(-r.after) // closed days end at or before this
	if len(ch.Locations) == 0 || (!ch.Every && !ch.From.Before(edge)) || !r.subs.want(ctx, scope, EventRevised) {
		return none, nil
	}
	from, to := ch.From, ch.To
	if ch.Every {
		from, to = time.Unix(0, 0), edge
	}
	if to.After(edge) {
		to = edge
	}
	spans, err := r.pricedDays(ctx, scope, ch.Locations, from, to, now)
	if err != nil || len(spans) == 0 {
		return none, err
	}
	return r.revise(ctx, scope, spans)
}

// pricedDays returns the closed local days with readings of the locations that overlap
// the UTC time [from, to), by object and direction.
func (r *Reviser) pricedDays(ctx context.Context, scope kwhouse.Scope, locations []string, from, to, now time.Time) (revisedSpans, error) {
	// A local day overlaps the UTC dates either side of its own: read one more each way
	// (never before 1970-01-01, where ClickHouse's Date starts).
	lo := from.UTC().AddDate(0, 0, -1)
	if lo.Year() < 1970 {
		lo = time.Unix(0, 0).UTC()
	}
	rows, err := r.db.Query(ctx, readingDaysStmt, scope.AccountID, scope.LiveByte(), chstore.Set(locations),
		lo.Format(time.DateOnly), to.UTC().AddDate(0, 0, 1).Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("days with readings for cost.revised: %w", err)
	}
	defer rows.Close()
	spans := revisedSpans{}
	zones := map[string]*time.Location{}
	for rows.Next() {
		var loc, dev, direction, day string
		if err := rows.Scan(&loc, &dev, &direction, &day); err != nil {
			return nil, fmt.Errorf("scan days with readings: %w", err)
		}
		start, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return nil, fmt.Errorf("day with readings %q: %w", day, err)
		}
		dir := ingest.Import
		if direction == "EXPORT" {
			dir = ingest.Export
		}
		zone, ok := zones[loc]
		if !ok {
			zone = r.zone(ctx, scope, loc)
			zones[loc] = zone
		}
		if zone == nil {
			continue
		}
		for day := localDay(start.Unix(), zone); day.Before(start.AddDate(0, 0, 1)); day = day.AddDate(0, 0, 1) {
			if r.closed(day, now) && day.Before(to) && day.AddDate(0, 0, 1).After(from) {
				spans.add(loc, dev, dir, zone, day)
			}
		}
	}
	return spans, rows.Err()
}
