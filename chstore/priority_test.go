package chstore

import (
	"context"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kwhouse/kwhouse/config"
)

// settingsEngine records the settings of the last query.
type settingsEngine struct{ last Settings }

func (e *settingsEngine) Query(_ context.Context, s Settings, _ string) (Rows, error) {
	e.last = s
	return nil, nil
}
func (e *settingsEngine) Exec(_ context.Context, s Settings, _ string) error { e.last = s; return nil }
func (e *settingsEngine) PrepareBatch(_ context.Context, s Settings, _ string) (Batch, error) {
	e.last = s
	return nil, nil
}
func (e *settingsEngine) Ping(context.Context) error { return nil }
func (e *settingsEngine) Close() error               { return nil }

// Heavy cost queries yield: their reads and inserts run at priority 2, every other query
// and insert at 1 (a larger value is paused while a smaller one runs; 0 would opt out).
func TestBackgroundReadsYieldToTheRest(t *testing.T) {
	e := &settingsEngine{}
	db := NewDB(e, config.ClickHouse{MaxExecutionTime: 30e9, MaxMemoryUsage: 1 << 30}, driver.ServerVersion{})
	st := Tool("SELECT 1")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func()
		want int
	}{
		{"read", func() { _, _ = db.Query(ctx, st) }, 1},
		{"background read", func() { _, _ = db.Query(Background(ctx), st) }, 2},
		{"exec", func() { _ = db.Exec(Background(ctx), st) }, 1},
		{"insert", func() { _, _ = db.Insert(ctx, st) }, 1},
		{"background insert", func() { _, _ = db.Insert(Background(ctx), st) }, 2},
	} {
		tc.run()
		if got := e.last["priority"]; got != tc.want {
			t.Errorf("%s: priority %v, want %d", tc.name, got, tc.want)
		}
	}
	if db.background["max_execution_time"] != db.read["max_execution_time"] {
		t.Error("a background read lost the serving caps")
	}
	if db.backgroundWrite["max_execution_time"] != db.write["max_execution_time"] {
		t.Error("a background insert lost the write caps")
	}
}
