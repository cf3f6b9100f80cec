//go:build chdb

package testkit

import (
	"os"
	"sync"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/chstore/chdb"
	"github.com/kwhouse/kwhouse/config"
)

// session is the one chDB session a test process may have; it ends with the process.
var session struct {
	once sync.Once
	e    *chdb.Engine
	err  error
}

func embeddedDB(t testing.TB, cfg config.ClickHouse) *chstore.DB {
	t.Helper()
	session.once.Do(func() {
		// A folder of this process's own: test binaries of several packages run at once.
		dir, err := os.MkdirTemp(os.Getenv("KWHOUSE_TEST_EMBEDDED_DIR"), "kwhouse-embedded-")
		if err != nil {
			session.err = err
			return
		}
		session.e, session.err = chdb.Open(dir, "default")
	})
	if session.err != nil {
		t.Fatalf("open chDB: %v", session.err)
	}
	e, err := session.e.In(cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	return chstore.NewDB(e, cfg, e.Version())
}
