package query

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
)

// keepBuckets writes back, after the answer (writeBacks), the buckets of run priced over
// the days [from, to) under the counts read before pricing: priced day sums, and empty
// buckets for the days counted that priced to nothing. A bucket whose records reach more
// than a day past its end is not kept (price changes are checked up to a day past a
// bucket). states and priced are only read.
func (c *Pricer) keepBuckets(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch, zone *time.Location,
	run dayRun, from, to time.Time, states []bucketState, staleFrom map[string]time.Time, priced []fleetSum) {
	c.buckets.writes.start(ctx, scope, func(ctx context.Context) error {
		rows := bucketRows(zone, from, to, states, staleFrom, priced)
		return c.writeBuckets(ctx, scope, daily.Direction, b, run, rows)
	})
}

// writeBackTimeout bounds one write-back of priced buckets, which no request waits for;
// writeBackWait bounds how long the scope's next answer waits for it (Fleet).
const (
	writeBackTimeout = time.Minute
	writeBackWait    = 5 * time.Second
)

// writeBacks are the priced buckets (and measured demand peaks: keepPeaks) a Pricer is
// writing back. An answer does not wait for its own: its rows never depend on them, and a
// write that fails or is lost costs a later answer the pricing of those buckets, never a
// wrong one (docs/costs.md, "Priced buckets"). A cold fleet month of 1,000 locations took 68–245 ms from its last priced row
// to the answer sent with the write-back on its path, 9–94 ms without (median 143 against
// 30 ms, a busy machine). The next answer of the same scope waits for them (wait) rather
// than price the same buckets again.
type writeBacks struct {
	mu      sync.Mutex
	pending map[kwhouse.Scope][]chan struct{}
	failed  atomic.Int64
}

// start runs write in the background once the answer is sent, on a context that outlives
// the request's (afterAnswer).
func (w *writeBacks) start(ctx context.Context, scope kwhouse.Scope, write func(context.Context) error) {
	done := make(chan struct{})
	w.mu.Lock()
	if w.pending == nil {
		w.pending = map[kwhouse.Scope][]chan struct{}{}
	}
	w.pending[scope] = append(w.pending[scope], done)
	w.mu.Unlock()
	go func() {
		wctx, cancel := afterAnswer(ctx, writeBackTimeout)
		defer cancel()
		if err := write(wctx); err != nil {
			w.failed.Add(1)
		}
		w.mu.Lock()
		w.pending[scope] = slices.DeleteFunc(w.pending[scope], func(c chan struct{}) bool { return c == done })
		if len(w.pending[scope]) == 0 {
			delete(w.pending, scope)
		}
		w.mu.Unlock()
		close(done)
	}()
}

// wait waits for the write-backs of scope started before it is called.
func (w *writeBacks) wait(ctx context.Context, scope kwhouse.Scope) error {
	w.mu.Lock()
	pending := slices.Clone(w.pending[scope])
	w.mu.Unlock()
	return waitFor(ctx, pending)
}

// waitAll waits for the write-backs of every scope started before it is called.
func (w *writeBacks) waitAll(ctx context.Context) error {
	w.mu.Lock()
	pending := slices.Concat(slices.Collect(maps.Values(w.pending))...)
	w.mu.Unlock()
	return waitFor(ctx, pending)
}

// waitFor waits until every channel of pending is closed or ctx ends.
func waitFor(ctx context.Context, pending []chan struct{}) error {
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// WaitBucketWrites waits for the priced buckets and demand peaks c is writing back in
// scope: once it returns, another process's answer reads them.
func (c *Pricer) WaitBucketWrites(ctx context.Context, scope kwhouse.Scope) error {
	if c.buckets == nil {
		return nil
	}
	return c.buckets.writes.wait(ctx, scope)
}

// bucketRows are the buckets keepBuckets writes: each priced day under its counts, and an
// empty bucket for each counted day of a stale location that priced to nothing. Days are
// keyed by day numbers (dayNumber), not strings: a cold fleet month has 31,000 of them.
func bucketRows(zone *time.Location, from, to time.Time, states []bucketState, staleFrom map[string]time.Time, priced []fleetSum) []bucketRow {
	type key struct {
		loc, dev string
		day      uint32
	}
	idx := make(map[key]int, len(states))
	for i, s := range states {
		if _, stale := staleFrom[s.Loc]; stale {
			idx[key{s.Loc, s.Dev, dayNumber(s.Day)}] = i
		}
	}
	done := make([]bool, len(states))
	rows := make([]bucketRow, 0, len(priced))
	for _, s := range priced {
		start := time.Unix(int64(s.Key), 0).In(zone)
		i, counted := idx[key{s.Loc, s.Dev, dayNumber(start)}]
		var n bucketState
		if counted {
			done[i], n = true, states[i]
		}
		if int64(s.Reach) > nextDay(start).Unix()+86400 || s.Dirty != 0 {
			continue
		}
		rows = append(rows, bucketRow{sum: s, day: start, readings: n.ReadingsNow, prices: n.PricesNow})
	}
	for i, s := range states {
		if done[i] || s.ReadingsNow == 0 {
			continue
		}
		if j, ok := idx[key{s.Loc, s.Dev, dayNumber(s.Day)}]; !ok || j != i { // not stale, or a later state of its day counts
			continue
		}
		day := time.Date(s.Day.Year(), s.Day.Month(), s.Day.Day(), 0, 0, 0, 0, zone)
		if day.Before(from) || !day.Before(to) {
			continue
		}
		rows = append(rows, bucketRow{sum: fleetSum{Loc: s.Loc, Dev: s.Dev, Key: uint32(day.Unix())}, day: day,
			readings: s.ReadingsNow, prices: s.PricesNow, empty: true})
	}
	return rows
}

// bucketRow is one priced bucket to write.
type bucketRow struct {
	sum              fleetSum
	day              time.Time // local midnight
	readings, prices uint64
	empty            bool
}

func (c *Pricer) writeBuckets(ctx context.Context, scope kwhouse.Scope, dir string, b fleetBatch, run dayRun, rows []bucketRow) error {
	if len(rows) == 0 {
		return nil
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].sum.Loc < rows[j].sum.Loc })
	ver, err := c.buckets.versions.Next(ctx, len(rows))
	if err != nil {
		return fmt.Errorf("versions of priced buckets: %w", err)
	}
	batch, err := c.db.Insert(ctx, insertBucketsStmt)
	if err != nil {
		return fmt.Errorf("write priced buckets: %w", err)
	}
	for i, col := range bucketColumns(scope, dir, b, run, rows, ver) {
		if err := batch.Column(i).Append(col); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("write priced buckets, column %d: %w", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("write priced buckets: %w", err)
	}
	return nil
}

// bucketColumns are rows as the columns of insertBucketsStmt, in its order (a column
// each: a cold fleet month is 31,000 rows), versions from ver on.
func bucketColumns(scope kwhouse.Scope, dir string, b fleetBatch, run dayRun, rows []bucketRow, ver uint64) []any {
	n := len(rows)
	account, live, loc, dev, dirs := make([]string, n), make([]uint8, n), make([]string, n), make([]string, n), make([]string, n)
	date, spanFrom, spanTo, start := make([]time.Time, n), make([]uint32, n), make([]uint32, n), make([]time.Time, n)
	zone, tiered, empty, nImport, nExport := make([]string, n), make([]uint8, n), make([]uint8, n), make([]uint64, n), make([]uint64, n)
	energy, money, com, non, conf := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	readings, prices, version := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	for i, r := range rows {
		s := r.sum
		date[i] = time.Date(r.day.Year(), r.day.Month(), r.day.Day(), 0, 0, 0, 0, time.UTC)
		if len(run.spans) > 0 { // only a window's partial first or last day has a span; whole days 0, 0
			span := run.spans[date[i].Format(time.DateOnly)]
			spanFrom[i], spanTo[i] = span[0], span[1]
		}
		account[i], live[i], loc[i], dev[i], dirs[i] = scope.AccountID, scope.LiveByte(), s.Loc, s.Dev, dir
		start[i], zone[i], tiered[i], empty[i] = time.Unix(int64(s.Key), 0).UTC(), b.zone, boolByte(b.tiered), boolByte(r.empty)
		nImport[i], nExport[i], energy[i], money[i], com[i], non[i] = s.NImport, s.NExport, s.Energy, s.Money, s.MoneyCom, s.MoneyNon
		conf[i], readings[i], prices[i], version[i] = s.Confidence, r.readings, r.prices, ver+uint64(i)
	}
	return []any{account, live, loc, dev, dirs, date, spanFrom, spanTo, start, zone, tiered, empty, nImport, nExport,
		energy, money, com, non, conf, readings, prices, version}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
