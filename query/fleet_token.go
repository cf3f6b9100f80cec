package query

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// tokenShape is what fleet_token.sql reads: the whole scope's locations with records (the
// zero shape), with every document of the scope for a request naming locations or a
// customer (Named), or the locations of a later page by id, one row per location, from
// @lo on (From), only up to @hi and @next (Upto).
type tokenShape struct{ Named, From, Upto bool }

var (
	fleetTokenStmt = chstore.Register("query.fleet_token", "fleet_token.sql: what every input of a fleet answer has recorded so far")
	fleetTokenSQL  = renderToken(tokenShape{})
	namedTokenSQL  = renderToken(tokenShape{Named: true})
	// A page served from the answer cache reads its own locations' token.
	pageTokenStmt = chstore.Register("query.fleet_page_token", "fleet_token.sql: what the locations of a page by id have recorded so far")
	pageTokenSQL  = renderToken(tokenShape{From: true, Upto: true})
	// A page computed reads the token of every location from its cursor's on (the last
	// page's, when served, too).
	tokensFromStmt = chstore.Register("query.fleet_tokens_from", "fleet_token.sql: what each location from a page's cursor on has recorded so far")
	tokensFromSQL  = renderToken(tokenShape{From: true})
)

func renderToken(s tokenShape) string {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "fleet_token", s); err != nil {
		panic(err)
	}
	return buf.String()
}

// fleetTokenParts are the parts of fleet_token.sql: records by month, price changes,
// documents, records by date.
const fleetTokenParts = 4

// fleetToken is the state token of a fleet answer (docs/costs.md, "Answer cache"): per
// part of fleet_token.sql, its count and its weighted sum. The counts only grow and every
// write adds to them, so on one server an unchanged token means that nothing an answer of
// the window reads has changed since the token was read.
type fleetToken [2 * fleetTokenParts]uint64

// add adds a row of part's count and weighted sum (the token of a set of locations is the
// sum of theirs).
func (t *fleetToken) add(part uint8, total, weighted uint64) {
	t[2*part] += total
	t[2*part+1] += weighted
}

// recorded reports whether t counts meter record rows (part 0): a location's token with
// none is that of a location without records in the reach.
func (t fleetToken) recorded() bool { return t[0] > 0 }

// bytes is the token as stored beside a cached answer.
func (t fleetToken) bytes() []byte {
	b := make([]byte, 0, 8*len(t))
	for _, v := range t {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// pageSpan is the locations a later page by id reads (docs/costs.md, "Answer cache"):
// from its cursor's (lo) to its last row's (hi), and the location of the first row after
// it (next: the page has more because that row exists); hi and next empty: every location
// from lo on (the last page).
type pageSpan struct{ lo, hi, next string }

// holds reports whether the page of s reads location id.
func (s pageSpan) holds(id string) bool {
	return id >= s.lo && (s.hi == "" || id <= s.hi || id == s.next)
}

// readFleetToken reads the state token of req's answers in scope: the records written
// over the reach of the months the window touches from a day before it (every date an
// answer's records, tier lookback included, and the skipped check's counts come from),
// the price changes dated from two days before the window to two days after it (a dated
// change reaches the local days within a day of its date) and of every date, and the
// location documents, of the locations with records over that reach only; a request
// naming locations or a customer reads every location's price changes and every
// customer, location, device, tariff and market of the scope (whether each exists).
func (c *Pricer) readFleetToken(ctx context.Context, scope kwhouse.Scope, req FleetRequest) (fleetToken, error) {
	sql := fleetTokenSQL
	if req.LocationsSet || req.CustomerID != "" {
		sql = namedTokenSQL
	}
	return c.sumToken(ctx, fleetTokenStmt.With(sql), scope, req)
}

// readPageToken reads the state token of the page of req whose locations are s: what
// readFleetToken reads of those locations and their documents only.
func (c *Pricer) readPageToken(ctx context.Context, scope kwhouse.Scope, req FleetRequest, s pageSpan) (fleetToken, error) {
	sql := pageTokenSQL
	if s.hi == "" {
		sql = tokensFromSQL
	}
	toks, err := c.readLocationTokens(ctx, pageTokenStmt.With(sql), scope, req,
		chstore.Named("lo", s.lo), chstore.Named("hi", s.hi), chstore.Named("next", s.next))
	return toks.tokenOf(s), err
}

// sumToken runs a rendering of fleet_token.sql without .From: one row per part.
func (c *Pricer) sumToken(ctx context.Context, st chstore.Statement, scope kwhouse.Scope, req FleetRequest,
	more ...any) (fleetToken, error) {
	var tok fleetToken
	var seen [fleetTokenParts]int
	err := c.queryToken(ctx, st, scope, req, func(part uint8, _ string, total, weighted uint64) {
		tok.add(part, total, weighted)
		seen[part]++
	}, more...)
	if err == nil && seen != [fleetTokenParts]int{1, 1, 1, 1} {
		err = fmt.Errorf("fleet state token: parts read %v times, want once each", seen)
	}
	return tok, err
}

// locationTokens are the token rows of each location from a page's cursor's on: the page
// token of any span from there is their sum (tokenOf).
type locationTokens map[string]*fleetToken

// tokenOf is the page token of the locations of s: the sum of the rows of those with
// records in the reach (a part 0 row). As in the scope's token, the others add nothing:
// an answer's rows and skipped come from the locations with records alone, and a
// location's first record there moves part 0 (docs/costs.md, "Answer cache").
func (l locationTokens) tokenOf(s pageSpan) fleetToken {
	var tok fleetToken
	for id, t := range l {
		if s.holds(id) && t.recorded() {
			for i, v := range t {
				tok[i] += v
			}
		}
	}
	return tok
}

// readTokensFrom reads the token rows of every location of scope from lo on, for the
// answers of req: read before a page is computed, whose span is known after.
func (c *Pricer) readTokensFrom(ctx context.Context, scope kwhouse.Scope, req FleetRequest, lo string) (locationTokens, error) {
	return c.readLocationTokens(ctx, tokensFromStmt.With(tokensFromSQL), scope, req, chstore.Named("lo", lo))
}

// readLocationTokens runs a rendering of fleet_token.sql with .From: one row per part and
// location.
func (c *Pricer) readLocationTokens(ctx context.Context, st chstore.Statement, scope kwhouse.Scope, req FleetRequest,
	more ...any) (locationTokens, error) {
	out := locationTokens{}
	err := c.queryToken(ctx, st, scope, req, func(part uint8, loc string, total, weighted uint64) {
		t := out[loc]
		if t == nil {
			t = &fleetToken{}
			out[loc] = t
		}
		t.add(part, total, weighted)
	}, more...)
	return out, err
}

// queryToken runs a rendering of fleet_token.sql for req's window in scope and hands
// each row to add.
func (c *Pricer) queryToken(ctx context.Context, st chstore.Statement, scope kwhouse.Scope, req FleetRequest,
	add func(part uint8, loc string, total, weighted uint64), more ...any) error {
	const day = 24 * time.Hour
	month := func(t time.Time) time.Time {
		t = t.UTC()
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	date := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	first, last := month(req.Start.Add(-2*day)), month(req.End.Add(-time.Second))
	args := append([]any{chstore.Named("account", scope.AccountID),
		chstore.Named("live", scope.LiveByte()), chstore.Named("m0", date(first)), chstore.Named("m1", date(last)),
		chstore.Named("r0", date(first.Add(-chstore.ReachBefore*day))),
		chstore.Named("r1", date(last.AddDate(0, 1, 0).Add((chstore.ReachAfter-1)*day))),
		chstore.Named("p0", date(req.Start.Add(-2*day))), chstore.Named("p1", date(req.End.Add(2*day)))}, more...)
	rows, err := c.db.Query(ctx, st, args...)
	if err != nil {
		return fmt.Errorf("fleet state token: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var part uint8
		var loc string
		var total, weighted uint64
		if err := rows.Scan(&part, &loc, &total, &weighted); err != nil {
			return fmt.Errorf("scan fleet state token: %w", err)
		}
		if int(part) >= fleetTokenParts {
			return fmt.Errorf("fleet state token: part %d", part)
		}
		add(part, loc, total, weighted)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fleet state token: %w", err)
	}
	return nil
}
