package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/chstore"
)

// Demand peaks (docs/costs.md, "Bill charges"): a month's demand charge depends on the
// whole month's readings, so the peaks of each (location, tariff, local month) are kept in
// demand_peaks with the fingerprint of the location-level readings of the month's reach
// (monthPrints: the UTC dates from 4 days before the month's first to 2 days after its
// last) they were measured under, and served while it is the current one. Those of other
// months are measured from the readings (cost_demand.sql, charges.MonthPeaks) and kept.
var (
	demandStoredStmt = chstore.Register("query.demand_stored", "demand_peaks.sql: the kept demand peaks of some locations' months")
	insertPeaksStmt  = chstore.Register("query.insert_demand_peaks", `INSERT INTO demand_peaks (account_id, live_mode,
	location_id, direction, month_start, tariff_key, peaks, readings_seen, version) VALUES`)
	demandStoredSQL = renderFixed("demand_stored")
)

// reachOf is the key of m's reach among month prints: the location's location-level
// records (no device) and the day number of the month's first local date. A month's peaks
// are measured from the readings starting in [its start − charges.DemandLookback, its end): UTC
// dates from 2 days before its first local date (a zone up to 14 hours ahead) to the day
// after its last (12 hours behind), all inside the reach, so a reading that can change
// the peaks changes the fingerprint.
func reachOf(loc string, m charges.TariffMonth) monthKey {
	return monthKey{obj: objKey{loc: loc}, month: dayNumber(m.Month.Start.In(m.Tariff.Zone))}
}

// keptKeyPrefix marks the tariff key of peaks kept under the reach fingerprint of their
// month (reachOf). Peaks kept without it were kept under other counts (a month's own
// local dates, or a plain sum): they are never served, only measured again.
const keptKeyPrefix = "r:"

// tariffMonth names a demand month of a location: its start (Unix seconds) and its
// tariff's key (without keptKeyPrefix). Kept peaks, their days and the peaks a process
// holds are each found by it (findMonth).
type tariffMonth struct {
	month uint32
	key   string
}

func (t tariffMonth) id() tariffMonth { return t }

// tariffMonthOf is m's name.
func tariffMonthOf(m *charges.TariffMonth) tariffMonth {
	return tariffMonth{month: uint32(m.Month.Start.Unix()), key: m.Tariff.Key}
}

// findMonth is month m among a location's kept or held months, or nil. A location keeps a
// few tariffs' months, so a scan costs less than a map keyed by strings.
func findMonth[K interface{ id() tariffMonth }](ks []K, m *charges.TariffMonth) *K {
	want := tariffMonthOf(m)
	for i := range ks {
		if ks[i].id() == want {
			return &ks[i]
		}
	}
	return nil
}

// keptPeak is a kept month of a location (demand_stored): which, its peaks, the reach
// fingerprint they were measured under and the version they were kept as.
type keptPeak struct {
	tariffMonth
	peaks   []float64
	seen    uint64
	version uint64
}

// peakMonth is a demand month of a location with the fingerprint now of its reach, and
// whether demand_peaks keeps a version of it (kept: under another fingerprint when stale).
type peakMonth struct {
	loc  string
	m    *charges.TariffMonth
	now  uint64
	kept bool
}

// demandPeaks sets the peaks of every month in need (by location; TariffMonth.Peaks):
// kept peaks whose month's readings are unchanged (held by this Pricer, else read from
// demand_peaks), the others measured from the readings and kept after the answer
// (keepPeaks; with priced buckets off: all measured, nothing kept). The kept peaks of the locations this Pricer holds none of
// (a new process's first answer) are read while the fingerprints are, not after them.
// firstDays says whether a month measured for the first time keeps its days (a background
// pass, whose next pass measures it from its changed days; measureStale).
func (c *Pricer) demandPeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth, firstDays bool) error {
	if c.buckets == nil {
		stale := map[string][]*charges.TariffMonth{}
		for loc, ms := range need {
			for i := range ms {
				stale[loc] = append(stale[loc], &ms[i])
			}
		}
		_, err := c.measurePeaks(ctx, scope, dir, stale, nil)
		return err
	}
	base := []any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()), chstore.Named("dir", dir)}
	held := c.buckets.peaks.held(scope, dir, need)
	var unheld []string
	fresh := 0 // the months of unheld
	for loc, ms := range need {
		if held[loc] == nil {
			unheld, fresh = append(unheld, loc), fresh+len(ms)
		}
	}
	var early map[string][]keptPeak
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { early, err = c.keptPeaks(gctx, base, unheld, need); return err })
	prints, err := c.reachReadings(ctx, base, need)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	got := make([]peakMonth, 0, fresh) // the months served from demand_peaks, held from now on
	var again, stale []peakMonth
	for loc, ms := range need {
		lp, hs := prints.at(loc), held[loc]
		for i := range ms {
			pm := peakMonth{loc: loc, m: &ms[i], now: lp.of(reachOf(loc, ms[i]))}
			if h := findMonth(hs, pm.m); h != nil && h.seen == pm.now {
				pm.m.Peaks = h.peaks
			} else if hs != nil {
				again = append(again, pm) // changed since held: another process may have kept it
			} else if pm.kept = findMonth(early[loc], pm.m) != nil; !servedKept(early[loc], pm) {
				stale = append(stale, pm)
			} else {
				got = append(got, pm)
			}
		}
	}
	got, stale, err = c.keptAgain(ctx, base, again, got, stale)
	if err != nil {
		return err
	}
	if err := c.measureStale(ctx, scope, dir, base, stale, firstDays); err != nil {
		return err
	}
	c.buckets.peaks.keep(scope, dir, append(got, stale...))
	return nil
}

// servedKept sets pm's peaks from the kept ones of its location (ks) when they were
// measured under its fingerprint now.
func servedKept(ks []keptPeak, pm peakMonth) bool {
	if p := findMonth(ks, pm.m); p != nil && p.seen == pm.now {
		pm.m.Peaks = p.peaks
		return true
	}
	return false
}

// keptAgain reads the kept peaks of the months again (held by this Pricer under another
// fingerprint) and adds those served to got, the others to stale. It reads those months
// only, not their locations' others: a live fleet's year re-reads its last month, one
// partition of demand_peaks, not twelve.
func (c *Pricer) keptAgain(ctx context.Context, base []any, again []peakMonth, got, stale []peakMonth) ([]peakMonth, []peakMonth, error) {
	if len(again) == 0 {
		return got, stale, nil
	}
	months := make(map[string][]charges.TariffMonth, len(again))
	locs := make([]string, 0, len(again))
	for i, pm := range again {
		if i == 0 || pm.loc != again[i-1].loc {
			locs = append(locs, pm.loc)
		}
		months[pm.loc] = append(months[pm.loc], *pm.m)
	}
	kept, err := c.keptPeaks(ctx, base, locs, months)
	if err != nil {
		return nil, nil, err
	}
	for _, pm := range again {
		if pm.kept = findMonth(kept[pm.loc], pm.m) != nil; servedKept(kept[pm.loc], pm) {
			got = append(got, pm)
		} else {
			stale = append(stale, pm)
		}
	}
	return got, stale, nil
}

// measureStale measures the peaks of the stale months and keeps them under their
// fingerprints now, after the answer (keepPeaks). A month demand_peaks keeps a version of is
// measured from its first day whose readings may have changed (dayPlans). One it keeps
// none of (its first measurement: a new location's, a backfilled history's) is measured
// whole; unless firstDays, reading neither kept days nor its dates' change counts, so its
// peaks are kept without its days (its next measurement keeps them): an answer with a
// backfilled location's year so reads its readings right after their fingerprints, not
// after a third statement. An answer with at most c.wholeStale stale months (a
// location's year, a small group's current month) measures them whole that way too.
func (c *Pricer) measureStale(ctx context.Context, scope kwhouse.Scope, dir string, base []any, stale []peakMonth, firstDays bool) error {
	if len(stale) == 0 {
		return nil
	}
	var kept []peakMonth
	for _, pm := range stale {
		if firstDays || (pm.kept && len(stale) > c.wholeStale) {
			kept = append(kept, pm)
		}
	}
	plans, err := c.dayPlans(ctx, base, kept)
	if err != nil {
		return err
	}
	byLoc := map[string][]*charges.TariffMonth{}
	for _, pm := range stale {
		byLoc[pm.loc] = append(byLoc[pm.loc], pm.m)
	}
	got, err := c.measurePeaks(ctx, scope, dir, byLoc, plans)
	if err != nil {
		return err
	}
	c.keepPeaks(ctx, scope, dir, stale, got)
	return nil
}

// wholeStaleMonths is the most stale demand months an answer measures whole rather than
// from their changed days: on 18.16 reading a location's year of half-hourly readings
// costs less than the statement before it that reads their kept days and dates' change
// counts (a time-of-use location's year by MONTH with charges, every month stale: p50
// 70–71 ms whole against 92–93 ms from the changed days, 40–48 ms without charges;
// docs/benchmarks.md "Bill charges").
const wholeStaleMonths = 12

// keptPeaks reads the kept peaks of the months of need of the locations locs from
// demand_peaks (all their months: those of one answer, read in one range).
func (c *Pricer) keptPeaks(ctx context.Context, base []any, locs []string, need map[string][]charges.TariffMonth) (map[string][]keptPeak, error) {
	if len(locs) == 0 {
		return nil, nil
	}
	var m0, m1 int64
	about := 0
	for _, loc := range locs {
		about += len(need[loc])
		for _, m := range need[loc] {
			if s := m.Month.Start.Unix(); m0 == 0 || s < m0 {
				m0 = s
			}
			m1 = max(m1, m.Month.Start.Unix())
		}
	}
	sort.Strings(locs)
	return c.storedPeaks(withLocsChained(ctx, locs, nil), append(base[:len(base):len(base)], chstore.Named("kept_prefix", keptKeyPrefix),
		chstore.Named("m0", uint32(m0)), chstore.Named("m1", uint32(m1))), len(locs), about)
}

// demandPrints are the fingerprints now of demand months' reaches: those the answer's
// buckets published (share), else those read for the demand peaks (read).
type demandPrints struct {
	share *printsShare
	read  reachPrints
}

// locationPrints are the fingerprints now of one location's demand months' reaches: the
// months [m0, m1] of the read its buckets published (shared, when ok), the others read.
type locationPrints struct {
	shared reachPrints
	m0, m1 uint32
	ok     bool
	read   reachPrints
}

// at is loc's fingerprints, taken from the share once.
func (p demandPrints) at(loc string) locationPrints {
	lp := locationPrints{read: p.read}
	lp.shared, lp.m0, lp.m1, lp.ok = p.share.of(loc)
	return lp
}

// of is the fingerprint now of k's reach (reachOf: the location's location-level records
// of the asked direction).
func (p locationPrints) of(k monthKey) uint64 {
	if p.covers(k) {
		return p.shared.asked(k)
	}
	return p.read.readings[k]
}

// covers says whether k's reach is among the shared months.
func (p locationPrints) covers(k monthKey) bool { return p.ok && k.month >= p.m0 && k.month <= p.m1 }

// reachReadings are the fingerprints now of the location-level records of need's months'
// reaches (reachOf): those the answer's buckets read and published (printsShare, when ctx
// carries one: waited for), the others read here for their locations (month_prints.sql,
// no tier chain: the records of dir only).
func (c *Pricer) reachReadings(ctx context.Context, base []any, need map[string][]charges.TariffMonth) (demandPrints, error) {
	share := printsShareOf(ctx)
	if share != nil {
		if err := share.wait(ctx); err != nil {
			return demandPrints{}, err
		}
	}
	var rest []string
	var d0, d1 uint32
	about := 0 // months to read
	all := demandPrints{share: share}
	for loc, ms := range need {
		missing := false
		lp := all.at(loc)
		for _, m := range ms {
			k := reachOf(loc, m)
			if lp.covers(k) {
				continue
			}
			missing, about = true, about+1
			if d0 == 0 || k.month < d0 {
				d0 = k.month
			}
			d1 = max(d1, k.month)
		}
		if missing {
			rest = append(rest, loc)
		}
	}
	if len(rest) == 0 {
		return all, nil
	}
	sort.Strings(rest)
	read, err := c.monthPrints(withLocsChained(ctx, rest, nil), append(base[:len(base):len(base)], chstore.Named("devices", false)),
		dateOf(d0).Format(time.DateOnly), dateOf(d1).Format(time.DateOnly), about)
	all.read = read
	return all, err
}

// storedPeaks reads demand_stored by location (locs of them, about months in all),
// keeping the latest version of each month (demand_peaks is a ReplacingMergeTree by
// version). A row is one entry of a version of a month's peaks; a version's entries come
// one after another (arrayJoin), so a row's month is the last one added unless its
// location, month or key differ, when it is found among its location's (a few tariffs'
// months: a scan) or added. The peaks are cut from one array.
func (c *Pricer) storedPeaks(ctx context.Context, args []any, locs, about int) (map[string][]keptPeak, error) {
	rows, err := c.db.Query(ctx, demandStoredStmt.With(demandStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("kept demand peaks: %w", err)
	}
	defer rows.Close()
	out := make(map[string][]keptPeak, locs)
	months := max(1, about/max(1, locs))
	var loc, key, lastLoc string
	var row keptPeak
	var n, entry uint32
	var peak float64
	var slab []float64
	cut := func() []float64 { // n entries of the slab
		if len(slab) < int(n) {
			slab = make([]float64, max(int(n), 1024))
		}
		p := slab[:n:n]
		slab = slab[n:]
		return p
	}
	var ks []keptPeak // lastLoc's
	last := -1        // the index of the month of the row before among ks
	dest := []any{&loc, &row.month, &key, &row.seen, &row.version, &n, &entry, &peak}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan kept demand peaks: %w", err)
		}
		if loc != lastLoc {
			ks, last = out[loc], -1
		}
		tariff := strings.TrimPrefix(key, keptKeyPrefix)
		i := last
		if i < 0 || ks[i].month != row.month || ks[i].key != tariff {
			i = slices.IndexFunc(ks, func(k keptPeak) bool { return k.month == row.month && k.key == tariff })
		}
		switch {
		case i < 0:
			if ks == nil {
				ks = make([]keptPeak, 0, months)
			}
			i, ks = len(ks), append(ks, keptPeak{tariffMonth: tariffMonth{month: row.month, key: tariff}, seen: row.seen, version: row.version, peaks: cut()})
			out[loc] = ks
		case row.version > ks[i].version:
			ks[i].seen, ks[i].version, ks[i].peaks = row.seen, row.version, cut()
		}
		lastLoc, last = loc, i
		if row.version == ks[i].version && int(entry) >= 1 && int(entry) <= len(ks[i].peaks) {
			ks[i].peaks[entry-1] = peak
		}
	}
	return out, rows.Err()
}

// measurePeaks measures the peaks of the months in need from their readings
// (TariffMonth.Peaks), each as its plan says (nil: the whole month): a query per
// demandChunk location-months of one reading window, fleetParallel queries at once. It
// returns what to keep of each month's measurement.
func (c *Pricer) measurePeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]*charges.TariffMonth,
	plans map[*charges.TariffMonth]*dayPlan) (map[*charges.TariffMonth]measured, error) {
	out := make(map[*charges.TariffMonth]measured, len(plans))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for _, ms := range need {
		for _, m := range ms {
			if plans[m].measuresNone() {
				out[m] = measureDays(m, plans[m], nil)
			}
		}
	}
	for _, ch := range demandChunks(need, plans) {
		g.Go(func() error {
			readings, err := c.demandReadings(gctx, scope, ch.ids, dir, ch.lo, ch.hi)
			if err != nil {
				return err
			}
			for i, id := range ch.ids {
				for _, m := range need[id] {
					if plans[m].measuresNone() {
						continue
					}
					got := measureDays(m, plans[m], charges.MonthReadings(readings[i], m.Month))
					mu.Lock()
					out[m] = got
					mu.Unlock()
				}
			}
			return nil
		})
	}
	return out, g.Wait()
}

// demandChunk is a run of locations whose months are measured by one query, from the
// readings starting in [lo, hi).
type demandChunk struct {
	ids    []string
	lo, hi time.Time
}

// demandChunkDays bounds the location-days of readings one query reads and Go holds at
// once (a location's month of half-hourly readings is about 90 KB in Go): 100 locations'
// years, 1,200 locations' month (and its day of lookback), or every location's last days
// of 10,000. A pricer pass after a day of readings measures the last days of one month
// of every location (dayPlans): 10,000 locations are a statement or two, not 9 or 100
// (each reads at least a granule per location, and waits at background priority while
// dashboards' queries run).
const demandChunkDays = 1200 * 32

// demandChunks cuts the locations of need with months to measure into chunks of one
// reading window each (the window of their months, sorted by it, then by id) and at most
// demandChunkDays location-days (a location with more is a chunk of its own): a location
// whose year is measured never widens the window of those whose last month is. A month's
// readings start from its plan's from (whole: a day before it); a month whose plan
// measures no day reads none.
func demandChunks(need map[string][]*charges.TariffMonth, plans map[*charges.TariffMonth]*dayPlan) []demandChunk {
	var all []demandChunk
	for id, ms := range need {
		ch := demandChunk{ids: []string{id}}
		for _, m := range ms {
			p := plans[m]
			if p.measuresNone() {
				continue
			}
			s := m.Month.Start.Add(-charges.DemandLookback)
			if p != nil {
				s = p.from
			}
			if ch.lo.IsZero() || s.Before(ch.lo) {
				ch.lo = s
			}
			if m.Month.End.After(ch.hi) {
				ch.hi = m.Month.End
			}
		}
		if !ch.lo.IsZero() {
			all = append(all, ch)
		}
	}
	slices.SortFunc(all, func(a, b demandChunk) int {
		return cmp.Or(a.lo.Compare(b.lo), a.hi.Compare(b.hi), strings.Compare(a.ids[0], b.ids[0]))
	})
	var out []demandChunk
	days := 0
	for _, ch := range all {
		n := int((ch.hi.Sub(ch.lo) + 24*time.Hour - 1) / (24 * time.Hour))
		last := len(out) - 1
		if last >= 0 && out[last].lo.Equal(ch.lo) && out[last].hi.Equal(ch.hi) && days+n <= demandChunkDays {
			out[last].ids = append(out[last].ids, ch.ids[0])
			days += n
			continue
		}
		out, days = append(out, ch), n
	}
	return out
}

// keptRow is a measured month's row of demand_peaks, copied from the answer's months
// before they are written back.
type keptRow struct {
	loc   string
	month time.Time
	key   string
	peaks []float64
	seen  uint64
	measured
}

// keepPeaks writes back, after the answer (writeBacks, as priced buckets are), the
// measured peaks of the months under the reach fingerprints read before measuring them.
// The answer bills from its own measurement, and this process's later ones from the peaks
// it holds (peakMemo), so none waits for the write: one that fails or is lost costs
// another process a measurement of those months, never a wrong bill. A backfilled
// location's year measured and kept on the answer's path took 72 ms at p50 against 35–40
// ms without charges (docs/benchmarks.md, "Bill charges").
func (c *Pricer) keepPeaks(ctx context.Context, scope kwhouse.Scope, dir string, months []peakMonth, got map[*charges.TariffMonth]measured) {
	rows := make([]keptRow, len(months))
	for i, r := range months {
		rows[i] = keptRow{loc: r.loc, month: r.m.Month.Start.UTC(), key: keptKeyPrefix + r.m.Tariff.Key, peaks: r.m.Peaks, seen: r.now,
			measured: got[r.m]}
	}
	c.buckets.writes.start(ctx, scope, func(ctx context.Context) error { return c.writePeaks(ctx, scope, dir, rows) })
}

// writePeaks inserts the kept rows into demand_peaks, versions from the shared clock.
func (c *Pricer) writePeaks(ctx context.Context, scope kwhouse.Scope, dir string, rows []keptRow) error {
	ver, err := c.buckets.versions.Next(ctx, len(rows))
	if err != nil {
		return fmt.Errorf("versions of demand peaks: %w", err)
	}
	err = c.db.InsertRows(ctx, insertPeaksStmt, len(rows), func(i int) []any {
		r := rows[i]
		return []any{scope.AccountID, scope.LiveByte(), r.loc, dir, r.month, r.key, r.peaks, r.seen, ver + uint64(i)}
	})
	if err != nil {
		return fmt.Errorf("keep demand peaks: %w", err)
	}
	return c.writeDays(ctx, scope, dir, rows, ver)
}

// keepFleetPeaks measures and keeps the stale demand peaks of every location of scope
// whose tariffs of direction dir have demand charges, for the local months overlapping
// [from, to): the background pricer's pass, so that answers rarely measure on their read
// path.
func (c *Pricer) keepFleetPeaks(ctx context.Context, scope kwhouse.Scope, dir string, from, to time.Time) error {
	if c.buckets == nil {
		return nil
	}
	locs, err := c.catalog.LocationInfos(ctx, scope, "")
	if err != nil {
		return err
	}
	ids := make([]string, len(locs))
	for i, l := range locs {
		ids[i] = l.ID
	}
	all, err := c.tariffs.OfFleet(ctx, scope)
	if err != nil {
		return err
	}
	need := map[string][]charges.TariffMonth{}
	for id, p := range all.Plans(ids, from.Unix(), to.Unix()) {
		_, ms, err := p.Owed(dir, from, to, true)
		if err != nil {
			return fmt.Errorf("charges of %s: %w", id, err)
		}
		if len(ms) > 0 {
			need[id] = slices.Clone(ms) // their peaks are set here
		}
	}
	return c.demandPeaks(ctx, scope, dir, need, true)
}
