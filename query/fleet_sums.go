package query

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var (
	fleetStmt       = chstore.Register("query.fleet", "fleet.sql: the records of many locations priced and summed per group and bucket")
	fleetArraysStmt = chstore.Register("query.fleet_arrays", "fleet_arrays.sql: untiered fleet costs against packed timelines")
)

// fleetChunk bounds the locations one fleet query prices: its price segments are held in
// one hash table (about 750 rows a location for a month of hourly segments), so memory
// per query stays bounded however large the fleet.
const fleetChunk = 1000

// fleetSum is one row of fleet.sql or fleet_arrays.sql: a location's or device's records
// in one bucket.
type fleetSum struct {
	Loc, Dev           string
	Key                uint32
	Energy, Money      float64
	MoneyCom, MoneyNon float64
	Confidence         float64
	NImport, NExport   uint64
	KeyEnd             uint32 // a reading's end (RECORD rows; 0 for other buckets)
	TariffRate         uint8  // a reading's tariff rate (RECORD rows)
	Session, Reference string // a reading's references (RECORD rows with refs)
	Reach              uint32 // when the bucket's last record ends
	Dirty              uint8  // the group read two versions of a reading: its sums count both
}

// fleetBatch is a set of locations one query prices: one zone (local days and months are
// the zone's), tiered or not (tier counters need the records' order), at most fleetChunk.
type fleetBatch struct {
	zone   string
	tiered bool
	ids    []string
}

// fleetParallel is how many fleet queries run at once: two keep both cores of a small
// server busy through each query's single-threaded stages.
const fleetParallel = 2

// fleetTask is one fleet query: a batch, with its packed timelines or nil for the JOIN.
type fleetTask struct {
	batch fleetBatch
	fa    *fleetArrays
}

// fleetSums prices the records of locs per bucket of the request, fleetParallel batches at
// a time: from priced buckets where they are kept (buckets.go), else directly.
func (c *Pricer) fleetSums(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]fleetSum, error) {
	batches := fleetBatches(locs, plans)
	months := make([]batchMonths, len(batches))
	if c.buckets != nil && req.Aggregation != AggregationDay {
		var err error
		if months, err = c.requestMonths(ctx, scope, req, batches); err != nil {
			return nil, err
		}
	}
	results := make([][]fleetSum, len(batches))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	if c.buckets != nil {
		gctx = c.shareStates(gctx, req, batches)
	}
	for i, b := range batches {
		g.Go(func() error {
			var err error
			if c.buckets != nil {
				results[i], err = c.bucketSums(gctx, scope, req, b, plans, months[i])
			} else {
				results[i], err = c.priceBatch(gctx, scope, req, b, plans)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return mergeSums(results), nil
}

// sumBefore orders sums by location, device and bucket (day buckets as served are).
func sumBefore(a, b *fleetSum) int {
	if c := strings.Compare(a.Loc, b.Loc); c != 0 {
		return c
	}
	if c := strings.Compare(a.Dev, b.Dev); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// mergeSums joins the batches' sums: merged in (location, device, bucket) order when each
// batch's are in that order (served buckets are), so rows in id order need no sort;
// else one after another. A merge copies runs: each batch's sums that come before every
// other batch's next one go in one copy (a tiered batch of every tenth location leaves
// runs of nine locations' days).
func mergeSums(results [][]fleetSum) []fleetSum {
	n, sorted, nonEmpty := 0, true, 0
	for _, r := range results {
		n += len(r)
		sorted = sorted && sumsSorted(r)
		if len(r) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty == 1 { // one batch with sums (one zone, nothing tiered): nothing to join
		for _, r := range results {
			if len(r) > 0 {
				return r
			}
		}
	}
	out := make([]fleetSum, 0, n)
	if !sorted {
		for _, r := range results {
			out = append(out, r...)
		}
		return out
	}
	at := make([]int, len(results))
	for len(out) < n {
		best, next := -1, -1 // the batch whose sum comes first, and the one whose comes second
		for i, r := range results {
			if at[i] == len(r) {
				continue
			}
			switch {
			case best < 0 || sumBefore(&r[at[i]], &results[best][at[best]]) < 0:
				best, next = i, best
			case next < 0 || sumBefore(&r[at[i]], &results[next][at[next]]) < 0:
				next = i
			}
		}
		r, from, to := results[best], at[best], at[best]+1
		for to < len(r) && (next < 0 || sumBefore(&r[to], &results[next][at[next]]) < 0) {
			to++
		}
		out, at[best] = append(out, r[from:to]...), to
	}
	return out
}

// sumsSorted reports whether sums are in (location, device, bucket) order (by index: a
// comparison of copies moved 31,000 sums twice an answer).
func sumsSorted(sums []fleetSum) bool {
	for i := 1; i < len(sums); i++ {
		if sumBefore(&sums[i-1], &sums[i]) > 0 {
			return false
		}
	}
	return true
}

// priceBatch prices the records of a batch's locations in req's window and buckets. The
// rate periods its tariffs need are made sure of first, here: an answer served from
// priced buckets reads none.
func (c *Pricer) priceBatch(ctx context.Context, scope kwhouse.Scope, req FleetRequest, b fleetBatch,
	plans map[string]tariffs.Plan) ([]fleetSum, error) {
	mine := make(map[string]tariffs.Plan, len(b.ids))
	for _, id := range b.ids {
		mine[id] = plans[id]
	}
	if err := c.tariffs.EnsureFleetRates(ctx, scope, mine); err != nil {
		return nil, err
	}
	ts, err := c.fleetTasks(ctx, scope, b, plans)
	if err != nil {
		return nil, err
	}
	var out []fleetSum
	for _, t := range ts {
		sums, err := c.fleetPriced(ctx, scope, req, t, t.batch.ids, plans)
		if err != nil {
			return nil, err
		}
		out = append(out, sums...)
	}
	return out, nil
}

// fleetTasks splits a batch: untiered locations whose timelines fit as arrays go to
// fleet_arrays.sql, the others to the JOIN of fleet.sql.
func (c *Pricer) fleetTasks(ctx context.Context, scope kwhouse.Scope, b fleetBatch, plans map[string]tariffs.Plan) ([]fleetTask, error) {
	if b.tiered || c.joinOnly {
		return []fleetTask{{batch: b}}, nil
	}
	fa, packed, rest, err := c.fleetTimelines(ctx, scope, b, plans)
	if err != nil {
		return nil, err
	}
	var out []fleetTask
	if len(packed) > 0 {
		out = append(out, fleetTask{batch: fleetBatch{zone: b.zone, ids: packed}, fa: &fa})
	}
	if len(rest) > 0 {
		out = append(out, fleetTask{batch: fleetBatch{zone: b.zone, ids: rest}})
	}
	return out, nil
}

// fleetBatches splits locations by zone and tiering, in id order, into chunks.
func fleetBatches(locs map[string]catalog.Location, plans map[string]tariffs.Plan) []fleetBatch {
	ids := make([]string, 0, len(locs))
	for id := range locs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	open := map[[2]string]int{} // (zone, tiered) → index of its batch being filled
	var out []fleetBatch
	for _, id := range ids {
		b := fleetBatch{zone: locs[id].Timezone, tiered: plans[id].Tiered}
		k := [2]string{b.zone, fmt.Sprint(b.tiered)}
		i, ok := open[k]
		if !ok || len(out[i].ids) >= fleetChunk {
			out, i = append(out, b), len(out)
			open[k] = i
		}
		out[i].ids = append(out[i].ids, id)
	}
	return out
}

// fleetQuery runs fleet_arrays.sql for the locations ids of a task's batch with its packed
// timelines, or the JOIN of fleet.sql when the task has none; dedup says how. Every cost
// answer is such a query: an interval, session or instant one of one location (req.one).
func (c *Pricer) fleetQuery(ctx context.Context, scope kwhouse.Scope, req FleetRequest, t fleetTask, ids []string,
	dedup string, plans map[string]tariffs.Plan) ([]fleetSum, error) {
	b, fa := t.batch, t.fa
	bits := make([]uint16, len(b.ids))
	for i, id := range b.ids {
		bits[i] = plans[id].TariffBits()
	}
	args := append(req.one.named(), chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("locs", chstore.Set(ids)), chstore.Named("dir", req.Direction),
		chstore.Named("w0", uint32(req.Start.Unix())), chstore.Named("w1", uint32(req.End.Unix())),
		chstore.Named("tz", b.zone), chstore.Named("act_bits", bits))
	args = append(args, numberedLocations(b.ids)...)
	shape := req.one.shape(pricingShape{Aggregation: req.Aggregation, Devices: req.GroupBy == GroupDevice, Tiered: b.tiered,
		Dedup: dedup, Cluster: c.db.Cluster != ""})
	name, stmt := "fleet", fleetStmt
	if fa != nil {
		name, stmt, shape.Comps = "fleet_arrays", fleetArraysStmt, fa.comps
		// Untiered: the readings from the window's start (no counter to run).
		args = append(args, append(fa.named(), chstore.Named("lookback", uint32(req.Start.Unix())))...)
	} else {
		var join []any
		join, shape.Markets = joinArgs(req, b, plans)
		args = append(args, join...)
		segs, err := c.fleetSegments(ctx, scope, b, plans)
		if err != nil {
			return nil, err
		}
		ctx, shape.ExtSegments = chstore.WithExternal(ctx, segs), true
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, shape); err != nil {
		return nil, fmt.Errorf("render fleet query: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := c.db.Query(ctx, stmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("fleet cost query: %w", err)
	}
	defer rows.Close()
	out := make([]fleetSum, 0, sumsAbout(req, len(ids)))
	// One row scanned into, and its destinations, for every row (storedBuckets): a row and
	// its destinations made per row escaped to the heap, and the sums grown step by step
	// allocated about five times what they hold (a cold fleet month, 31,000 sums: 33 MiB).
	var s fleetSum
	var li uint32 // the location's number: its place in b.ids (fleet_group)
	dest := []any{&li, &s.Dev, &s.Key, &s.KeyEnd, &s.TariffRate, &s.Session, &s.Reference, &s.Energy, &s.Money,
		&s.MoneyCom, &s.MoneyNon, &s.Confidence, &s.NImport, &s.NExport, &s.Reach, &s.Dirty}
	for rows.Next() {
		if req.one.maxRows > 0 && len(out) == req.one.maxRows {
			cancel() // the query stops; the rows read so far are dropped
			return nil, errTooManyItems(req.one.maxRows, req.one.session)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan fleet row: %w", err)
		}
		if li < 1 || int(li) > len(b.ids) {
			return nil, fmt.Errorf("fleet row of location number %d in a batch of %d", li, len(b.ids))
		}
		s.Loc = b.ids[li-1]
		out = append(out, s)
	}
	return out, rows.Err()
}

// sumsAbout is about how many sums a fleet query of n locations returns, at most
// maxSumsAbout: one a location and local day (month) of the window, or one a location
// (NONE); none assumed of a location's readings (RECORD rows).
func sumsAbout(req FleetRequest, n int) int {
	days := int(req.End.Sub(req.Start).Hours()/24) + 2 // a local day may straddle either end
	switch req.Aggregation {
	case AggregationDay:
		return min(n*days, maxSumsAbout)
	case AggregationMonth:
		return min(n*(days/28+2), maxSumsAbout)
	case FleetAggregationNone:
		return n
	}
	return 0
}

// maxSumsAbout bounds the sums made room for at once (about 19 MiB): a batch whose
// locations have few readings would hold the room of a year of days unused.
const maxSumsAbout = 1 << 17

// joinArgs binds what the JOIN of fleet.sql reads besides the records: the segments of
// each product once, through its first location (rep_locs; reps: each location's number
// in it), and each location's tier lookback; markets reports whether any product follows
// a market.
func joinArgs(req FleetRequest, b fleetBatch, plans map[string]tariffs.Plan) (args []any, markets bool) {
	sub := make(map[string]tariffs.Plan, len(b.ids))
	lookbacks := make([]uint32, len(b.ids))
	lookback, rangeTo := req.Start.Unix(), req.End.Unix()
	var repLocs []string
	reps, repOf := make([]uint32, len(b.ids)), map[string]uint32{} // price key → its first location's number
	for i, id := range b.ids {
		p := plans[id]
		if _, ok := repOf[p.PriceKey()]; !ok {
			repLocs = append(repLocs, id)
			repOf[p.PriceKey()] = uint32(len(repLocs))
			sub[id] = p
		}
		reps[i] = repOf[p.PriceKey()]
		// A window priced again from a later day than the plan's (priced buckets) needs
		// only that day's tier periods.
		lb := p.LookbackFrom(req.Start.Unix())
		lookbacks[i] = uint32(lb)
		lookback, rangeTo = min(lookback, lb), max(rangeTo, p.RangeEnd)
		markets = markets || len(p.Markets) > 0
	}
	return append(bindPlans(sub).named(), chstore.Named("lookback", uint32(lookback)),
		chstore.Named("range_from_pad", uint32(max(lookback-32*86400, 0))), chstore.Named("range_to", uint32(rangeTo)),
		chstore.Named("lookbacks", lookbacks), chstore.Named("reps", reps), chstore.Named("rep_locs", repLocs)), markets
}
