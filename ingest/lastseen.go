package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// seenRow says a device sent a reading in a batch stored at a time.
type seenRow struct {
	scope  kwhouse.Scope
	device string
	at     time.Time
}

// seenRows lists each device of recs once.
func seenRows(scope kwhouse.Scope, recs []Record, at time.Time) []seenRow {
	var out []seenRow
	seen := map[string]bool{}
	for i := range recs {
		if d := recs[i].DeviceID; d != "" && !seen[d] {
			seen[d] = true
			out = append(out, seenRow{scope: scope, device: d, at: at})
		}
	}
	return out
}

// insertSeen stores the last_seen rows of one flush as one block.
func insertSeen(ctx context.Context, db *chstore.DB, rows []seenRow) error {
	b, err := db.Insert(ctx, insertSeenStmt)
	if err != nil {
		return fmt.Errorf("touch devices: %w", err)
	}
	for _, r := range rows {
		if err := b.Append(r.scope.AccountID, r.scope.LiveByte(), r.device, r.at); err != nil {
			_ = b.Abort()
			return fmt.Errorf("touch device %s: %w", r.device, err)
		}
	}
	return b.Send()
}

// LastSeen returns when each of ids last sent a reading; ids never seen are absent.
func (s *Service) LastSeen(ctx context.Context, scope kwhouse.Scope, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, lastSeenStmt, scope.AccountID, scope.LiveByte(), chstore.Set(ids))
	if err != nil {
		return nil, fmt.Errorf("last seen of devices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var t time.Time
		if err := rows.Scan(&id, &t); err != nil {
			return nil, fmt.Errorf("scan last seen: %w", err)
		}
		out[id] = t.UTC()
	}
	return out, rows.Err()
}

var insertSeenStmt = chstore.Register("ingest.insert_last_seen",
	"INSERT INTO device_last_seen (account_id, live_mode, device_id, last_seen) VALUES").Eventual() // rides every flush

var lastSeenStmt = chstore.Register("ingest.last_seen", `SELECT device_id, max(last_seen) FROM device_last_seen
		WHERE account_id = ? AND live_mode = ? AND device_id IN ? GROUP BY device_id`)
