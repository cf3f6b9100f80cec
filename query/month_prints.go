package query

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse/chstore"
)

var (
	monthPrintsStmt = chstore.Register("query.month_prints", "month_prints.sql: the change-count fingerprints of a batch's month reaches now")
	monthPrintsSQL  = renderFixed("month_prints")
)

// reachPrints are the change-count fingerprints of local months' reaches (the UTC dates
// [first day - 4 days, last day + 2 days] of a month: chstore.ReachMonths), which cover
// every count a local month of any zone depends on (count_ranges in buckets.sql), so a
// month whose three figures are unchanged has no changed count. Months are keyed by their
// first day's day number; a key missing from a map is 0.
type reachPrints struct {
	readings map[monthKey]uint64 // the records' fingerprint per object and month
	// The part of readings from the records of the other direction (tiered locations):
	// readings − other is the asked direction's alone (sums modulo 2⁶⁴, as stored).
	other map[monthKey]uint64
	dated map[monthKey]uint64 // dated price changes per location (objKey.dev "") and month
	every map[string]uint64   // the count of price changes of every date per location
}

// newReachPrints makes room for the records' fingerprints of about months (0: unknown).
func newReachPrints(about int) reachPrints {
	return reachPrints{readings: make(map[monthKey]uint64, about), other: map[monthKey]uint64{}, dated: map[monthKey]uint64{},
		every: map[string]uint64{}}
}

// monthPrints returns the fingerprints now of the reaches of the local months [m0, m1]
// (first days, as dates "2006-01-02") of the locations ctx carries as _locs (tiered ones
// as _chained: withLocsChained): records of direction dir (both directions for a tiered
// location) at location level or of devices, and price changes (month_prints.sql, from
// reading_changes_by_month and price_changes). Statements that price or verify a month
// record these figures as they read them (count_months), so a month is served while they
// are unchanged. about is how many object months to make room for.
func (c *Pricer) monthPrints(ctx context.Context, args []any, m0, m1 string, about int) (reachPrints, error) {
	out := newReachPrints(about)
	args = append(args[:len(args):len(args)], chstore.Named("m0", m0), chstore.Named("m1", m1))
	rows, err := c.db.Query(ctx, monthPrintsStmt.With(monthPrintsSQL), args...)
	if err != nil {
		return out, fmt.Errorf("month reach fingerprints: %w", err)
	}
	defer rows.Close()
	// One row scanned into through one list of destinations: a list per row, and the
	// values it points to, would each be made anew (a fleet's year is 12,000 rows).
	var kind uint8
	var k monthKey
	var n, print uint64
	dest := []any{&kind, &k.obj.loc, &k.obj.dev, &k.month, &n, &print}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return out, fmt.Errorf("scan month reach fingerprints: %w", err)
		}
		out.add(kind, k, n, print)
	}
	return out, rows.Err()
}

// add adds a row of kind 0 (records of the asked direction), 5 (of the other), 1 (dated
// price changes) or 2 (every date: n).
func (p reachPrints) add(kind uint8, k monthKey, n, print uint64) {
	switch kind {
	case 2:
		p.every[k.obj.loc] += n
	case 1:
		p.dated[k] += print
	case 5:
		p.other[k] += print
		p.readings[k] += print
	default:
		p.readings[k] += print
	}
}

// asked is the fingerprint of k's records of the asked direction alone.
func (p reachPrints) asked(k monthKey) uint64 {
	return p.readings[k] - p.other[k]
}
