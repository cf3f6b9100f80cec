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

// locationPeaks are the demand peaks of an answer by location, then by tariff and month.
type locationPeaks map[string]map[charges.PeakKey][]float64

// reachOf is the key of m's reach among month prints: the location's location-level
// records (no device) and the day number of the month's first local date. A month's peaks
// are measured from the readings starting in [its start − demandLookback, its end): UTC
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
	about := 0
	for loc, ms := range need {
		out[loc] = make(map[charges.PeakKey][]float64, len(ms))
		about += len(ms)
	}
	if c.buckets == nil {
		return out, c.measurePeaks(ctx, scope, dir, need, out)
	}
	kept, prints, err := c.keptPeaks(ctx, scope, dir, need, about)
	if err != nil {
		return nil, err
	}
	stale := map[string][]charges.TariffMonth{}
	for loc, ms := range need {
		for _, m := range ms {
			k := m.PeakKey()
			if p, ok := kept[keptKey{loc, k}]; ok && p.seen == prints[reachOf(loc, m)] {
				out[loc][k] = p.peaks
				continue
			}
			stale[loc] = append(stale[loc], m)
		}
	}
	if err := c.measurePeaks(ctx, scope, dir, stale, out); err != nil {
		return nil, err
	}
	return out, c.keepPeaks(ctx, scope, dir, stale, out, prints)
}

// keptPeaks reads the kept peaks of need's months (about in all) beside the fingerprints
// of their reaches now (reachReadings), side by side.
func (c *Pricer) keptPeaks(ctx context.Context, scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth, about int) (
	map[keptKey]keptPeak, map[monthKey]uint64, error) {
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
	var prints map[monthKey]uint64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		kept, err = c.storedPeaks(withLocsChained(gctx, locs, nil), append(base, chstore.Named("kept_prefix", keptKeyPrefix),
			chstore.Named("m0", uint32(m0)), chstore.Named("m1", uint32(m1))), about)
		return err
	})
	g.Go(func() (err error) {
		prints, err = c.reachReadings(gctx, base, need, about)
		return err
	})
	return kept, prints, g.Wait()
}

// reachReadings are the fingerprints now of the location-level records of need's months'
// reaches (reachOf): those the answer's buckets read and published (printsShare, when ctx
// carries one: waited for), the others read here for their locations (month_prints.sql,
// no tier chain: the records of dir only).
func (c *Pricer) reachReadings(ctx context.Context, base []any, need map[string][]charges.TariffMonth, about int) (map[monthKey]uint64, error) {
	share := printsShareOf(ctx)
	if share != nil {
		if err := share.wait(ctx); err != nil {
			return nil, err
		}
	}
	out := make(map[monthKey]uint64, about)
	var rest []string
	var d0, d1 uint32
	for loc, ms := range need {
		missing := false
		for _, m := range ms {
			k := reachOf(loc, m)
			if share != nil {
				if v, ok := share.lookup(k); ok {
					out[k] = v
					continue
				}
			}
			missing = true
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
		return out, nil
	}
	sort.Strings(rest)
	read, err := c.monthPrints(withLocsChained(ctx, rest, nil), append(base[:len(base):len(base)], chstore.Named("devices", false)),
		dateOf(d0).Format(time.DateOnly), dateOf(d1).Format(time.DateOnly), about)
	if err != nil {
		return nil, err
	}
	for k, v := range read.readings {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out, nil
}

// storedPeaks reads demand_stored into a map sized for about rows (a fleet's year is
// 12,000: growing the map step by step cost more than the rows), through one list of
// destinations.
func (c *Pricer) storedPeaks(ctx context.Context, args []any, about int) (map[keptKey]keptPeak, error) {
	rows, err := c.db.Query(ctx, demandStoredStmt.With(demandStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("kept demand peaks: %w", err)
	}
	defer rows.Close()
	out := make(map[keptKey]keptPeak, about)
	var loc, key string
	var month uint32
	var p keptPeak
	dest := []any{&loc, &month, &key, &p.peaks, &p.seen}
	for rows.Next() {
		p.peaks = nil // each row's own array
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan kept demand peaks: %w", err)
		}
		if tariff, ok := strings.CutPrefix(key, keptKeyPrefix); ok {
			out[keptKey{loc, charges.PeakKey{Tariff: tariff, Month: int64(month)}}] = p
		}
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

// keepPeaks writes the measured peaks of the months in measured under the reach
// fingerprints read before measuring them.
func (c *Pricer) keepPeaks(ctx context.Context, scope kwhouse.Scope, dir string, measured map[string][]charges.TariffMonth,
	peaks locationPeaks, prints map[monthKey]uint64) error {
	type row struct {
		loc  string
		m    charges.TariffMonth
		seen uint64
	}
	var rows []row
	for loc, ms := range measured {
		for _, m := range ms {
			rows = append(rows, row{loc, m, prints[reachOf(loc, m)]})
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
