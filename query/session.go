package query

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Session prices every record of one session_reference_id (POST /costs/session/{id}).
// The session's records must be of one location (and one device, or none).
func (c *Coster) Session(ctx context.Context, scope kwhouse.Scope, session string, direction string, includeTariff bool) (EnergyCost, error) {
	if session == "" || len(session) > 255 {
		return EnergyCost{}, kwhouse.Invalid("invalid_value", "id", "a session_reference_id is 1 to 255 characters")
	}
	if direction == "" {
		direction = "IMPORT"
	}
	live := uint8(0)
	if scope.LiveMode {
		live = 1
	}
	rows, err := c.db.Query(ctx, sessionStmt, scope.AccountID, live, session, direction)
	if err != nil {
		return EnergyCost{}, chstore.Classify(fmt.Errorf("find session %s: %w", session, err))
	}
	defer rows.Close()
	type where struct {
		loc, dev   string
		first, end time.Time
	}
	var found []where
	for rows.Next() {
		var w where
		if err := rows.Scan(&w.loc, &w.dev, &w.first, &w.end); err != nil {
			return EnergyCost{}, fmt.Errorf("scan session: %w", err)
		}
		found = append(found, w)
	}
	if err := rows.Err(); err != nil {
		return EnergyCost{}, chstore.Classify(err)
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
	out, err := c.Interval(ctx, scope, CostRequest{ObjectID: obj, Direction: direction, IncludeTariff: includeTariff,
		Start: w.first.UTC(), End: w.end.UTC().Add(time.Second), Session: session})
	out.ObjectID = session
	return out, err
}
