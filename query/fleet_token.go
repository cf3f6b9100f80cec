package query

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

var (
	fleetTokenStmt = chstore.Register("query.fleet_token", "fleet_token.sql: what every input of a fleet answer has recorded so far")
	fleetTokenSQL  = renderFixed("fleet_token")
)

// fleetTokenParts are the rows of fleet_token.sql: records by month, price changes,
// documents, records by date.
const fleetTokenParts = 4

// fleetToken is the state token of a fleet answer (docs/costs.md, "Answer cache"): per
// part of fleet_token.sql, its count and its weighted sum. The counts only grow and every
// write adds to them, so on one server an unchanged token means that nothing an answer of
// the window reads has changed since the token was read.
type fleetToken [2 * fleetTokenParts]uint64

// bytes is the token as stored beside a cached answer.
func (t fleetToken) bytes() []byte {
	b := make([]byte, 0, 8*len(t))
	for _, v := range t {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// readFleetToken reads the state token of req's answers in scope: the records written
// over the reach of the months the window touches from a day before it (every date an
// answer's records, tier lookback included, and the skipped check's counts come from),
// the price changes dated from two days before the window to two days after it (a dated
// change reaches the local days within a day of its date) and of every date, and the
// scope's customers, locations, devices, tariffs and markets.
func (c *Pricer) readFleetToken(ctx context.Context, scope kwhouse.Scope, req FleetRequest) (fleetToken, error) {
	const day = 24 * time.Hour
	month := func(t time.Time) time.Time {
		t = t.UTC()
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	date := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	var tok fleetToken
	first, last := month(req.Start.Add(-2*day)), month(req.End.Add(-time.Second))
	rows, err := c.db.Query(ctx, fleetTokenStmt.With(fleetTokenSQL), chstore.Named("account", scope.AccountID),
		chstore.Named("live", scope.LiveByte()), chstore.Named("m0", date(first)), chstore.Named("m1", date(last)),
		chstore.Named("r0", date(first.Add(-chstore.ReachBefore*day))),
		chstore.Named("r1", date(last.AddDate(0, 1, 0).Add((chstore.ReachAfter-1)*day))),
		chstore.Named("p0", date(req.Start.Add(-2*day))), chstore.Named("p1", date(req.End.Add(2*day))))
	if err != nil {
		return tok, fmt.Errorf("fleet state token: %w", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var part uint8
		var total, weighted uint64
		if err := rows.Scan(&part, &total, &weighted); err != nil {
			return tok, fmt.Errorf("scan fleet state token: %w", err)
		}
		if int(part) >= fleetTokenParts {
			return tok, fmt.Errorf("fleet state token: part %d", part)
		}
		tok[2*part], tok[2*part+1] = total, weighted
		seen++
	}
	if err := rows.Err(); err != nil {
		return tok, fmt.Errorf("fleet state token: %w", err)
	}
	if seen != fleetTokenParts {
		return tok, fmt.Errorf("fleet state token: %d parts, want %d", seen, fleetTokenParts)
	}
	return tok, nil
}
