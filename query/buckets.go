package query

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Priced buckets (docs/costs.md, "Priced buckets"): a location's (or device's) records of
// one direction that start in one local day, priced and kept in ClickHouse with the change
// counts they were priced under. A fleet answer is made of the buckets whose counts are
// still the current ones, the others priced now and written back, and the window's partial
// days at either end priced now (they are no bucket).
var insertBucketsStmt = chstore.Register("query.insert_buckets", `INSERT INTO priced_buckets (account_id, live_mode,
	location_id, device_id, direction, day, span_from, span_to, day_start, zone, tiered, empty, n_import, n_export, energy_wh, money,
	money_commodity, money_non_commodity, confidence, readings_seen, prices_seen, version) VALUES`)

// Versions gives increasing versions from a clock every kwhouse process shares: Next
// returns the first of n consecutive ones.
type Versions interface {
	Next(ctx context.Context, n int) (uint64, error)
}

// clockVersions are versions from the process's wall clock in nanoseconds (not the
// Pricer's injected time: versions only order writes of one bucket, and two writes of a
// bucket each carry the counts their values were priced under, so clocks that disagree
// cost a re-pricing, never a wrong answer).
type clockVersions struct{ now func() time.Time }

func (v clockVersions) Next(context.Context, int) (uint64, error) {
	return uint64(v.now().UnixNano()), nil
}

// bucketStore says how priced buckets are kept, and counts what they did.
type bucketStore struct {
	versions                    Versions
	served, priced, invalidated atomic.Int64
	writes                      writeBacks // buckets_write.go
	peaks                       peakMemo   // demand_memo.go
}

// BucketCounts are the priced buckets a Pricer served, priced and found stale, and its
// write-backs that failed (each costs a later answer the pricing of its buckets).
type BucketCounts struct{ Served, Priced, Invalidated, WritesFailed int64 }

// UsePricedBuckets turns priced buckets on or off; versions number the buckets written
// (nil: the wall clock). It is called once, before the Pricer serves.
func (c *Pricer) UsePricedBuckets(on bool, versions Versions) {
	c.buckets = nil
	if on {
		if versions == nil {
			versions = clockVersions{now: time.Now}
		}
		c.buckets = &bucketStore{versions: versions}
	}
}

// BucketCounts returns how many buckets c served, priced and found stale.
func (c *Pricer) BucketCounts() BucketCounts {
	if c.buckets == nil {
		return BucketCounts{}
	}
	return BucketCounts{Served: c.buckets.served.Load(), Priced: c.buckets.priced.Load(),
		Invalidated: c.buckets.invalidated.Load(), WritesFailed: c.buckets.writes.failed.Load()}
}

// localMidnight is the start of t's local day (ClickHouse's toStartOfDay in t's zone).
func localMidnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// nextDay is the start of the local day after the one starting at t.
func nextDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
}

// bucketSums prices a batch's records per local day of the window, from priced buckets
// where they are valid, and sums the days into the request's buckets; months is what
// requestMonths found for the batch (MONTH and NONE answers).
func (c *Pricer) bucketSums(ctx context.Context, scope kwhouse.Scope, req FleetRequest, b fleetBatch,
	plans map[string]tariffs.Plan, months batchMonths) ([]fleetSum, error) {
	zone, err := catalog.LoadZone(b.zone)
	if err != nil {
		return nil, fmt.Errorf("zone of a fleet batch: %w", err)
	}
	daily := req
	daily.Aggregation = AggregationDay
	run := dayRunOf(req.Start, req.End, zone)
	if req.Aggregation == AggregationDay {
		return c.keptDays(ctx, scope, daily, b, plans, zone, run)
	}
	sums, err := c.monthDays(ctx, scope, daily, b, plans, zone, run, months)
	if err != nil {
		return nil, err
	}
	return rollUp(req.Aggregation, sums, zone), nil
}

// monthDays returns what a MONTH or NONE answer sums of a batch over a run of days: each
// local month whose buckets are all valid as one sum made in ClickHouse (months, from
// requestMonths), the days of the other months as keptDays makes them, in (location,
// device, day) order.
func (c *Pricer) monthDays(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	plans map[string]tariffs.Plan, zone *time.Location, run dayRun, months batchMonths) ([]fleetSum, error) {
	out, stale := months.sums, months.stale
	if len(stale) == 0 {
		return out, nil
	}
	// The stale months' locations, from the first stale month to the end of the last.
	var ids []string
	from, to := run.end, run.first
	locs := map[string]bool{}
	for k := range stale {
		locs[k.obj.loc] = true
		from = minTime(from, localMidnightOf(k.month, zone))
		to = maxTime(to, nextDay(localMidnightOf(monthEnd(k.month), zone)))
	}
	for _, id := range b.ids {
		if locs[id] {
			ids = append(ids, id)
		}
	}
	sub := fleetBatch{zone: b.zone, tiered: b.tiered, ids: ids}
	days, err := c.keptDays(ctx, scope, daily, sub, plans, zone, dayRunOf(maxTime(run.w0, from), minTime(run.w1, to), zone))
	if err != nil {
		return nil, err
	}
	for _, d := range days {
		if stale[monthKey{objKey{d.Loc, d.Dev}, monthOf(dayNumber(time.Unix(int64(d.Key), 0).In(zone)))}] {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b fleetSum) int { return sumBefore(&a, &b) })
	return out, nil
}

// dayRun is the local days a window touches, [first, end), and the parts of its first
// and last days it covers when it starts or ends inside one: such a part is kept as a
// bucket of its own under its bounds (spans, by local date; a whole day has none).
type dayRun struct {
	first, end time.Time
	w0, w1     time.Time
	spans      map[string][2]uint32
}

// dayRunOf is the run of local days of zone that [w0, w1) touches.
func dayRunOf(w0, w1 time.Time, zone *time.Location) dayRun {
	r := dayRun{first: localMidnight(w0.In(zone)), w0: w0, w1: w1, spans: map[string][2]uint32{}}
	r.end = localMidnight(w1.In(zone))
	if r.end.Before(w1) {
		r.end = nextDay(r.end)
	}
	for d := r.first; d.Before(r.end); d = nextDay(d) {
		from, to := maxTime(d, w0), minTime(nextDay(d), w1)
		if !from.Equal(d) || !to.Equal(nextDay(d)) {
			r.spans[d.Format(time.DateOnly)] = [2]uint32{uint32(from.Unix()), uint32(to.Unix())}
		}
	}
	return r
}

// spanArgs binds the partial days' spans by day number (days since 1970-01-01; day 0, never
// asked, stands in for none: an empty array would be untyped).
func (r dayRun) spanArgs() []any {
	days, from, to := []uint32{0}, []uint32{0}, []uint32{0}
	for date, s := range r.spans {
		d, _ := time.Parse(time.DateOnly, date)
		days, from, to = append(days, uint32(d.Unix()/86400)), append(from, s[0]), append(to, s[1])
	}
	return []any{chstore.Named("span_days", days), chstore.Named("span_from", from), chstore.Named("span_to", to)}
}

// keptDays returns the day sums of a batch's locations over a run of days: valid buckets
// as stored, the others priced now and written back.
func (c *Pricer) keptDays(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	plans map[string]tariffs.Plan, zone *time.Location, run dayRun) ([]fleetSum, error) {
	first, end := run.first, run.end
	// Read before pricing: a write that lands meanwhile leaves the new buckets stale.
	ds, err := c.bucketStates(ctx, scope, daily, b, run)
	if err != nil {
		return nil, err
	}
	states := ds.stale // every day of the stale locations
	// The stale days of all stale locations are priced in one window: from the first to
	// the end of the last (a tiered location's later days are stale with it: buckets.sql).
	staleFrom := map[string]time.Time{} // location → its first bucket to price
	from, to := end, first
	for _, s := range states {
		if s.Valid == 1 {
			continue
		}
		if s.Stored == 1 {
			c.buckets.invalidated.Add(1)
		}
		day := time.Date(s.Day.Year(), s.Day.Month(), s.Day.Day(), 0, 0, 0, 0, zone)
		if f, ok := staleFrom[s.Loc]; !ok || day.Before(f) {
			staleFrom[s.Loc] = day
		}
		from, to = minTime(from, day), maxTime(to, nextDay(day))
	}
	var ids []string
	for _, id := range b.ids {
		if _, ok := staleFrom[id]; ok {
			ids = append(ids, id)
		}
	}
	// The stale days, whole; priced within the window (partial days priced as their parts).
	// The stale locations' valid days outside them are served too.
	dayFrom, dayTo := from, to
	from, to = maxTime(from, run.w0), minTime(to, run.w1)
	out := ds.served
	for _, s := range states {
		if s.Valid == 1 && s.Empty == 0 {
			if at := time.Unix(int64(s.DayStart), 0); at.Before(dayFrom) || !at.Before(dayTo) {
				out = append(out, s.sum())
			}
		}
	}
	c.buckets.served.Add(int64(len(out)))
	if len(ids) == 0 {
		return out, nil
	}
	sub := daily
	sub.Start, sub.End = from, to
	priced, err := c.priceBatch(ctx, scope, sub, fleetBatch{zone: b.zone, tiered: b.tiered, ids: ids}, plans)
	if err != nil {
		return nil, err
	}
	c.buckets.priced.Add(int64(len(priced)))
	// The write-back reads priced after the answer; the answer's sums are a copy (callers
	// sort theirs in place).
	c.keepBuckets(ctx, scope, daily, b, zone, run, dayFrom, dayTo, states, staleFrom, priced)
	return append(out, priced...), nil
}

// rollUp sums day sums into the request's buckets: local months (MONTH) or the window
// (NONE); DAY keeps them. Energy and money add up, confidence is the least, record counts add.
func rollUp(aggregation string, days []fleetSum, zone *time.Location) []fleetSum {
	if aggregation == AggregationDay {
		return days
	}
	type key struct {
		loc, dev string
		k        uint32
	}
	idx := map[key]int{}
	var out []fleetSum
	for _, d := range days {
		k := key{d.Loc, d.Dev, 0}
		if aggregation == AggregationMonth {
			t := time.Unix(int64(d.Key), 0).In(zone)
			k.k = uint32(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, zone).Unix())
		}
		i, ok := idx[k]
		if !ok {
			idx[k], i = len(out), len(out)
			out = append(out, fleetSum{Loc: d.Loc, Dev: d.Dev, Key: k.k, Confidence: d.Confidence})
		}
		o := &out[i]
		o.Energy, o.Money, o.MoneyCom, o.MoneyNon = o.Energy+d.Energy, o.Money+d.Money, o.MoneyCom+d.MoneyCom, o.MoneyNon+d.MoneyNon
		o.Confidence = min(o.Confidence, d.Confidence)
		o.NImport, o.NExport = o.NImport+d.NImport, o.NExport+d.NExport
	}
	return out
}
