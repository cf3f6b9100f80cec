package query

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"golang.org/x/sync/errgroup"
)

var (
	bucketMonthsStmt = chstore.Register("query.bucket_months", "buckets.sql: a batch's latest priced buckets summed per local month")
	countMonthsStmt  = chstore.Register("query.count_months", "buckets.sql: the change counts of a batch's days summed per local month")
	bucketMonthsSQL  = renderFixed("bucket_months")
	countMonthsSQL   = renderFixed("count_months")
)

// monthKey names a local month of an object: its first day as a day number.
type monthKey struct {
	obj   objKey
	month uint32
}

// monthRow is a row of bucket_months (buckets.sql): an object's latest buckets of a local
// month summed.
type monthRow struct {
	key          monthKey
	days, served uint64 // rows (one a day unless a bucket has two versions), non-empty rows
	mask         uint64 // bit n: day n of the month has a bucket
	sameKind     uint8
	// The counts each row was priced under as the month's fingerprints (count_months in
	// buckets.sql), and the sum of the weights of the days that have a row.
	readingsPrint, pricesPrint, weights uint64
	sum                                 fleetSum
}

// monthCounts are the rows of count_months (buckets.sql): the records written on each
// object's days of a local month, as the month's fingerprint; each location's dated price
// changes of a local month as each day's part of a fingerprint, by day of the month; and
// its price changes of every date.
type monthCounts struct {
	readings map[monthKey]uint64
	dated    map[monthKey]*[32]uint64 // objKey.dev is ""
	every    map[string]uint64
	// The fingerprints of each month's reach read from the same rows (every holds the
	// changes of every date): what a month verified here is kept under (priced_months.go).
	reach reachPrints
}

// batchMonths is what wholeMonths found for one batch: its valid months' sums and the
// months that must be made day by day.
type batchMonths struct {
	sums  []fleetSum
	stale map[monthKey]bool
}

// requestMonths reads the whole months of a MONTH or NONE answer (wholeMonths) per zone, in
// chunks of at most fleetChunk consecutive location ids, tiered and untiered together
// (fleetParallel chunks at a time), and hands each batch its locations' months (by index).
// Buckets and counts are stored in location order: a chunk of consecutive ids reads its
// own granules, while a batch (one tiering) of 1,000 ids spread over a fleet of 10,000
// read nearly every granule of priced_buckets and reading_changes.
func (c *Pricer) requestMonths(ctx context.Context, scope kwhouse.Scope, req FleetRequest, batches []fleetBatch) ([]batchMonths, error) {
	daily := req
	daily.Aggregation = AggregationDay
	out := make([]batchMonths, len(batches))
	of := map[string]int{} // location → its batch
	tiered := map[string]bool{}
	byZone := map[string][]string{}
	for i, b := range batches {
		out[i].stale = map[monthKey]bool{}
		for _, id := range b.ids {
			of[id], tiered[id] = i, b.tiered
		}
		byZone[b.zone] = append(byZone[b.zone], b.ids...)
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for zone, ids := range byZone {
		slices.Sort(ids)
		for chunk := range slices.Chunk(ids, fleetChunk) {
			g.Go(func() error {
				sums, stale, err := c.chunkMonths(gctx, scope, daily, zone, chunk, tiered)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				for _, s := range sums {
					out[of[s.Loc]].sums = append(out[of[s.Loc]].sums, s)
				}
				for k := range stale {
					out[of[k.obj.loc]].stale[k] = true
				}
				return nil
			})
		}
	}
	return out, g.Wait()
}

// chunkMonths is wholeMonths of some locations of one zone, tiered or not.
func (c *Pricer) chunkMonths(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, zone string, ids []string,
	tiered map[string]bool) ([]fleetSum, map[monthKey]bool, error) {
	z, err := catalog.LoadZone(zone)
	if err != nil {
		return nil, nil, fmt.Errorf("zone of a fleet batch: %w", err)
	}
	var chained []string
	for _, id := range ids {
		if tiered[id] {
			chained = append(chained, id)
		}
	}
	// tiered: the counts are read from a tier chain's start (stateArgs).
	b := fleetBatch{zone: zone, tiered: len(chained) > 0, ids: ids}
	return c.wholeMonths(withLocsChained(ctx, ids, chained), scope, daily, b, z, dayRunOf(daily.Start, daily.End, z))
}

// wholeMonths serves the local months of a run of b's locations (one zone; ctx carries
// them as _locs and the tiered ones as _chained: withLocsChained) whose every priced
// bucket is valid from sums made in ClickHouse, without reading their days' money: a
// month (within the run) is valid as a whole when it holds one version of each bucket,
// all priced in the zone and the location's tiering, each under exactly the counts its
// day depends on now, and no day without a bucket has readings counted — the per-day rule
// of bucket_states.go on every day, with only each day's counts moved. Nothing is assumed of the order of the
// two reads or of the replicas that answer them (docs/costs.md, "MONTH and NONE
// answers"). It returns the valid months' sums (keyed by a local midnight of their month)
// and the months that must be made day by day.
func (c *Pricer) wholeMonths(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	zone *time.Location, run dayRun) ([]fleetSum, map[monthKey]bool, error) {
	args := stateArgs(scope, daily, b, run)
	var months []monthRow
	var counts monthCounts
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { months, err = c.bucketMonths(gctx, args, len(b.ids)*13); return err })
	g.Go(func() (err error) { counts, err = c.countMonths(gctx, args); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	d0 := dayNumber(run.first)
	var out []fleetSum
	stale := map[monthKey]bool{}
	stored := make(map[monthKey]bool, len(months))
	for _, m := range months {
		stored[m.key] = true
		if !m.valid(counts) {
			stale[m.key] = true
			continue
		}
		if m.served > 0 {
			c.buckets.served.Add(int64(m.served))
			s := m.sum
			s.Key = uint32(localMidnightOf(max(m.key.month, d0), zone).Unix())
			out = append(out, s)
		}
	}
	for k := range counts.readings {
		if !stored[k] {
			stale[k] = true // readings of a month without a bucket
		}
	}
	return out, stale, nil
}

// valid says whether every day of m's month within the run is served as stored: one
// version a day (rows, days), all of the same kind, each bucket's counts equal to its
// day's now, and no reading counted on a day without a bucket. Counts are compared as
// the month's fingerprints (count_months in buckets.sql): equal when every day's count
// is, and unequal when any one day's differs, or a day without a bucket has readings
// counted; two or more days' differences cancel out with odds of about 2^-63. Price
// changes count only on the days that have a bucket: each bucket's day was priced under
// the location's changes of every date and of its own date.
func (m monthRow) valid(counts monthCounts) bool {
	if uint64(bits.OnesCount64(m.mask)) != m.days || m.sameKind != 1 || m.readingsPrint != counts.readings[m.key] {
		return false
	}
	prices := counts.every[m.key.obj.loc] * m.weights
	if dated := counts.dated[monthKey{objKey{loc: m.key.obj.loc}, m.key.month}]; dated != nil {
		for d, p := range dated {
			if m.mask&(1<<d) != 0 {
				prices += p
			}
		}
	}
	return m.pricesPrint == prices
}

// addDays adds figures by day of the month (days[i], counts[i]) to a, made when nil.
func addDays(a *[32]uint64, days []uint8, counts []uint64) *[32]uint64 {
	if a == nil {
		a = &[32]uint64{}
	}
	for i, d := range days {
		a[d%32] += counts[i]
	}
	return a
}

// monthEnd is the day number of the last day of the month starting on day number m.
func monthEnd(m uint32) uint32 {
	t := dateOf(m)
	return dayNumber(time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC))
}

// monthOf is the day number of the first day of the month of day number d.
func monthOf(d uint32) uint32 {
	t := dateOf(d)
	return dayNumber(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC))
}

// localMidnightOf is the start of local date d (a day number) in zone.
func localMidnightOf(d uint32, zone *time.Location) time.Time {
	t := dateOf(d)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, zone)
}

// bucketMonths reads bucket_months.
func (c *Pricer) bucketMonths(ctx context.Context, args []any, about int) ([]monthRow, error) {
	rows, err := c.db.Query(ctx, bucketMonthsStmt.With(bucketMonthsSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("priced buckets by month: %w", err)
	}
	defer rows.Close()
	out := make([]monthRow, 0, about)
	for rows.Next() {
		var m monthRow
		s := &m.sum
		if err := rows.Scan(&m.key.obj.loc, &m.key.obj.dev, &m.key.month, &m.days, &m.sameKind, &m.readingsPrint,
			&m.pricesPrint, &m.weights, &m.mask, &m.served, &s.Energy, &s.Money, &s.MoneyCom, &s.MoneyNon, &s.Confidence,
			&s.NImport, &s.NExport); err != nil {
			return nil, fmt.Errorf("scan priced buckets by month: %w", err)
		}
		s.Loc, s.Dev = m.key.obj.loc, m.key.obj.dev
		out = append(out, m)
	}
	return out, rows.Err()
}

// countMonths reads count_months.
func (c *Pricer) countMonths(ctx context.Context, args []any) (monthCounts, error) {
	out := monthCounts{readings: map[monthKey]uint64{}, dated: map[monthKey]*[32]uint64{}, every: map[string]uint64{},
		reach: newReachPrints()}
	out.reach.every = out.every
	rows, err := c.db.Query(ctx, countMonthsStmt.With(countMonthsSQL), args...)
	if err != nil {
		return out, fmt.Errorf("change counts by month: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind uint8
		var k monthKey
		var n, print uint64
		var days []uint8
		var dayPrints []uint64
		if err := rows.Scan(&kind, &k.obj.loc, &k.obj.dev, &k.month, &n, &print, &days, &dayPrints); err != nil {
			return out, fmt.Errorf("scan change counts by month: %w", err)
		}
		switch kind {
		case 3, 4:
			out.reach.add(kind-3, k, n, print)
		case 2:
			out.every[k.obj.loc] += n
		case 1:
			out.dated[k] = addDays(out.dated[k], days, dayPrints)
		default:
			out.readings[k] += print
		}
	}
	return out, rows.Err()
}
