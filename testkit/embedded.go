package testkit

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/embedded"
	"github.com/kwhouse/kwhouse/schema"
)

// Embedded reports whether the tests run in embedded mode (KWHOUSE_TEST_EMBEDDED=1, in a
// test binary built with the chdb tag: make test-embedded). Then every test database is
// one of the process's chDB session (data in a new folder under KWHOUSE_TEST_EMBEDDED_DIR,
// or under the system's temporary folder) and every Redis prefix one of an in-process
// Redis: no server is dialled.
func Embedded() bool { return os.Getenv("KWHOUSE_TEST_EMBEDDED") == "1" }

// SkipEmbedded skips t in embedded mode, saying why it cannot run there.
func SkipEmbedded(t testing.TB, why string) {
	t.Helper()
	if Embedded() {
		t.Skip("embedded mode: " + why)
	}
}

// embeddedAddr stands in for clickhouse.addr in embedded mode: valid, and never dialled
// (a test that opens a server connection of its own fails there, as it should).
const embeddedAddr = "127.0.0.1:0"

var embeddedRedis struct {
	once sync.Once
	addr string
	err  error
}

// embeddedRedisAddr is the address of the test process's in-process Redis.
func embeddedRedisAddr(t testing.TB) string {
	t.Helper()
	embeddedRedis.once.Do(func() {
		m, err := embedded.StartRedis() // lives as long as the test process
		if err != nil {
			embeddedRedis.err = err
			return
		}
		embeddedRedis.addr = m.Addr()
	})
	if embeddedRedis.err != nil {
		t.Fatal(embeddedRedis.err)
	}
	return embeddedRedis.addr
}

// EmbeddedDB returns a DB on the test process's chDB session running its statements in
// cfg's database (created when missing, not migrated). Its Close leaves the session open.
func EmbeddedDB(t testing.TB, cfg config.ClickHouse) *chstore.DB {
	t.Helper()
	return embeddedDB(t, cfg)
}

// openEmbedded is OpenClickHouse in embedded mode.
func openEmbedded(t testing.TB, cfg config.ClickHouse) *chstore.DB {
	t.Helper()
	db := EmbeddedDB(t, cfg)
	if err := schema.Apply(context.Background(), db, Logger()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		if os.Getenv("KWHOUSE_TEST_KEEP_DB") != "1" {
			_ = db.Exec(context.Background(), chstore.Tool(chstore.DropDatabaseSQL(cfg)))
		}
	})
	return db
}
