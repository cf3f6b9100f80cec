package query

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"golang.org/x/sync/errgroup"
)

// Priced months (docs/costs.md, "Priced buckets", priced months): a whole local month of a location (or
// device) that count_months verified bucket by bucket, kept as its sums with the
// fingerprints of its reach's change counts read in that same statement. A MONTH or NONE
// answer serves it while the fingerprints now (month_prints.sql) are the same, without
// reading its days' buckets or counts.
var (
	monthStoredStmt  = chstore.Register("query.month_stored", "priced_months.sql: a batch's latest priced months")
	insertMonthsStmt = chstore.Register("query.insert_months", `INSERT INTO priced_months (account_id, live_mode, location_id,
	device_id, direction, month, zone, tiered, served, n_import, n_export, energy_wh, money, money_commodity,
	money_non_commodity, confidence, readings_print, prices_print, prices_every, version) VALUES`)
	monthStoredSQL = renderFixed("month_stored")
)

// pricedMonth is a row of priced_months: a whole month's sums and the reach fingerprints
// (readings, dated, every: reachPrints) it holds under.
type pricedMonth struct {
	key                    monthKey
	sameKind               uint8
	served                 uint64 // non-empty days
	sum                    fleetSum
	readings, dated, every uint64
}

// current says whether m holds now: priced in the zone and tiering of the location now,
// and the fingerprints of its reach now (p) are those it was verified under.
func (m pricedMonth) current(p reachPrints) bool {
	return m.sameKind == 1 && m.readings == p.readings[m.key] &&
		m.dated == p.dated[monthKey{objKey{loc: m.key.obj.loc}, m.key.month}] && m.every == p.every[m.key.obj.loc]
}

// verifiedMonth is the row kept for a month wholeMonths found valid: its sums (none when
// it has no bucket) under the reach fingerprints count_months read with its counts.
func verifiedMonth(k monthKey, served uint64, sum fleetSum, counts monthCounts) pricedMonth {
	return pricedMonth{key: k, sameKind: 1, served: served, sum: sum, readings: counts.reach.readings[k],
		dated: counts.reach.dated[monthKey{objKey{loc: k.obj.loc}, k.month}], every: counts.every[k.obj.loc]}
}

// wholeMonthsOf are the local months (first days' day numbers) the window of run covers
// whole, in order.
func wholeMonthsOf(run dayRun, zone *time.Location) []uint32 {
	var out []uint32
	for m := monthOf(dayNumber(run.first)); m <= dayNumber(run.last()); m = monthEnd(m) + 1 {
		if !localMidnightOf(m, zone).Before(run.w0) && !localMidnightOf(monthEnd(m)+1, zone).After(run.w1) {
			out = append(out, m)
		}
	}
	return out
}

// keptMonths serves the whole months of a chunk's locations ids (ctx carries them:
// withLocsChained) from priced_months where they hold now: it reads the kept rows and the
// reach fingerprints now side by side, and returns the served months' sums and, per
// location and month, whether the location's month is done (every object's row holds, and
// no object with records in the reach lacks one). It publishes the fingerprints to the
// answer's printsShare, if any.
func (c *Pricer) keptMonths(ctx context.Context, args []any, zone *time.Location, ids []string, whole []uint32) (
	[]fleetSum, map[monthKey]bool, error) {
	done := map[monthKey]bool{}
	if len(whole) == 0 {
		printsShareOf(ctx).publish(ids, 1, 0, reachPrints{})
		return nil, done, nil
	}
	m0, m1 := dateOf(whole[0]).Format(time.DateOnly), dateOf(whole[len(whole)-1]).Format(time.DateOnly)
	var kept []pricedMonth
	var prints reachPrints
	g, gctx := errgroup.WithContext(ctx)
	about := len(ids) * len(whole)
	g.Go(func() (err error) { kept, err = c.storedMonths(gctx, args, m0, m1, about); return err })
	g.Go(func() (err error) { prints, err = c.monthPrints(gctx, args, m0, m1, about); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	printsShareOf(ctx).publish(ids, whole[0], whole[len(whole)-1], prints)
	bad := map[monthKey]bool{} // by location (objKey.dev "") and month
	has := make(map[monthKey]bool, len(kept))
	for _, m := range kept {
		has[m.key] = true
		if !m.current(prints) {
			bad[monthKey{objKey{loc: m.key.obj.loc}, m.key.month}] = true
		}
	}
	for k, p := range prints.readings {
		if p != 0 && !has[k] {
			bad[monthKey{objKey{loc: k.obj.loc}, k.month}] = true
		}
	}
	out := make([]fleetSum, 0, len(kept))
	for _, m := range kept {
		loc := monthKey{objKey{loc: m.key.obj.loc}, m.key.month}
		if bad[loc] || m.served == 0 {
			continue
		}
		c.buckets.served.Add(int64(m.served))
		s := m.sum
		s.Key = uint32(localMidnightOf(m.key.month, zone).Unix())
		out = append(out, s)
	}
	for _, id := range ids {
		for _, m := range whole {
			if k := (monthKey{objKey{loc: id}, m}); !bad[k] {
				done[k] = true
			}
		}
	}
	return out, done, nil
}

// storedMonths reads month_stored, about rows (a location's months; its devices' may be
// more): sized up front and scanned through one destination list, as a 10,000-location
// year's 120,000 rows spent more Go CPU growing the slice and building a list per row
// than decoding (`-cpuprofile` of bench/costs, docs/benchmarks.md).
func (c *Pricer) storedMonths(ctx context.Context, args []any, m0, m1 string, about int) ([]pricedMonth, error) {
	args = append(args[:len(args):len(args)], chstore.Named("m0", m0), chstore.Named("m1", m1))
	rows, err := c.db.Query(ctx, monthStoredStmt.With(monthStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("priced months: %w", err)
	}
	defer rows.Close()
	out := make([]pricedMonth, 0, about)
	var m pricedMonth
	s := &m.sum
	dest := []any{&m.key.obj.loc, &m.key.obj.dev, &m.key.month, &m.sameKind, &m.served, &s.Energy, &s.Money,
		&s.MoneyCom, &s.MoneyNon, &s.Confidence, &s.NImport, &s.NExport, &m.readings, &m.dated, &m.every}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan priced months: %w", err)
		}
		s.Loc, s.Dev = m.key.obj.loc, m.key.obj.dev
		out = append(out, m)
	}
	return out, rows.Err()
}

// keepMonths writes verified whole months as priced months of zone, tiered as the
// locations named are.
func (c *Pricer) keepMonths(ctx context.Context, scope kwhouse.Scope, dir, zone string, tiered map[string]bool, months []pricedMonth) error {
	if len(months) == 0 {
		return nil
	}
	slices.SortFunc(months, func(a, b pricedMonth) int { return sumBefore(&a.sum, &b.sum) })
	ver, err := c.buckets.versions.Next(ctx, len(months))
	if err != nil {
		return fmt.Errorf("versions of priced months: %w", err)
	}
	err = c.db.InsertRows(ctx, insertMonthsStmt, len(months), func(i int) []any {
		m := months[i]
		s := m.sum
		return []any{scope.AccountID, scope.LiveByte(), m.key.obj.loc, m.key.obj.dev, dir, dateOf(m.key.month), zone,
			boolByte(tiered[m.key.obj.loc]), m.served, s.NImport, s.NExport, s.Energy, s.Money, s.MoneyCom, s.MoneyNon,
			s.Confidence, m.readings, m.dated, m.every, ver + uint64(i)}
	})
	if err != nil {
		return fmt.Errorf("write priced months: %w", err)
	}
	return nil
}
