package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/writemarks"
)

var insertRecordsStmt = chstore.Register("ingest.insert_records", `INSERT INTO meter_records (account_id, live_mode, location_id, device_id, direction,
	tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id, record_reference_id,
	batch_id, version) VALUES`)

// WriterConfig sets the group commit: a flush happens when MaxRows are waiting or the
// oldest waiting rows are MaxDelay old; Flushers inserts may run at once; QueueLength
// requests may wait (more block their senders: back-pressure, never a drop).
type WriterConfig struct {
	MaxRows     int
	MaxDelay    time.Duration
	Flushers    int
	QueueLength int
	// MaxHold lets a flush wait up to this long (from its first rows) while requests
	// that announced themselves with expect have not queued their rows yet, so that busy
	// moments write fewer, larger blocks. 0 turns it off.
	MaxHold time.Duration
	// Marks brackets each flush with the write marks of its scopes (docs/costs.md, "Write
	// marks"); nil: none.
	Marks *writemarks.Marks
}

// Writer stores rows in ClickHouse with group commit: concurrent requests share insert
// blocks, and each request is answered once the block holding its rows is stored.
type Writer struct {
	db    *chstore.DB
	cfg   WriterConfig
	queue chan *job

	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup

	flushes, inserts, rows atomic.Int64
	incoming               atomic.Int64 // requests being decoded that will write soon
}

// expect announces a request that will write soon; the returned func (safe to call more
// than once) withdraws it, when its rows are queued or it gave up.
func (w *Writer) expect() func() {
	w.incoming.Add(1)
	var once sync.Once
	return func() { once.Do(func() { w.incoming.Add(-1) }) }
}

// WriterStats count the writer's work since it started.
type WriterStats struct {
	Flushes int64 // group commits: requests answered together
	Inserts int64 // insert blocks sent (a flush over many days may send several)
	Rows    int64 // rows stored
}

// Stats returns the counters.
func (w *Writer) Stats() WriterStats {
	return WriterStats{Flushes: w.flushes.Load(), Inserts: w.inserts.Load(), Rows: w.rows.Load()}
}

type job struct {
	rows *Rows
	ex   extras
	done chan error
}

// extras are rows a request stores in the same flush as its records.
type extras struct {
	batches []batchRow
	seen    []seenRow
}

// ErrClosed is returned for writes after Close.
var ErrClosed = kwhouse.Unavailable("the meter writer", errors.New("shutting down"))

// NewWriter starts the flush loops.
func NewWriter(db *chstore.DB, cfg WriterConfig) *Writer {
	w := &Writer{db: db, cfg: cfg, queue: make(chan *job, cfg.QueueLength)}
	for i := 0; i < cfg.Flushers; i++ {
		w.wg.Add(1)
		go w.loop()
	}
	return w
}

// Write stores rows and returns once they are durable, or with the error that kept them
// out (a 503 when ClickHouse is unreachable). Rows larger than MaxRows go in parts.
func (w *Writer) Write(ctx context.Context, rows *Rows) error {
	return w.write(ctx, rows, extras{}, nil)
}

// write stores rows in parts of at most MaxRows; ex goes with the last part, so it is
// stored only once every record is. queued (if set) withdraws the request's expect just
// before its last part enters the queue.
func (w *Writer) write(ctx context.Context, rows *Rows, ex extras, queued func()) error {
	n := rows.Len()
	for from := 0; ; from += w.cfg.MaxRows {
		to := min(from+w.cfg.MaxRows, n)
		if to >= n {
			if queued != nil {
				queued()
			}
			return w.enqueue(ctx, rows.slice(from, to), ex)
		}
		if err := w.enqueue(ctx, rows.slice(from, to), extras{}); err != nil {
			return err
		}
	}
}

func (w *Writer) enqueue(ctx context.Context, rows *Rows, ex extras) error {
	j := &job{rows: rows, ex: ex, done: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	select {
	case w.queue <- j:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return fmt.Errorf("queue meter records: %w", ctx.Err())
	}
	// Once queued the rows will be flushed even if the caller gives up; waiting for the
	// outcome keeps "answered 2xx" equal to "stored".
	return <-j.done
}

// Close stops taking writes, flushes everything queued and waits for it.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	w.wg.Wait()
}

func (w *Writer) loop() {
	defer w.wg.Done()
	var buffers flushBuffers
	for first := range w.queue {
		jobs := w.collect(first)
		err := w.flush(jobs, &buffers)
		for _, j := range jobs {
			j.done <- err
		}
	}
}

// collect gathers the jobs of one flush, starting with first: until MaxRows are waiting
// or MaxDelay has passed, and while announced requests are still on their way, up to
// MaxHold.
func (w *Writer) collect(first *job) []*job {
	jobs, n := []*job{first}, first.rows.Len()
	started := time.Now()
	timer := time.NewTimer(w.cfg.MaxDelay)
	defer timer.Stop()
	for n < w.cfg.MaxRows {
		select {
		case j, ok := <-w.queue:
			if !ok {
				return jobs
			}
			jobs, n = append(jobs, j), n+j.rows.Len()
		case <-timer.C:
			if w.incoming.Load() > 0 && time.Since(started) < w.cfg.MaxHold {
				timer.Reset(w.cfg.MaxDelay) // more rows are on their way: take them along
				continue
			}
			return jobs
		}
	}
	return jobs
}

func (w *Writer) flush(jobs []*job, buffers *flushBuffers) error {
	parts := make([]*Rows, 0, len(jobs))
	var ex extras
	for _, j := range jobs {
		parts = append(parts, j.rows)
		ex.batches = append(ex.batches, j.ex.batches...)
		ex.seen = append(ex.seen, j.ex.seen...)
	}
	// The insert runs on its own context: a request that gave up must not cut short a
	// block other requests are waiting on.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w.flushes.Add(1)
	return w.cfg.Marks.Around(ctx, scopesOf(parts), func() error { return w.store(ctx, parts, ex, buffers) })
}

// scopesOf are the scopes of the rows of parts, each once.
func scopesOf(parts []*Rows) []kwhouse.Scope {
	var out []kwhouse.Scope
	seen := map[kwhouse.Scope]bool{}
	for _, p := range parts {
		for i, acc := range p.account {
			s := kwhouse.Scope{AccountID: acc, LiveMode: p.live[i] == 1}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// store inserts the records of parts, then ex.
func (w *Writer) store(ctx context.Context, parts []*Rows, ex extras, buffers *flushBuffers) error {
	for _, b := range buffers.sortedBlock(parts).byPartition(MaxPartitionsPerInsert) {
		if b.Len() == 0 {
			continue // a flush of requests whose records all failed: only summaries to store
		}
		if err := w.insert(ctx, b, &buffers.columns); err != nil {
			return err // logged once, at the edge: each request it fails answers (and logs) 503
		}
		w.inserts.Add(1)
		w.rows.Add(int64(b.Len()))
	}
	// After the records: a summary or last_seen is never stored for records that are not.
	if len(ex.batches) > 0 {
		if err := insertBatches(ctx, w.db, ex.batches); err != nil {
			return err
		}
	}
	if len(ex.seen) > 0 {
		if err := insertSeen(ctx, w.db, ex.seen); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) insert(ctx context.Context, blk block, buffers *columnBuffers) error {
	defer buffers.release()
	b, err := w.db.InsertBulk(ctx, insertRecordsStmt, blk.stringSizes())
	if err != nil {
		return fmt.Errorf("prepare meter insert: %w", err)
	}
	for i, column := range insertColumns {
		if err := b.Column(i).Append(column(buffers, blk)); err != nil {
			_ = b.Abort()
			return fmt.Errorf("meter insert column %d: %w", i, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("send meter insert of %d rows: %w", blk.Len(), err)
	}
	return nil
}
