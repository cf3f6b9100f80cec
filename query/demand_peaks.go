package query

import (
	"context"
	"fmt"
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
// demand_peaks with a fingerprint of the reading change counts of the month's dates they
// were measured under (demand_counts), and served while it is the current one: while every
// one of those dates' counts is. Those of other months are
// measured from the readings (cost_demand.sql, charges.MonthPeaks) and kept.
var (
	demandStoredStmt = chstore.Register("query.demand_stored", "demand_peaks.sql: the kept demand peaks of some locations' months")
	demandCountsStmt = chstore.Register("query.demand_counts", "demand_peaks.sql: reading change counts per location and month")
	insertPeaksStmt  = chstore.Register("query.insert_demand_peaks", `INSERT INTO demand_peaks (account_id, live_mode,
	location_id, direction, month_start, tariff_key, peaks, readings_seen, version) VALUES`)
	demandStoredSQL = renderFixed("demand_stored")
	demandCountsSQL = renderFixed("demand_counts")
)

// locationPeaks are the demand peaks of an answer by location, then by tariff and month.
type locationPeaks map[string]map[charges.PeakKey][]float64

// monthReach names a local month of a tariff zone (the day number of its first local
// date) whose kept peaks hold while the reading change counts reaching its local days
// and the last two of the month before are unchanged (count_ranges in buckets.sql, the
// one definition of which local days a count reaches; demand_counts): its peaks are
// measured from the readings starting in [its start − demandLookback, its end), and the
// local day of its start − demandLookback is the month before's last, or the one before
// that when the last lasts 23 hours. So readings of a London April leave March as kept;
// 1 April UTC is also 31 March in New York, so there they count for March.
type monthReach struct {
	zone  string
	month uint32
}

func reachOf(m charges.TariffMonth) monthReach {
	return monthReach{zone: m.Tariff.Zone.String(), month: localDayNumber(m.Month.Start, m.Tariff.Zone)}
}

// localDayNumber is the day number (days since 1970-01-01) of t's local date in zone.
func localDayNumber(t time.Time, zone *time.Location) uint32 {
	y, mo, d := t.In(zone).Date()
	return uint32(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// keptKeyPrefix marks the tariff key of peaks kept under the fingerprint of the counts of
// their monthReach. Peaks kept without it were kept under other counts (other dates, or a
// plain sum, which two replicas answering in turn can leave equal while a day changed):
// they are never served, only measured again.
const keptKeyPrefix = "f:"

// keptPeak is a row of demand_stored.
type keptPeak struct {
	peaks []float64
	seen  uint64
}

type keptKey struct {
	loc string
	key charges.PeakKey
}

// demandPeaks returns the peaks of every month in need (by location): kept peaks whose
// month's readings are unchanged, the others measured from the readings and kept (with
// priced buckets off: all measured, nothing kept).
func (c *Pricer) demandPeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth) (locationPeaks, error) {
	out := make(locationPeaks, len(need))
	for loc := range need {
		out[loc] = map[charges.PeakKey][]float64{}
	}
	if c.buckets == nil {
		return out, c.measurePeaks(ctx, scope, dir, need, out)
	}
	kept, counts, err := c.keptPeaks(ctx, scope, dir, need)
	if err != nil {
		return nil, err
	}
	stale := map[string][]charges.TariffMonth{}
	for loc, ms := range need {
		for _, m := range ms {
			k := m.PeakKey()
			if p, ok := kept[keptKey{loc, k}]; ok && p.seen == counts[loc][reachOf(m)] {
				out[loc][k] = p.peaks
				continue
			}
			stale[loc] = append(stale[loc], m)
		}
	}
	if err := c.measurePeaks(ctx, scope, dir, stale, out); err != nil {
		return nil, err
	}
	return out, c.keepPeaks(ctx, scope, dir, stale, out, counts)
}

// keptPeaks reads the kept peaks of need's months beside the reading change counts
// reaching them now, side by side.
func (c *Pricer) keptPeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth) (
	map[keptKey]keptPeak, map[string]map[monthReach]uint64, error) {
	locs := make([]string, 0, len(need))
	var m0, m1 int64
	for loc, ms := range need {
		if len(ms) == 0 {
			continue
		}
		locs = append(locs, loc)
		for _, m := range ms {
			if s := m.Month.Start.Unix(); m0 == 0 || s < m0 {
				m0 = s
			}
			m1 = max(m1, m.Month.Start.Unix())
		}
	}
	if len(locs) == 0 {
		return nil, nil, nil
	}
	sort.Strings(locs)
	base := []any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()), chstore.Named("dir", dir)}
	var kept map[keptKey]keptPeak
	var counts map[string]map[monthReach]uint64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		kept, err = c.storedPeaks(withLocsChained(gctx, locs, nil), append(base, chstore.Named("kept_prefix", keptKeyPrefix),
			chstore.Named("m0", uint32(m0)), chstore.Named("m1", uint32(m1))))
		return err
	})
	g.Go(func() (err error) { counts, err = c.monthCounts(gctx, base, need); return err })
	return kept, counts, g.Wait()
}

func (c *Pricer) storedPeaks(ctx context.Context, args []any) (map[keptKey]keptPeak, error) {
	rows, err := c.db.Query(ctx, demandStoredStmt.With(demandStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("kept demand peaks: %w", err)
	}
	defer rows.Close()
	out := map[keptKey]keptPeak{}
	for rows.Next() {
		var loc, key string
		var month uint32
		var p keptPeak
		if err := rows.Scan(&loc, &month, &key, &p.peaks, &p.seen); err != nil {
			return nil, fmt.Errorf("scan kept demand peaks: %w", err)
		}
		if tariff, ok := strings.CutPrefix(key, keptKeyPrefix); ok {
			out[keptKey{loc, charges.PeakKey{Tariff: tariff, Month: int64(month)}}] = p
		}
	}
	return out, rows.Err()
}

// monthCounts adds up the reading change counts reaching each month of need (reachOf),
// one demand_counts query per tariff zone, side by side.
func (c *Pricer) monthCounts(ctx context.Context, base []any, need map[string][]charges.TariffMonth) (map[string]map[monthReach]uint64, error) {
	type zoneNeed struct {
		locs   []string
		lo, hi time.Time
	}
	zones := map[string]*zoneNeed{}
	for loc, ms := range need {
		for _, m := range ms {
			name := m.Tariff.Zone.String()
			z := zones[name]
			if z == nil {
				z = &zoneNeed{lo: m.Month.Start, hi: m.Month.End}
				zones[name] = z
			}
			if len(z.locs) == 0 || z.locs[len(z.locs)-1] != loc {
				z.locs = append(z.locs, loc)
			}
			z.lo, z.hi = minTime(z.lo, m.Month.Start), maxTime(z.hi, m.Month.End)
		}
	}
	out := map[string]map[monthReach]uint64{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for name, z := range zones {
		g.Go(func() error {
			sums, err := c.zoneMonthCounts(gctx, base, name, z.locs, z.lo, z.hi)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for loc, ms := range need {
				for _, m := range ms {
					if r := reachOf(m); r.zone == name {
						if out[loc] == nil {
							out[loc] = map[monthReach]uint64{}
						}
						out[loc][r] = sums.reaching(loc, r.month)
					}
				}
			}
			return nil
		})
	}
	return out, g.Wait()
}

// monthSums are a zone's demand_counts rows: the fingerprints of the counts of each
// location's local month (by the day number of its first date), its last two days (tail)
// apart; fingerprints add up (modulo 2^64) as the days' counts do.
type monthSums map[string]map[[2]uint32]uint64

// reaching is the fingerprint of the counts reaching the month starting on day number
// month: its days' and the last two days' of the month before.
func (s monthSums) reaching(loc string, month uint32) uint64 {
	prev := time.Unix(int64(month)*86400, 0).UTC().AddDate(0, -1, 0).Unix() / 86400
	ls := s[loc]
	return ls[[2]uint32{month, 0}] + ls[[2]uint32{month, 1}] + ls[[2]uint32{uint32(prev), 1}]
}

// zoneMonthCounts reads demand_counts for locs in zone over the local months of [lo, hi)
// and the two days before.
func (c *Pricer) zoneMonthCounts(ctx context.Context, base []any, zone string, locs []string, lo, hi time.Time) (monthSums, error) {
	sort.Strings(locs)
	date := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	ctx = withLocsChained(ctx, locs, nil) // untiered: each count reaches its own days only
	u0 := date(lo.Add(-3 * demandLookback * time.Second))
	args := append(base[:len(base):len(base)], chstore.Named("tz", zone), chstore.Named("devices", false),
		chstore.Named("u0", u0), chstore.Named("u0_chained", u0), chstore.Named("u1", date(hi.Add(demandLookback*time.Second))),
		chstore.Named("p0", "1970-01-01"), chstore.Named("p1", "1970-01-01"))
	rows, err := c.db.Query(ctx, demandCountsStmt.With(demandCountsSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("reading change counts of demand months: %w", err)
	}
	defer rows.Close()
	out := monthSums{}
	for rows.Next() {
		var loc string
		var month uint32
		var tail uint8
		var n uint64
		if err := rows.Scan(&loc, &month, &tail, &n); err != nil {
			return nil, fmt.Errorf("scan reading change counts: %w", err)
		}
		if out[loc] == nil {
			out[loc] = map[[2]uint32]uint64{}
		}
		out[loc][[2]uint32{month, uint32(tail)}] += n
	}
	return out, rows.Err()
}

// demandChunk bounds the locations whose months of readings one query reads and Go holds
// at once (a location's year of half-hourly readings is about 1 MB in Go).
const demandChunk = 100

// measurePeaks measures the peaks of the months in need from their readings into out:
// demandChunk locations a query, fleetParallel queries at once.
func (c *Pricer) measurePeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth, out locationPeaks) error {
	ids := make([]string, 0, len(need))
	for id, ms := range need {
		if len(ms) > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for from := 0; from < len(ids); from += demandChunk {
		chunk := ids[from:min(from+demandChunk, len(ids))]
		g.Go(func() error {
			var lo, hi time.Time
			for _, id := range chunk {
				for _, m := range need[id] {
					if s := m.Month.Start.Add(-demandLookback * time.Second); lo.IsZero() || s.Before(lo) {
						lo = s
					}
					if m.Month.End.After(hi) {
						hi = m.Month.End
					}
				}
			}
			readings, err := c.demandReadings(gctx, scope, chunk, dir, lo, hi)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range chunk {
				for _, m := range need[id] {
					out[id][m.PeakKey()] = charges.MonthPeaks(m.Tariff, m.Month, readings[id])
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// keepPeaks writes the measured peaks of the months in measured under the counts read
// before measuring them.
func (c *Pricer) keepPeaks(ctx context.Context, scope kwhouse.Scope, dir string, measured map[string][]charges.TariffMonth,
	peaks locationPeaks, counts map[string]map[monthReach]uint64) error {
	type row struct {
		loc  string
		m    charges.TariffMonth
		seen uint64
	}
	var rows []row
	for loc, ms := range measured {
		for _, m := range ms {
			rows = append(rows, row{loc, m, counts[loc][reachOf(m)]})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	ver, err := c.buckets.versions.Next(ctx, len(rows))
	if err != nil {
		return fmt.Errorf("versions of demand peaks: %w", err)
	}
	err = c.db.InsertRows(ctx, insertPeaksStmt, len(rows), func(i int) []any {
		r := rows[i]
		k := r.m.PeakKey()
		return []any{scope.AccountID, scope.LiveByte(), r.loc, dir, r.m.Month.Start.UTC(), keptKeyPrefix + k.Tariff, peaks[r.loc][k], r.seen, ver + uint64(i)}
	})
	if err != nil {
		return fmt.Errorf("keep demand peaks: %w", err)
	}
	return nil
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
	ts, err := c.tariffs.FleetChargesOf(ctx, scope, ids, dir)
	if err != nil {
		return err
	}
	need := map[string][]charges.TariffMonth{}
	for id, lts := range ts {
		if ms := charges.DemandMonths(lts, from, to, true); len(ms) > 0 {
			need[id] = ms
		}
	}
	_, err = c.demandPeaks(ctx, scope, dir, need)
	return err
}
