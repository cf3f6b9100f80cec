package query

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// Session prices every record of one session_reference_id (POST /costs/session/{id}).
// The session's records must be of one location (and one device, or none).
func (c *Pricer) Session(ctx context.Context, scope kwhouse.Scope, session string, direction string, flags CostFlags) (EnergyCost, error) {
	if session == "" || len(session) > 255 {
		return EnergyCost{}, kwhouse.Invalid("invalid_value", "id", "a session_reference_id is 1 to 255 characters")
	}
	if direction == "" {
		direction = "IMPORT"
	}
	live := scope.LiveByte()
	rows, err := c.db.Query(ctx, sessionStmt, scope.AccountID, live, session, direction)
	if err != nil {
		return EnergyCost{}, fmt.Errorf("find session %s: %w", session, err)
	}
	defer rows.Close()
	type where struct {
		loc, dev         string
		first, last, end time.Time
	}
	var found []where
	for rows.Next() {
		var w where
		if err := rows.Scan(&w.loc, &w.dev, &w.first, &w.last, &w.end); err != nil {
			return EnergyCost{}, fmt.Errorf("scan session: %w", err)
		}
		found = append(found, w)
	}
	if err := rows.Err(); err != nil {
		return EnergyCost{}, err
	}
	switch len(found) {
	case 0:
		return EnergyCost{}, kwhouse.NotFound("id", session)
	case 2:
		return EnergyCost{}, kwhouse.Invalid("ambiguous_session", "id", "session %s has records of several meters", session)
	}
	w := found[0]
	obj := w.loc
	if w.dev != "" {
		obj = w.dev
	}
	// Records are selected by start in [first, last start + 1 s); the answer's window is the
	// session's own: its first record's start to its last record's end.
	out, err := c.Interval(ctx, scope, CostRequest{ObjectID: obj, Direction: direction, CostFlags: flags,
		Start: w.first.UTC(), End: w.last.UTC().Add(time.Second), Session: session})
	out.ObjectID = session
	out.StartTime, out.EndTime = catalog.Timestamp(w.first.UTC()), catalog.Timestamp(w.end.UTC())
	return out, err
}
