package query

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

var (
	bucketStoredStmt = chstore.Register("query.bucket_stored", "buckets.sql: the stored priced buckets of a batch, every version")
	bucketCountsStmt = chstore.Register("query.bucket_counts", "buckets.sql: the change counts a batch's buckets depend on, per UTC date")
	bucketStoredSQL  = renderFixed("bucket_stored")
	bucketCountsSQL  = renderFixed("bucket_counts")
)

// renderFixed renders a template that has no optional parts, once.
func renderFixed(name string) string { return renderShape(name, nil) }

// renderShape renders a template of one shape, once.
func renderShape(name string, shape any) string {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, shape); err != nil {
		panic(err)
	}
	return buf.String()
}

// bucketState is a local day of a location (or device) that has a stored bucket or any
// reading counted: the latest stored bucket beside the change counts there are now.
type bucketState struct {
	Loc, Dev                 string
	Day                      time.Time // the local date, at UTC midnight
	Stored                   uint8
	DayStart                 uint32
	Empty                    uint8
	NImport, NExport         uint64
	Energy, Money            float64
	MoneyCom, MoneyNon       float64
	Confidence               float64
	ReadingsSeen, PricesSeen uint64
	ReadingsNow, PricesNow   uint64
	Valid                    uint8
}

func (s bucketState) sum() fleetSum {
	return fleetSum{Loc: s.Loc, Dev: s.Dev, Key: s.DayStart, Energy: s.Energy, Money: s.Money, MoneyCom: s.MoneyCom,
		MoneyNon: s.MoneyNon, Confidence: s.Confidence, NImport: s.NImport, NExport: s.NExport}
}

// storedBucket is a row of bucket_stored (buckets.sql).
type storedBucket struct {
	state    bucketState
	day      uint32 // day number of state.Day
	sameKind uint8  // priced in the batch's zone, tiered as the batch is
	version  uint64
}

// countRow is a row of bucket_counts (buckets.sql): a change count and the one or two runs
// of local days [a, b] and [a1, b1] it reaches (day numbers; a1 = a: one run), as
// count_dates defines them.
type countRow struct {
	kind     uint8 // 0 readings, 1 dated price changes, 2 price changes of every date
	loc, dev string
	a, b     uint32
	a1, b1   uint32
	n        uint64
}

// bucketStates reads the batch's buckets of a run of days beside their counts now, in
// (location, device, day) order: from the read its zone shares in this answer when there
// is one (sharedStates), else from its own; the stored buckets and the counts are read side by side.
func (c *Pricer) bucketStates(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	run dayRun) (dayStates, error) {
	if zs, i := sharedZone(ctx, b, run); zs != nil {
		return zs.statesOf(ctx, c, scope, daily, i)
	}
	states, err := c.readStates(ctx, scope, daily, stateBatch{zone: b.zone, ids: b.ids, chained: chainedOf(b)}, run, nil, 1)
	if err != nil {
		return dayStates{}, err
	}
	return states[0], nil
}

// stateBatch is the locations one state read asks about: of one zone, the tiered ones
// (chained) among them; the others untiered.
type stateBatch struct {
	zone         string
	ids, chained []string
}

// chainedOf is the tiered locations of a batch: all of them or none.
func chainedOf(b fleetBatch) []string {
	if b.tiered {
		return b.ids
	}
	return nil
}

// readStates reads the states of a stateBatch (bucketStates), split into groups of
// locations: group(location) of n (nil: one group).
func (c *Pricer) readStates(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b stateBatch,
	run dayRun, group func(loc string) int, n int) ([]dayStates, error) {
	first, last := run.first, run.last()
	args := stateArgs(scope, daily, fleetBatch{zone: b.zone, tiered: len(b.chained) > 0, ids: b.ids}, run)
	ctx = withLocsChained(ctx, b.ids, b.chained)
	var stored []storedBucket
	var counts []countRow
	g, gctx := errgroup.WithContext(ctx)
	days := run.days()
	about := len(b.ids) * days // a bucket a location and day
	g.Go(func() (err error) { stored, err = c.storedBuckets(gctx, args, about); return err })
	g.Go(func() (err error) {
		counts, err = c.changeCounts(gctx, args, countsAbout(len(b.ids), len(b.chained), days))
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return newDayTable(stored, counts, dayNumber(first), dayNumber(last)).states(stored, group, n), nil
}

// countsAbout is about how many rows bucket_counts returns for n locations, chained of
// them tiered, over a run of days (count_dates): a row per UTC date read, the dates three
// days either side of the run, and for a tiered location both directions and its chain's
// 35 days before; growing a slice of 40,000 counts step by step allocated three times what
// they hold.
func countsAbout(n, chained, days int) int {
	return (n-chained)*(days+7) + 2*chained*(days+42)
}

// last is the date of the run's last day (a local day lasts 23–25 hours).
func (r dayRun) last() time.Time { return r.end.Add(-12 * time.Hour) }

// days is how many local days the run has (0 for none).
func (r dayRun) days() int {
	if !r.end.After(r.first) {
		return 0
	}
	return int(dayNumber(r.last())-dayNumber(r.first)) + 1
}

// stateArgs binds what the state reads of a batch over a run of days ask (buckets.sql):
// the run's local dates, and the UTC dates of the counts that reach them (count_dates:
// a day or two, and a tier chain's 35 days before, for the tiered locations: from u0_chained).
func stateArgs(scope kwhouse.Scope, daily FleetRequest, b fleetBatch, run dayRun) []any {
	const day = 24 * time.Hour
	date := func(t time.Time) string { return t.Format(time.DateOnly) }
	first, last := run.first, run.last()
	chain := time.Duration(0)
	if b.tiered {
		chain = 35 * day
	}
	return append([]any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("devices", daily.GroupBy == GroupDevice),
		chstore.Named("dir", daily.Direction), chstore.Named("tz", b.zone), chstore.Named("chained", b.tiered),
		chstore.Named("d0", date(first)), chstore.Named("d1", date(last)),
		chstore.Named("u0", date(first.UTC().Add(-3*day))), chstore.Named("u0_chained", date(first.UTC().Add(-3*day-chain))),
		chstore.Named("u1", date(last.UTC().Add(3*day))),
		chstore.Named("p0", date(first.UTC().Add(-3*day))), chstore.Named("p1", date(last.UTC().Add(3*day)))}, run.spanArgs()...)
}

// withLocs sends the batch's locations with the statements of ctx, as the external table
// _locs, and its tiered ones (all or none) as _chained.
func withLocs(ctx context.Context, b fleetBatch) context.Context {
	return withLocsChained(ctx, b.ids, chainedOf(b))
}

// withLocsChained sends locations as the external table _locs and the tiered ones among
// them as _chained.
func withLocsChained(ctx context.Context, ids, chained []string) context.Context {
	return chstore.WithExternal(ctx,
		chstore.External{Name: "_locs", Columns: []chstore.ExternalColumn{{Name: "location_id", Type: "String", Values: ids}}},
		chstore.External{Name: "_chained", Columns: []chstore.ExternalColumn{{Name: "location_id", Type: "String",
			Values: append([]string{}, chained...)}}})
}

// storedBuckets reads bucket_stored; about is how many rows to make room for (one per
// location and day: growing a slice of 31,000 buckets step by step cost more than reading them).
func (c *Pricer) storedBuckets(ctx context.Context, args []any, about int) ([]storedBucket, error) {
	rows, err := c.db.Query(ctx, bucketStoredStmt.With(bucketStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("priced buckets: %w", err)
	}
	defer rows.Close()
	var out []storedBucket // room made at the first row: a cold answer reads none
	// One row scanned into, and its destinations, for every row: a value per row would
	// escape to the heap, as would the destinations' slice.
	var b storedBucket
	var d uint32
	s := &b.state
	dest := []any{&s.Loc, &s.Dev, &d, &b.sameKind, &s.DayStart, &s.Empty, &s.NImport, &s.NExport,
		&s.Energy, &s.Money, &s.MoneyCom, &s.MoneyNon, &s.Confidence, &s.ReadingsSeen, &s.PricesSeen, &b.version}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan priced bucket: %w", err)
		}
		s.Day, s.Stored, b.day = dateOf(d), 1, d
		if out == nil {
			out = make([]storedBucket, 0, about)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// changeCounts reads bucket_counts; about is how many rows to make room for.
func (c *Pricer) changeCounts(ctx context.Context, args []any, about int) ([]countRow, error) {
	rows, err := c.db.Query(ctx, bucketCountsStmt.With(bucketCountsSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("change counts of priced buckets: %w", err)
	}
	defer rows.Close()
	out := make([]countRow, 0, about)
	var r countRow // scanned into for every row (storedBuckets)
	var utcDay uint32
	dest := []any{&r.kind, &r.loc, &r.dev, &r.n, &utcDay, &r.a, &r.b, &r.a1, &r.b1}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan change count: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// objKey names a location, or a device at a location.
type objKey struct{ loc, dev string }

// dayTable is a batch's run of local days [d0, d0+w) per object (location, or device at a
// location), dense by day: the latest stored bucket and the change counts now. Ranges of
// days are added as difference arrays (+n on the first day, -n after the last; uint64
// arithmetic wraps and the prefix sums are the true counts), so a count that reaches a
// month of days costs two additions.
type dayTable struct {
	d0    uint32
	w     int
	objs  []objKey
	index map[objKey]int32
	last  int32    // the index obj found last: rows come grouped by location
	slot  []int32  // objs × w: index of the day's latest stored bucket, -1 for none
	reads []uint64 // objs × (w+1): records written
	locs  map[string]int32
	dated []uint64 // locations × (w+1): dated price changes
	every []uint64 // per location: price changes of every date
	none  []uint64 // w+1 zeros: the dated price changes of a location without any
}

// obj returns the index of (loc, dev), adding it when new.
func (t *dayTable) obj(k objKey) int32 {
	if t.last < int32(len(t.objs)) && t.objs[t.last] == k {
		return t.last
	}
	i, ok := t.index[k]
	if !ok {
		i = int32(len(t.objs))
		t.index[k] = i
		t.objs = append(t.objs, k)
	}
	t.last = i
	return i
}

// addRange adds n to the days [from, to] (day numbers) of row i of a difference array, within the run.
func (t *dayTable) addRange(diff []uint64, i int32, from, to uint32, n uint64) {
	d1 := t.d0 + uint32(t.w) - 1
	from, to = max(from, t.d0), min(to, d1)
	if from > to {
		return
	}
	row := diff[int(i)*(t.w+1) : int(i+1)*(t.w+1)]
	row[from-t.d0] += n
	row[to-t.d0+1] -= n
}

// sumRows turns a difference array's rows into counts per day, in place.
func sumRows(diff []uint64, w int) {
	for r := 0; r+w+1 <= len(diff); r += w + 1 {
		var acc uint64
		for j := 0; j <= w; j++ {
			acc += diff[r+j]
			diff[r+j] = acc
		}
	}
}

// newDayTable puts the batch's stored buckets and change counts on the local days [d0, d1]
// (day numbers); each count reaches the days buckets.sql (count_dates) says it does.
func newDayTable(stored []storedBucket, counts []countRow, d0, d1 uint32) *dayTable {
	t := &dayTable{d0: d0, w: int(d1-d0) + 1, index: map[objKey]int32{}, locs: map[string]int32{}}
	t.none = make([]uint64, t.w+1)
	objOf := make([]int32, len(stored))
	for i := range stored {
		objOf[i] = t.obj(objKey{stored[i].state.Loc, stored[i].state.Dev})
	}
	for _, r := range counts {
		if r.kind == 0 {
			t.obj(objKey{r.loc, r.dev})
		} else if _, ok := t.locs[r.loc]; !ok {
			t.locs[r.loc] = int32(len(t.locs))
		}
	}
	n := len(t.objs)
	t.slot, t.reads = make([]int32, n*t.w), make([]uint64, n*(t.w+1))
	t.dated, t.every = make([]uint64, len(t.locs)*(t.w+1)), make([]uint64, len(t.locs))
	for i := range t.slot {
		t.slot[i] = -1
	}
	for i := range stored {
		b := &stored[i]
		if b.day < d0 || b.day > d1 {
			continue
		}
		at := int(objOf[i])*t.w + int(b.day-d0)
		if have := t.slot[at]; have < 0 || b.version > stored[have].version {
			t.slot[at] = int32(i)
		}
	}
	for _, r := range counts {
		t.count(r)
	}
	sumRows(t.reads, t.w)
	sumRows(t.dated, t.w)
	return t
}

// count adds one row of change counts to the days it reaches: its one or two runs.
func (t *dayTable) count(r countRow) {
	if r.kind == 2 {
		t.every[t.locs[r.loc]] += r.n
		return
	}
	diff, i := t.dated, t.locs[r.loc]
	if r.kind == 0 {
		diff, i = t.reads, t.obj(objKey{r.loc, r.dev})
	}
	t.addRange(diff, i, r.a, r.b, r.n)
	if r.a1 != r.a {
		t.addRange(diff, i, r.a1, r.b1, r.n)
	}
}

// readings is the records written on day j of the run for object i.
func (t *dayTable) readings(i int32, j int) uint64 { return t.reads[int(i)*(t.w+1)+j] }

// prices is the price changes of day j of the run for location loc.
func (t *dayTable) prices(loc string, j int) uint64 {
	dated, every := t.priceRow(loc)
	return dated[j] + every
}

// dayStates are a group's days over a run of days, in (location, device, day) order: the
// buckets of each location whose every day is valid, as the sums they serve (empty ones
// serve none), and every day of the other locations (stale: a day counted without a
// bucket, or whose bucket was priced in another zone or tiering, or under other counts)
// beside its counts now. Valid days are made into sums here, once: as states beside
// their counts they were twice the memory, and copied again into sums.
type dayStates struct {
	served []fleetSum
	stale  []bucketState
}

// states splits the days that have a stored bucket or any reading counted into dayStates,
// by groups of locations: group(location) of n (nil: one group), each slice made to its
// size. A bucket is valid when it was priced in the batch's zone, tiered as the batch is
// now, under the counts there are now.
func (t *dayTable) states(stored []storedBucket, group func(loc string) int, n int) []dayStates {
	order := make([]int32, len(t.objs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(t.objs[a].loc, t.objs[b].loc); c != 0 {
			return c
		}
		return strings.Compare(t.objs[a].dev, t.objs[b].dev)
	})
	// A location is stale when a day of one of its objects is; its objects follow each other.
	stale := make([]bool, len(t.objs))
	groupOf := make([]int, len(t.objs))
	served, states := make([]int, n), make([]int, n)
	for k := 0; k < len(order); {
		loc, g := t.objs[order[k]].loc, 0
		if group != nil {
			g = group(loc)
		}
		end, ok, sums, days := k, true, 0, 0
		for ; end < len(order) && t.objs[order[end]].loc == loc; end++ {
			o := t.scan(stored, order[end])
			ok, sums, days = ok && o.valid, sums+o.sums, days+o.days
		}
		for ; k < end; k++ {
			stale[order[k]], groupOf[order[k]] = !ok, g
		}
		if ok {
			served[g] += sums
		} else {
			states[g] += days
		}
	}
	out := make([]dayStates, n)
	for g := range out {
		out[g] = dayStates{served: make([]fleetSum, 0, served[g]), stale: make([]bucketState, 0, states[g])}
	}
	for _, i := range order {
		o := &out[groupOf[i]]
		if stale[i] {
			o.stale = t.objStates(o.stale, stored, i)
		} else {
			o.served = t.objSums(o.served, stored, i)
		}
	}
	return out
}

// objScan is what scan found of an object's days: how many have a bucket or a reading
// counted, how many of them serve a sum, and whether every one is valid.
type objScan struct {
	days, sums int
	valid      bool
}

// scan looks at object i's days.
func (t *dayTable) scan(stored []storedBucket, i int32) objScan {
	out := objScan{valid: true}
	dated, every := t.priceRow(t.objs[i].loc)
	for j := 0; j < t.w; j++ {
		at, now := t.slot[int(i)*t.w+j], t.readings(i, j)
		if at < 0 && now == 0 {
			continue
		}
		out.days++
		if !validBucket(stored, at, now, dated[j]+every) {
			out.valid = false
		} else if stored[at].state.Empty == 0 {
			out.sums++
		}
	}
	return out
}

// validBucket reports whether the bucket at (an index of stored; -1 for none) was priced
// in the batch's zone and tiering under the counts there are now of its day.
func validBucket(stored []storedBucket, at int32, readings, prices uint64) bool {
	if at < 0 {
		return false
	}
	b := &stored[at]
	return b.sameKind == 1 && b.state.ReadingsSeen == readings && b.state.PricesSeen == prices
}

// priceRow is the price changes of location loc per day of the run (dated, w+1 of them,
// zeros when none) and of every date.
func (t *dayTable) priceRow(loc string) (dated []uint64, every uint64) {
	l, ok := t.locs[loc]
	if !ok {
		return t.none, 0
	}
	return t.dated[int(l)*(t.w+1) : int(l+1)*(t.w+1)], t.every[l]
}

// objSums appends the sums of object i's non-empty buckets (every day valid) to out.
func (t *dayTable) objSums(out []fleetSum, stored []storedBucket, i int32) []fleetSum {
	for _, at := range t.slot[int(i)*t.w : int(i+1)*t.w] {
		if at >= 0 && stored[at].state.Empty == 0 {
			out = append(out, stored[at].state.sum())
		}
	}
	return out
}

// objStates appends the states of object i's days to out.
func (t *dayTable) objStates(out []bucketState, stored []storedBucket, i int32) []bucketState {
	k := t.objs[i]
	dated, every := t.priceRow(k.loc)
	for j := 0; j < t.w; j++ {
		at, now := t.slot[int(i)*t.w+j], t.readings(i, j)
		if at < 0 && now == 0 {
			continue
		}
		var s bucketState
		if at >= 0 {
			s = stored[at].state
		} else {
			s.Loc, s.Dev, s.Day = k.loc, k.dev, dateOf(t.d0+uint32(j))
		}
		s.ReadingsNow, s.PricesNow = now, dated[j]+every
		if validBucket(stored, at, s.ReadingsNow, s.PricesNow) {
			s.Valid = 1
		}
		out = append(out, s)
	}
	return out
}

// dayNumber is the date of t (in its own zone) as days since 1970-01-01.
func dayNumber(t time.Time) uint32 {
	y, m, d := t.Date()
	return uint32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// dateOf is day number d at UTC midnight.
func dateOf(d uint32) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }
