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
	latestMonthsStmt = chstore.Register("query.bucket_months_latest", "buckets.sql: a batch's months holding two versions of a bucket, summed again from the latest")
	countMonthsStmt  = chstore.Register("query.count_months", "buckets.sql: the change counts of a batch's days summed per local month")
	bucketMonthsSQL  = renderFixed("bucket_months")
	latestMonthsSQL  = renderFixed("bucket_months_latest")
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
	chunks := 0
	for _, ids := range byZone {
		chunks += (len(ids) + fleetChunk - 1) / fleetChunk
	}
	printsShareOf(ctx).expect(chunks) // each chunk publishes its month prints (keptMonths)
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

// chunkMonths makes the months of some locations of one zone, tiered or not: whole months
// kept in priced_months that hold now as stored (keptMonths), the others by wholeMonths,
// which keeps the whole months it verifies.
func (c *Pricer) chunkMonths(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, zone string, ids []string,
	tiered map[string]bool) ([]fleetSum, map[monthKey]bool, error) {
	z, err := catalog.LoadZone(zone)
	if err != nil {
		return nil, nil, fmt.Errorf("zone of a fleet batch: %w", err)
	}
	run := dayRunOf(daily.Start, daily.End, z)
	b, chained := chunkBatch(zone, ids, tiered)
	out, done, err := c.keptMonths(withLocsChained(ctx, ids, chained), stateArgs(scope, daily, b, run), z, ids, wholeMonthsOf(run, z))
	if err != nil {
		return nil, nil, err
	}
	stale := map[monthKey]bool{}
	var keep []pricedMonth
	for _, seg := range monthSegments(run, z, ids, done) {
		sb, sc := chunkBatch(zone, seg.ids, tiered)
		sums, st, verified, err := c.wholeMonths(withLocsChained(ctx, sb.ids, sc), scope, daily, sb, z, seg.run)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range sums {
			if !done[monthKey{objKey{loc: s.Loc}, monthOf(dayNumber(time.Unix(int64(s.Key), 0).In(z)))}] {
				out = append(out, s)
			}
		}
		for k := range st {
			if !done[monthKey{objKey{loc: k.obj.loc}, k.month}] {
				stale[k] = true
			}
		}
		for _, m := range verified {
			if !done[monthKey{objKey{loc: m.key.obj.loc}, m.key.month}] {
				keep = append(keep, m)
			}
		}
	}
	if err := c.keepMonths(ctx, scope, daily.Direction, zone, tiered, keep); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b fleetSum) int { return sumBefore(&a, &b) })
	return out, stale, nil
}

// chunkBatch is the batch of locations ids of zone, tiered when any of them is, and its
// tiered ones (sent as _chained: withLocsChained).
func chunkBatch(zone string, ids []string, tiered map[string]bool) (fleetBatch, []string) {
	var chained []string
	for _, id := range ids {
		if tiered[id] {
			chained = append(chained, id)
		}
	}
	// tiered: the counts are read from a tier chain's start (stateArgs).
	return fleetBatch{zone: zone, tiered: len(chained) > 0, ids: ids}, chained
}

// monthSegment is a run of consecutive local months that some locations of a chunk read
// from buckets (wholeMonths).
type monthSegment struct {
	run dayRun
	ids []string
}

// monthSegments groups the months of run's window that locations ids do not have done
// (keptMonths: a month partly in the window never is) into runs of consecutive months,
// each with the locations that need one of its months.
func monthSegments(run dayRun, zone *time.Location, ids []string, done map[monthKey]bool) []monthSegment {
	var out []monthSegment
	var cur *monthSegment
	var m1 uint32
	for m := monthOf(dayNumber(run.first)); m <= dayNumber(run.last()); m = monthEnd(m) + 1 {
		var need []string
		for _, id := range ids {
			if !done[monthKey{objKey{loc: id}, m}] {
				need = append(need, id)
			}
		}
		if len(need) == 0 {
			cur = nil
			continue
		}
		if cur == nil {
			out = append(out, monthSegment{run: dayRun{w0: maxTime(run.w0, localMidnightOf(m, zone))}})
			cur = &out[len(out)-1]
		}
		cur.ids = mergeIDs(cur.ids, need)
		m1 = m
		cur.run.w1 = minTime(run.w1, localMidnightOf(monthEnd(m1)+1, zone))
	}
	for i := range out {
		out[i].run = dayRunOf(out[i].run.w0, out[i].run.w1, zone)
	}
	return out
}

// mergeIDs is the union of two sorted lists of ids, sorted.
func mergeIDs(a, b []string) []string {
	out := append(append(make([]string, 0, len(a)+len(b)), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// wholeMonths serves the local months of a run of b's locations (one zone; ctx carries
// them as _locs and the tiered ones as _chained: withLocsChained) whose every priced
// bucket is valid from sums made in ClickHouse, without reading their days' money: a
// month (within the run) is valid as a whole when it holds one version of each bucket,
// all priced in the zone and the location's tiering, each under exactly the counts its
// day depends on now, and no day without a bucket has readings counted — the per-day rule
// of bucket_states.go on every day, with only each day's counts moved. Nothing is assumed of the order of the
// two reads or of the replicas that answer them (docs/costs.md, "MONTH and NONE
// answers"). It returns the valid months' sums (keyed by a local midnight of their month),
// the months that must be made day by day, and the valid months the window covers whole
// as priced months to keep, under the reach fingerprints count_months read with the counts
// that verified them.
func (c *Pricer) wholeMonths(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	zone *time.Location, run dayRun) ([]fleetSum, map[monthKey]bool, []pricedMonth, error) {
	args := stateArgs(scope, daily, b, run)
	var months []monthRow
	var counts monthCounts
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if months, err = c.bucketMonths(gctx, bucketMonthsStmt.With(bucketMonthsSQL), args, len(b.ids)*13); err != nil {
			return err
		}
		months, err = c.latestMonths(gctx, scope, daily, b, zone, run, months)
		return err
	})
	g.Go(func() (err error) { counts, err = c.countMonths(gctx, reachArgs(args, run)); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	whole := map[uint32]bool{}
	for _, m := range wholeMonthsOf(run, zone) {
		whole[m] = true
	}
	d0 := dayNumber(run.first)
	var out []fleetSum
	var verified []pricedMonth
	stale := map[monthKey]bool{}
	stored := make(map[monthKey]bool, len(months))
	for _, m := range months {
		stored[m.key] = true
		if !m.valid(counts) {
			stale[m.key] = true
			continue
		}
		if whole[m.key.month] {
			verified = append(verified, verifiedMonth(m.key, m.served, m.sum, counts))
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
	for k := range counts.reach.readings { // records near a month without any in its days
		if whole[k.month] && !stored[k] && !stale[k] {
			verified = append(verified, verifiedMonth(k, 0, fleetSum{Loc: k.obj.loc, Dev: k.obj.dev}, counts))
		}
	}
	return out, stale, verified, nil
}

// reachArgs are a run's state arguments with records and price changes read from its first
// day - chstore.ReachBefore days (count_months: the reach of its first month; the counts of the run's days
// are the same).
func reachArgs(args []any, run dayRun) []any {
	from := dateOf(dayNumber(run.first) - chstore.ReachBefore).Format(time.DateOnly)
	out := slices.Clone(args)
	for i, a := range out {
		if n, ok := a.(chstore.NamedArg); ok {
			if v, _ := n.Value.(string); n.Name == "u0" || n.Name == "p0" || (n.Name == "u0_chained" && v > from) {
				out[i] = chstore.Named(n.Name, from)
			}
		}
	}
	return out
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
	if m.twoVersions() || m.sameKind != 1 || m.readingsPrint != counts.readings[m.key] {
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

// latestMonths reads again, each bucket's latest version only (bucket_months_latest), the
// months of months (bucket_months of run) that hold two versions of a bucket: one priced
// again (by the background pricer, every pass, on a live fleet) until ClickHouse merges
// them. It reads the run's months from the first such month to the last, for the batch's
// locations, and returns months with those months replaced.
func (c *Pricer) latestMonths(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch, zone *time.Location,
	run dayRun, months []monthRow) ([]monthRow, error) {
	var m0, m1 uint32
	found := false
	for _, m := range months {
		if m.twoVersions() {
			if !found || m.key.month < m0 {
				m0 = m.key.month
			}
			m1, found = max(m1, m.key.month), true
		}
	}
	if !found {
		return months, nil
	}
	again := dayRunOf(maxTime(run.w0, localMidnightOf(m0, zone)), minTime(run.w1, localMidnightOf(monthEnd(m1)+1, zone)), zone)
	latest, err := c.bucketMonths(ctx, latestMonthsStmt.With(latestMonthsSQL), stateArgs(scope, daily, b, again), len(b.ids))
	if err != nil {
		return nil, err
	}
	out := make([]monthRow, 0, len(months))
	for _, m := range months {
		if m.key.month < m0 || m.key.month > m1 {
			out = append(out, m)
		}
	}
	return append(out, latest...), nil
}

// twoVersions says whether m counted a day's bucket twice: an older version not merged yet.
func (m monthRow) twoVersions() bool {
	return uint64(bits.OnesCount64(m.mask)) != m.days
}

// bucketMonths reads bucket_months or bucket_months_latest (stmt).
func (c *Pricer) bucketMonths(ctx context.Context, stmt chstore.Statement, args []any, about int) ([]monthRow, error) {
	rows, err := c.db.Query(ctx, stmt, args...)
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
		reach: newReachPrints(0)}
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
