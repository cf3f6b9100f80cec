package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/chstore"
)

// A stale month is measured again from its first changed day on (docs/costs.md, "Bill
// charges"): a local-clock interval lies in one local day (charges.DayPeaks), so the
// month's peak is the highest of its days' peaks, and a reading starting on a UTC date
// reaches no interval that starts more than an interval (at most an hour) before that
// date. Each kept month holds its days' peaks, the change count of every UTC date of its
// reach (reading_changes) read before they were measured, and its longest reading: the
// days before the first date whose count changed keep their peaks, the others are
// measured from the readings that can reach them, those starting from the longest
// reading before the first of them. A pricer pass after a day of readings so reads each
// location's last days, not its month.
var (
	demandDaysStmt  = chstore.Register("query.demand_days", "demand_days.sql: the days' peaks of stale kept demand months")
	demandDatesStmt = chstore.Register("query.demand_dates", "demand_days.sql: the change counts of demand months' reach dates now")
	insertDaysStmt  = chstore.Register("query.insert_demand_days", `INSERT INTO demand_days (account_id, live_mode,
	location_id, direction, month_start, tariff_key, day_peaks, reach_counts, longest, version) VALUES`)
	demandDaysSQL  = renderFixed("demand_days")
	demandDatesSQL = renderFixed("demand_dates")
)

// longestInterval is the longest demand interval (charges.Demand.Interval: 15, 30 or 60
// minutes): a reading reaches no interval starting this long before it or more.
const longestInterval = time.Hour

// dayPlan is how a stale month of days days is measured: from day first of
// charges.MonthDays on (0: the whole month; days: none), reading the readings that start from from; the kept peaks of the
// days before first (days × entries) and the longest reading they were measured from; the
// reach's change counts now, kept with the new peaks.
type dayPlan struct {
	days    int // the month's days
	first   int
	from    time.Time
	kept    []float64
	longest uint32
	counts  []uint64
}

// measured is a month's measurement to keep: every day's peaks (days × entries), the
// longest reading they were measured from and the reach counts read before.
type measured struct {
	days    []float64
	longest uint32
	counts  []uint64
}

// keptDays is a stored version of a month's days (demand_days.sql).
type keptDays struct {
	tariffMonth
	version uint64
	days    []float64
	counts  []uint64
	longest uint32
}

// reachDates is the first UTC date (day number) of m's reach, and how many dates it holds:
// [its first local date − chstore.ReachBefore days, its last + chstore.ReachAfter].
func reachDates(m *charges.TariffMonth) (uint32, int) {
	local := m.Month.Start.In(m.Tariff.Zone)
	first := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, time.UTC)
	d0 := dayNumber(first) - chstore.ReachBefore
	d1 := dayNumber(first.AddDate(0, 1, -1)) + chstore.ReachAfter
	return d0, int(d1-d0) + 1
}

// dayPlans plans the measurement of the stale months: from the first day their readings
// may have changed on where their days are kept under counts that say which, else whole.
// The counts now are read after the months' reach fingerprints (demandPeaks), so every
// write those count is counted here, and a month served later under them was measured
// with it.
func (c *Pricer) dayPlans(ctx context.Context, base []any, stale []peakMonth) (map[*charges.TariffMonth]*dayPlan, error) {
	if len(stale) == 0 {
		return nil, nil
	}
	var locs []string
	seen := make(map[string]bool, len(stale))
	var m0, m1, d0, d1 uint32
	for i, pm := range stale {
		if !seen[pm.loc] {
			seen[pm.loc], locs = true, append(locs, pm.loc)
		}
		s := uint32(pm.m.Month.Start.Unix())
		r0, n := reachDates(pm.m)
		if i == 0 {
			m0, m1, d0, d1 = s, s, r0, r0+uint32(n)-1
		}
		m0, m1, d0, d1 = min(m0, s), max(m1, s), min(d0, r0), max(d1, r0+uint32(n)-1)
	}
	slices.Sort(locs)
	ctx = withLocsChained(ctx, locs, nil)
	var kept map[string][]keptDays
	var now map[string]map[uint32]uint64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		kept, err = c.keptMonthDays(gctx, append(base[:len(base):len(base)], chstore.Named("kept_prefix", keptKeyPrefix),
			chstore.Named("m0", m0), chstore.Named("m1", m1)))
		return err
	})
	g.Go(func() (err error) {
		now, err = c.dateCounts(gctx, append(base[:len(base):len(base)], chstore.Named("d0", dateOf(d0).Format(time.DateOnly)),
			chstore.Named("d1", dateOf(d1).Format(time.DateOnly))), len(locs))
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	plans := make(map[*charges.TariffMonth]*dayPlan, len(stale))
	for _, pm := range stale {
		plans[pm.m] = planOf(pm.m, findMonth(kept[pm.loc], pm.m), now[pm.loc])
	}
	return plans, nil
}

// planOf plans m's measurement from its kept days k (nil: none) and its dates' counts now.
func planOf(m *charges.TariffMonth, k *keptDays, now map[uint32]uint64) *dayPlan {
	r0, n := reachDates(m)
	p := &dayPlan{from: m.Month.Start.Add(-charges.DemandLookback), counts: make([]uint64, n)}
	for i := range p.counts {
		p.counts[i] = now[r0+uint32(i)]
	}
	days := charges.MonthDays(m.Month, m.Tariff.Zone)
	p.days = len(days) - 1
	entries := len(m.Tariff.Demand)
	if k == nil || len(k.counts) != n || len(k.days) != (len(days)-1)*entries {
		return p
	}
	changed := n
	for i, c := range p.counts {
		if c != k.counts[i] {
			changed = i
			break
		}
	}
	p.first = len(days) - 1 // no date changed: every day's peaks hold
	if changed < n {
		reach := dateOf(r0 + uint32(changed)).Add(-longestInterval)
		p.first = 0
		for p.first < len(days)-1 && !days[p.first+1].After(reach) {
			p.first++
		}
	}
	if p.first > 0 {
		p.kept, p.longest = k.days[:p.first*entries], k.longest
		p.from = maxTime(p.from, days[p.first].Add(-time.Duration(k.longest)*time.Second))
	}
	return p
}

// measuresNone says whether the plan measures no day of its month: every day's peaks are
// kept, no reading is read.
func (p *dayPlan) measuresNone() bool { return p != nil && p.days > 0 && p.first == p.days }

// measureDays sets m's peaks from the readings of its location (those starting from
// plan.from at least, all when plan is nil): the days from plan.first measured, the others
// kept. It returns what to keep of them: nothing without a plan (no change counts were
// read to keep its days under).
func measureDays(m *charges.TariffMonth, plan *dayPlan, readings []charges.Reading) measured {
	if plan == nil {
		m.Peaks = charges.MonthPeaks(m.Tariff, m.Month, readings)
		return measured{}
	}
	entries := len(m.Tariff.Demand)
	out := measured{days: append([]float64{}, plan.kept...), longest: plan.longest, counts: plan.counts}
	var kept [][]float64 // plan.kept by day
	if entries > 0 {
		kept = slices.Collect(slices.Chunk(plan.kept, entries))
	}
	days := charges.DayPeaks(m.Tariff, m.Month, readings, plan.first)
	for _, d := range days {
		out.days = append(out.days, d...)
	}
	m.Peaks = charges.HighestOfDays(entries, kept, days)
	lo, hi := m.Month.Start.Add(-charges.DemandLookback), m.Month.End
	for _, r := range readings {
		if !r.Start.Before(lo) && r.Start.Before(hi) {
			out.longest = max(out.longest, uint32(r.End.Sub(r.Start)/time.Second))
		}
	}
	return out
}

// keptMonthDays reads demand_days: the latest stored version of each month's days by location.
func (c *Pricer) keptMonthDays(ctx context.Context, args []any) (map[string][]keptDays, error) {
	rows, err := c.db.Query(ctx, demandDaysStmt.With(demandDaysSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("kept demand days: %w", err)
	}
	defer rows.Close()
	out := map[string][]keptDays{}
	var loc, key string
	for rows.Next() {
		var k keptDays
		if err := rows.Scan(&loc, &k.month, &key, &k.version, &k.days, &k.counts, &k.longest); err != nil {
			return nil, fmt.Errorf("scan kept demand days: %w", err)
		}
		k.key = strings.TrimPrefix(key, keptKeyPrefix)
		ks := out[loc]
		i := 0
		for i < len(ks) && ks[i].tariffMonth != k.tariffMonth {
			i++
		}
		switch {
		case i == len(ks):
			out[loc] = append(ks, k)
		case k.version > ks[i].version:
			ks[i] = k
		}
	}
	return out, rows.Err()
}

// dateCounts reads demand_dates: the change counts now by location and UTC date.
func (c *Pricer) dateCounts(ctx context.Context, args []any, locs int) (map[string]map[uint32]uint64, error) {
	rows, err := c.db.Query(ctx, demandDatesStmt.With(demandDatesSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("demand reach date counts: %w", err)
	}
	defer rows.Close()
	out := make(map[string]map[uint32]uint64, locs)
	var loc string
	var date uint32
	var n uint64
	for rows.Next() {
		if err := rows.Scan(&loc, &date, &n); err != nil {
			return nil, fmt.Errorf("scan demand reach date counts: %w", err)
		}
		byDate := out[loc]
		if byDate == nil {
			byDate = make(map[uint32]uint64, 40)
			out[loc] = byDate
		}
		byDate[date] = n
	}
	return out, rows.Err()
}

// writeDays inserts the days of the kept rows measured by day into demand_days, under the
// versions of their demand_peaks rows, after them: a month whose days are lost is measured
// whole the next time, and its days, kept with the counts they were measured under, are
// never served as its peaks.
func (c *Pricer) writeDays(ctx context.Context, scope kwhouse.Scope, dir string, rows []keptRow, ver uint64) error {
	var idx []int
	for i, r := range rows {
		if r.days != nil {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	err := c.db.InsertRows(ctx, insertDaysStmt, len(idx), func(i int) []any {
		r := rows[idx[i]]
		return []any{scope.AccountID, scope.LiveByte(), r.loc, dir, r.month, r.key, r.days, r.counts, r.longest, ver + uint64(idx[i])}
	})
	if err != nil {
		return fmt.Errorf("keep demand days: %w", err)
	}
	return nil
}
