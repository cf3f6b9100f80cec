package chstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Settings are per-query server settings.
type Settings map[string]any

// Engine runs final SQL text (no placeholders left). The native ClickHouse pool is the
// engine of the service; the conformance suite plugs in the chDB library.
type Engine interface {
	Query(ctx context.Context, settings Settings, sql string) (Rows, error)
	Exec(ctx context.Context, settings Settings, sql string) error
	// PrepareBatch starts an INSERT of the columns the statement names; Send stores it.
	PrepareBatch(ctx context.Context, settings Settings, sql string) (Batch, error)
	Ping(ctx context.Context) error
	Close() error
}

// Rows iterates over a result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Batch collects the rows of one INSERT, by row (Append) or by column (Column).
type Batch interface {
	Append(values ...any) error
	Column(i int) BatchColumn
	Send() error
	Abort() error
}

// BatchColumn takes a whole column of a Batch as one slice. Append copies the values:
// the caller may reuse the slice as soon as it returns.
type BatchColumn interface {
	Append(values any) error
}

// Row is the single-row result of QueryRow; Scan returns sql.ErrNoRows for no row.
type Row struct {
	rows Rows
	err  error
}

// Scan reads the first row into dest and closes the result.
func (r Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return r.rows.Scan(dest...)
}

// native is the Engine of a clickhouse-go pool.
type native struct{ conn driver.Conn }

func (n native) ctx(ctx context.Context, s Settings) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings(s)))
}

func (n native) Query(ctx context.Context, s Settings, q string) (Rows, error) {
	opts, err := nativeOptions(ctx, s)
	if err != nil {
		return nil, err
	}
	return n.conn.Query(clickhouse.Context(ctx, opts...), q)
}

func (n native) Exec(ctx context.Context, s Settings, q string) error {
	return n.conn.Exec(n.ctx(ctx, s), q)
}

func (n native) PrepareBatch(ctx context.Context, s Settings, q string) (Batch, error) {
	disarm := stringSizes.arm(sizesFrom(ctx))
	b, err := n.conn.PrepareBatch(n.ctx(ctx, s), q)
	disarm()
	if err != nil {
		return nil, err
	}
	return nativeBatch{b}, nil
}

func (n native) Ping(ctx context.Context) error { return n.conn.Ping(ctx) }
func (n native) Close() error                   { return n.conn.Close() }

type nativeBatch struct{ driver.Batch }

func (b nativeBatch) Column(i int) BatchColumn { return b.Batch.Column(i) }

// Query runs a SELECT with the serving-path settings.
func (db *DB) Query(ctx context.Context, st Statement, args ...any) (Rows, error) {
	q, err := db.render(st, args)
	if err != nil {
		return nil, err
	}
	settings := db.read
	if ctx.Value(backgroundKey{}) != nil {
		settings = db.background
	}
	var rows Rows
	err = db.untilQuorum(ctx, codeReplicaBehind, func() (err error) {
		rows, err = db.engine.Query(ctx, settings, q)
		return err
	})
	if err != nil {
		return nil, Classify(err)
	}
	return classifiedRows{rows}, nil
}

type backgroundKey struct{}

// Background marks ctx's reads and inserts as work that yields to the rest (heavy cost
// queries and their write-backs): they run at a lower ClickHouse priority, paused while
// other queries and inserts run.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// QueryRow runs a SELECT expected to return one row.
func (db *DB) QueryRow(ctx context.Context, st Statement, args ...any) Row {
	rows, err := db.Query(ctx, st, args...)
	return Row{rows: rows, err: err}
}

// Exec runs a statement without a result (DDL, mutations).
func (db *DB) Exec(ctx context.Context, st Statement, args ...any) error {
	q, err := db.render(st, args)
	if err != nil {
		return err
	}
	return Classify(db.engine.Exec(ctx, db.write, q))
}

// Insert starts an acknowledged INSERT batch of st ("INSERT INTO t (cols) VALUES").
func (db *DB) Insert(ctx context.Context, st Statement) (Batch, error) {
	db.observe(st)
	if !st.eventual && db.quorumInsert(st.SQL) {
		return classifiedBatchOf{&quorumBatch{db: db, ctx: ctx, st: st}}, nil
	}
	settings := db.write
	if ctx.Value(backgroundKey{}) != nil {
		settings = db.backgroundWrite
	}
	return classifiedBatch(db.engine.PrepareBatch(ctx, settings, st.SQL))
}

// Every error that leaves DB is classified (Classify): a caller branches on kwhouse's
// kinds, never on the driver's errors.
type classifiedRows struct{ Rows }

func (r classifiedRows) Scan(dest ...any) error { return Classify(r.Rows.Scan(dest...)) }
func (r classifiedRows) Err() error             { return Classify(r.Rows.Err()) }

type classifiedBatchOf struct{ Batch }

func (b classifiedBatchOf) Append(values ...any) error { return Classify(b.Batch.Append(values...)) }
func (b classifiedBatchOf) Send() error                { return Classify(b.Batch.Send()) }

func classifiedBatch(b Batch, err error) (Batch, error) {
	if err != nil {
		return nil, Classify(err)
	}
	return classifiedBatchOf{b}, nil
}

func (db *DB) render(st Statement, args []any) (string, error) {
	db.observe(st)
	q, err := Bind(st.SQL, args...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", st.Name, err)
	}
	return q, nil
}

func (db *DB) observe(st Statement) {
	if db.Observe != nil {
		db.Observe(st)
	}
}

// InsertRows inserts n rows in one block: row(i) gives the i-th row's values.
func (db *DB) InsertRows(ctx context.Context, st Statement, n int, row func(i int) []any) error {
	b, err := db.Insert(ctx, st)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := b.Append(row(i)...); err != nil {
			_ = b.Abort()
			return err
		}
	}
	return b.Send()
}
