package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// lastSeenStore keeps when kwhouse last took a reading of each device.
type lastSeenStore struct{ db *chstore.DB }

func (s *lastSeenStore) touch(ctx context.Context, scope kwhouse.Scope, recs []Record, at time.Time) error {
	devs := map[string]bool{}
	for i := range recs {
		if recs[i].DeviceID != "" {
			devs[recs[i].DeviceID] = true
		}
	}
	if len(devs) == 0 {
		return nil
	}
	b, err := s.db.Conn.PrepareBatch(s.db.WriteContext(ctx), "INSERT INTO device_last_seen (account_id, live_mode, device_id, last_seen) VALUES")
	if err != nil {
		return chstore.Classify(fmt.Errorf("touch devices: %w", err))
	}
	for d := range devs {
		if err := b.Append(scope.AccountID, liveByte(scope), d, at); err != nil {
			return fmt.Errorf("touch device %s: %w", d, err)
		}
	}
	return chstore.Classify(b.Send())
}

// LastSeen returns when each of ids last sent a reading; ids never seen are absent.
func (s *Service) LastSeen(ctx context.Context, scope kwhouse.Scope, ids []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.seen.db.Conn.Query(s.seen.db.ReadContext(ctx), `SELECT device_id, max(last_seen) FROM device_last_seen
		WHERE account_id = ? AND live_mode = ? AND device_id IN ? GROUP BY device_id`, scope.AccountID, liveByte(scope), chstore.Set(ids))
	if err != nil {
		return nil, chstore.Classify(fmt.Errorf("last seen of devices: %w", err))
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
	return out, chstore.Classify(rows.Err())
}
