package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Delivery states.
const (
	StatePending   = "pending"   // waiting for its next attempt
	StateDelivered = "delivered" // an attempt got a 2xx
	StateFailed    = "failed"    // out of attempts, or its endpoint is gone or disabled
)

// state is one row of webhook_deliveries: a delivery's creation (attempt 0) or the outcome
// of one attempt.
type state struct {
	EndpointID string
	DeliveryID string
	Attempt    uint16
	AttemptID  string // "" for attempt 0
	Scope      kwhouse.Scope
	EventID    string
	EventType  string
	CreatedUS  int64 // the delivery's creation
	TimeUS     int64 // when the attempt started (attempt 0: the creation)
	State      string
	StatusCode uint16
	DurationMS uint32
	Error      string
	NextUS     int64 // when the next attempt is due (pending), else 0
}

const deliveryColumns = `day, endpoint_id, delivery_id, attempt, attempt_id, account_id, live_mode, event_id,
	event_type, created_us, time_us, state, status_code, duration_ms, error, next_us`

var (
	insertStateStmt = chstore.Register("webhooks.insert_state", "INSERT INTO webhook_deliveries ("+deliveryColumns+") VALUES")
	// The current attempt of deliveries the caller is about to attempt: read after taking
	// the lease, so an attempt another process finished meanwhile is not made again.
	lastAttemptStmt = chstore.Register("webhooks.last_attempt", `SELECT delivery_id, max(attempt)
FROM webhook_deliveries WHERE endpoint_id IN ? AND delivery_id IN ? GROUP BY delivery_id`)
	// Deliveries whose next attempt is due, of the partitions (creation days) since a day:
	// the retries of a crashed or restarted process, and deliveries made by processes that
	// do not dispatch.
	dueStmt = chstore.Register("webhooks.due", `SELECT endpoint_id, delivery_id,
	max(attempt)               AS last_attempt,
	argMax(state, attempt)     AS cur_state,
	argMax(next_us, attempt)   AS cur_next,
	any(account_id), any(live_mode), any(event_id), any(event_type), min(created_us)
FROM webhook_deliveries
WHERE day >= toDate(?)
GROUP BY endpoint_id, delivery_id
HAVING cur_state = 'pending' AND cur_next <= ?
ORDER BY cur_next
LIMIT ? BY endpoint_id
LIMIT ?`)
	findDeliveryStmt = chstore.Register("webhooks.find_delivery", `SELECT account_id, live_mode, event_id, event_type
FROM webhook_deliveries WHERE endpoint_id = ? AND delivery_id = ? LIMIT 1`)
	attemptTimeStmt = chstore.Register("webhooks.attempt_time", `SELECT time_us
FROM webhook_deliveries WHERE endpoint_id = ? AND attempt_id = ? LIMIT 1`)
	listAttemptsStmt = chstore.Register("webhooks.list_attempts", `SELECT attempt_id, delivery_id, attempt, event_id,
	event_type, time_us, state, status_code, duration_ms, error, next_us
FROM webhook_deliveries WHERE endpoint_id = ? AND attempt > 0 AND … ORDER BY … LIMIT ?`)
	purgeDeliveriesStmt    = chstore.Register("webhooks.purge_deliveries", "ALTER TABLE webhook_deliveries DELETE WHERE day < toDate(?)")
	countOldDeliveriesStmt = chstore.Register("webhooks.count_old_deliveries", "SELECT count() FROM webhook_deliveries WHERE day < toDate(?)")
)

// Store keeps delivery states and reads the outbox, in ClickHouse.
type Store struct{ db *chstore.DB }

// NewStore returns the delivery store on db.
func NewStore(db *chstore.DB) *Store { return &Store{db: db} }

func dayOf(us int64) time.Time {
	t := time.UnixMicro(us).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func dayString(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// write stores states as one block.
func (s *Store) write(ctx context.Context, states []state) error {
	if len(states) == 0 {
		return nil
	}
	err := s.db.InsertRows(ctx, insertStateStmt, len(states), func(i int) []any {
		r := states[i]
		return []any{dayOf(r.CreatedUS), r.EndpointID, r.DeliveryID, r.Attempt, r.AttemptID, r.Scope.AccountID,
			r.Scope.LiveByte(), r.EventID, r.EventType, uint64(r.CreatedUS), uint64(r.TimeUS), r.State, r.StatusCode,
			r.DurationMS, r.Error, uint64(r.NextUS)}
	})
	if err != nil {
		return fmt.Errorf("write webhook deliveries: %w", err)
	}
	return nil
}

// lastAttempts returns the highest attempt stored of each delivery (keyed by delivery id).
func (s *Store) lastAttempts(ctx context.Context, endpoints, deliveries []string) (map[string]uint16, error) {
	rows, err := s.db.Query(ctx, lastAttemptStmt, chstore.Set(endpoints), chstore.Set(deliveries))
	if err != nil {
		return nil, fmt.Errorf("read webhook delivery attempts: %w", err)
	}
	defer rows.Close()
	out := map[string]uint16{}
	for rows.Next() {
		var id string
		var n uint16
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("scan webhook delivery attempt: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

// due returns up to limit pending deliveries created since `since` whose next attempt is
// due at now, soonest first and at most perEndpoint of one endpoint (a dead endpoint's
// backlog does not crowd out the others); each carries its last stored attempt.
func (s *Store) due(ctx context.Context, since, now time.Time, perEndpoint, limit int) ([]state, error) {
	rows, err := s.db.Query(ctx, dueStmt, dayString(since), uint64(now.UnixMicro()), perEndpoint, limit)
	if err != nil {
		return nil, fmt.Errorf("read due webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []state
	for rows.Next() {
		var r state
		var live uint8
		var next, created uint64
		if err := rows.Scan(&r.EndpointID, &r.DeliveryID, &r.Attempt, &r.State, &next, &r.Scope.AccountID, &live,
			&r.EventID, &r.EventType, &created); err != nil {
			return nil, fmt.Errorf("scan due webhook delivery: %w", err)
		}
		r.Scope.LiveMode, r.NextUS, r.CreatedUS = live == 1, int64(next), int64(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// find returns the event of an endpoint's delivery (NotFound when it has none such).
func (s *Store) find(ctx context.Context, endpointID, deliveryID string) (state, error) {
	r := state{EndpointID: endpointID, DeliveryID: deliveryID}
	var live uint8
	err := s.db.QueryRow(ctx, findDeliveryStmt, endpointID, deliveryID).Scan(&r.Scope.AccountID, &live, &r.EventID, &r.EventType)
	if errors.Is(err, sql.ErrNoRows) {
		return r, kwhouse.NotFound("delivery_id", deliveryID)
	}
	if err != nil {
		return r, fmt.Errorf("find webhook delivery %s: %w", deliveryID, err)
	}
	r.Scope.LiveMode = live == 1
	return r, nil
}

// Attempt is one attempt of a delivery, as GET /webhooks/{id}/deliveries lists it.
type Attempt struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	DeliveryID    string  `json:"delivery_id"`
	EventID       string  `json:"event_id"`
	EventType     string  `json:"event_type"`
	Attempt       int     `json:"attempt"`
	TimeCreated   string  `json:"time_created"` // RFC 3339 with milliseconds
	Status        string  `json:"status"`       // the delivery's state after this attempt
	ResponseCode  int     `json:"response_status,omitempty"`
	DurationMS    int     `json:"duration_ms"`
	Error         string  `json:"error,omitempty"`
	NextAttemptAt *string `json:"next_attempt_at,omitempty"`
}

// AttemptQuery pages an endpoint's attempts, newest first.
type AttemptQuery struct {
	Limit         int
	StartingAfter string // an attempt id: older ones follow
	EndingBefore  string // an attempt id: newer ones, oldest first, then reversed
}

// attempts lists an endpoint's attempts and whether more follow in the paging direction.
func (s *Store) attempts(ctx context.Context, endpointID string, q AttemptQuery) ([]Attempt, bool, error) {
	where, order := "1 = 1", "time_us DESC, attempt_id DESC"
	args := []any{endpointID}
	if cursor, cmp := q.cursor(); cursor != "" {
		var t uint64
		if err := s.db.QueryRow(ctx, attemptTimeStmt, endpointID, cursor).Scan(&t); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil, false, kwhouse.Invalid("invalid_cursor", q.cursorParam(), "no attempt %s to page from", cursor)
			}
			return nil, false, fmt.Errorf("webhook attempt %s: %w", cursor, err)
		}
		where = fmt.Sprintf("(time_us %s ? OR (time_us = ? AND attempt_id %s ?))", cmp, cmp)
		args = append(args, t, t, cursor)
		if cmp == ">" {
			order = "time_us ASC, attempt_id ASC"
		}
	}
	sql := strings.Replace(strings.Replace(listAttemptsStmt.SQL, "…", where, 1), "…", order, 1)
	rows, err := s.db.Query(ctx, listAttemptsStmt.With(sql), append(args, q.Limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("list webhook attempts: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list webhook attempts: %w", err)
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	if _, cmp := q.cursor(); cmp == ">" {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, more, nil
}

func scanAttempt(rows chstore.Rows) (Attempt, error) {
	var a Attempt
	var n, code uint16
	var t, next uint64
	var dur uint32
	if err := rows.Scan(&a.ID, &a.DeliveryID, &n, &a.EventID, &a.EventType, &t, &a.Status, &code, &dur, &a.Error, &next); err != nil {
		return a, fmt.Errorf("scan webhook attempt: %w", err)
	}
	a.Object, a.Attempt, a.ResponseCode, a.DurationMS = "webhook_attempt", int(n), int(code), int(dur)
	a.TimeCreated = time.UnixMicro(int64(t)).UTC().Format(timeFormat)
	if next > 0 && a.Status == StatePending {
		s := time.UnixMicro(int64(next)).UTC().Format(timeFormat)
		a.NextAttemptAt = &s
	}
	return a, nil
}

// timeFormat is RFC 3339 with milliseconds: attempts seconds apart must stay ordered.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func (q AttemptQuery) cursor() (string, string) {
	if q.EndingBefore != "" {
		return q.EndingBefore, ">"
	}
	return q.StartingAfter, "<"
}

func (q AttemptQuery) cursorParam() string {
	if q.EndingBefore != "" {
		return "ending_before"
	}
	return "starting_after"
}

// purge deletes delivery states of deliveries created before `before` (a background
// mutation, only when there is something to delete).
func (s *Store) purge(ctx context.Context, before time.Time) error {
	var n uint64
	if err := s.db.QueryRow(ctx, countOldDeliveriesStmt, dayString(before)).Scan(&n); err != nil {
		return fmt.Errorf("count old webhook deliveries: %w", err)
	}
	if n == 0 {
		return nil
	}
	if err := s.db.Exec(ctx, purgeDeliveriesStmt, dayString(before)); err != nil {
		return fmt.Errorf("purge webhook deliveries: %w", err)
	}
	return nil
}
