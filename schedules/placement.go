package schedules

import (
	"context"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// placedStmt returns, per device of a list with a record at the location in a window, its
// latest record's start: the device stays placed at the location until that record is
// deviceLookback old. A read of the location's own rows (location_id follows the account
// in the sorting key). Without FINAL: a record is only ever replaced by one of the same
// location and device, so whether one exists does not depend on which version is read.
var placedStmt = chstore.Register("schedules.placed", `SELECT device_id, max(start_time) FROM meter_records
	WHERE account_id = ? AND live_mode = ? AND location_id = ? AND device_id IN ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)
	GROUP BY device_id`)

// placementCacheSize bounds the (scope, location, device) placements kept in memory.
const placementCacheSize = 65536

// placements remembers that devices have records at a location, and until when those
// records place them there (the latest one's start plus deviceLookback). Meter records
// are never deleted, and a re-sent reading keeps its location and device: once a device
// has a record at a location it stays placed there until that record ages out of the
// lookback, whatever any kwhouse process writes meanwhile. So a remembered placement is
// exact without any invalidation, and a schedule's device check reads no ClickHouse for
// devices that report where they are planned. Devices not placed are never remembered:
// a reading that places them may arrive at any moment, through any process.
type placements struct {
	db    *chstore.DB
	until *lru.Cache[placementKey, int64] // Unix seconds: placed while now ≤ this
}

type placementKey struct {
	scope              kwhouse.Scope
	location, deviceID string
}

func newPlacements(db *chstore.DB) *placements {
	c, err := lru.New[placementKey, int64](placementCacheSize)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &placements{db: db, until: c}
}

// unknown returns the devices of ids not remembered as placed at the location at now.
func (p *placements) unknown(scope kwhouse.Scope, location string, ids []string, now time.Time) []string {
	var out []string
	for _, id := range ids {
		if until, ok := p.until.Get(placementKey{scope, location, id}); ok && now.Unix() <= until {
			continue
		}
		out = append(out, id)
	}
	return out
}

// read looks up which of ids have a record at the location starting in
// [now − deviceLookback, now), and remembers them.
func (p *placements) read(ctx context.Context, scope kwhouse.Scope, location string, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := p.db.Query(ctx, placedStmt, scope.AccountID, scope.LiveByte(), location, chstore.Set(ids),
		uint32(now.Add(-deviceLookback).Unix()), uint32(now.Unix()))
	if err != nil {
		return fmt.Errorf("devices placed at %s: %w", location, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var latest time.Time
		if err := rows.Scan(&id, &latest); err != nil {
			return fmt.Errorf("scan device placement: %w", err)
		}
		p.until.Add(placementKey{scope, location, id}, latest.Add(deviceLookback).Unix())
	}
	return rows.Err()
}
