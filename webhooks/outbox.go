package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// outboxEvent is an event as the outbox holds it: the stored event document's body.
type outboxEvent struct {
	CreatedUS int64
	ID        string
	Scope     kwhouse.Scope
	Type      string
	Body      []byte
}

// cursorName names the dispatchers' shared position in webhook_cursor.
const cursorName = "outbox"

var (
	// A range of the outbox's sorting key (created_us, id).
	outboxStmt = chstore.Register("webhooks.outbox", `SELECT created_us, id, account_id, live_mode, event_type, body
FROM webhook_outbox WHERE created_us >= ? ORDER BY created_us, id LIMIT ?`)
	readCursorStmt     = chstore.Register("webhooks.read_cursor", "SELECT max(position) FROM webhook_cursor WHERE name = ?")
	writeCursorStmt    = chstore.Register("webhooks.write_cursor", "INSERT INTO webhook_cursor (name, position) VALUES")
	countOldOutboxStmt = chstore.Register("webhooks.count_old_outbox", "SELECT count() FROM webhook_outbox WHERE created_us < ?")
	purgeOutboxStmt    = chstore.Register("webhooks.purge_outbox", "ALTER TABLE webhook_outbox DELETE WHERE created_us < ?")
)

// outbox returns up to limit events created at or after fromUS, oldest first.
func (s *Store) outbox(ctx context.Context, fromUS int64, limit int) ([]outboxEvent, error) {
	rows, err := s.db.Query(ctx, outboxStmt, uint64(max(fromUS, 0)), limit)
	if err != nil {
		return nil, fmt.Errorf("read webhook outbox: %w", err)
	}
	defer rows.Close()
	var out []outboxEvent
	for rows.Next() {
		var e outboxEvent
		var created uint64
		var live uint8
		var body string
		if err := rows.Scan(&created, &e.ID, &e.Scope.AccountID, &live, &e.Type, &body); err != nil {
			return nil, fmt.Errorf("scan webhook outbox: %w", err)
		}
		e.CreatedUS, e.Scope.LiveMode, e.Body = int64(created), live == 1, []byte(body)
		out = append(out, e)
	}
	return out, rows.Err()
}

// readCursor returns the shared outbox position, 0 when none was stored.
func (s *Store) readCursor(ctx context.Context) (int64, error) {
	var pos uint64
	if err := s.db.QueryRow(ctx, readCursorStmt, cursorName).Scan(&pos); err != nil {
		return 0, fmt.Errorf("read webhook cursor: %w", err)
	}
	return int64(pos), nil
}

// writeCursor stores the outbox position; the highest stored one wins.
func (s *Store) writeCursor(ctx context.Context, pos int64) error {
	err := s.db.InsertRows(ctx, writeCursorStmt, 1, func(int) []any { return []any{cursorName, uint64(pos)} })
	if err != nil {
		return fmt.Errorf("write webhook cursor: %w", err)
	}
	return nil
}

// Purge deletes outbox copies of events and delivery states older than before.
func (s *Store) Purge(ctx context.Context, before time.Time) error {
	var n uint64
	if err := s.db.QueryRow(ctx, countOldOutboxStmt, uint64(before.UnixMicro())).Scan(&n); err != nil {
		return fmt.Errorf("count old webhook outbox events: %w", err)
	}
	if n > 0 {
		if err := s.db.Exec(ctx, purgeOutboxStmt, uint64(before.UnixMicro())); err != nil {
			return fmt.Errorf("purge webhook outbox: %w", err)
		}
	}
	return s.purge(ctx, before)
}

// The bodies of events by creation time and id: both in the outbox's sorting key.
var outboxBodiesStmt = chstore.Register("webhooks.outbox_bodies", `SELECT id, body
FROM webhook_outbox WHERE created_us IN ? AND id IN ?`)

// bodies returns the outbox bodies of events, by id, given their creation times.
func (s *Store) bodies(ctx context.Context, created []int64, ids []string) (map[string][]byte, error) {
	times := make(chstore.Tuple, len(created))
	for i, c := range created {
		times[i] = uint64(c)
	}
	rows, err := s.db.Query(ctx, outboxBodiesStmt, times, chstore.Set(ids))
	if err != nil {
		return nil, fmt.Errorf("read webhook event bodies: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var id, body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("scan webhook event body: %w", err)
		}
		out[id] = []byte(body)
	}
	return out, rows.Err()
}
