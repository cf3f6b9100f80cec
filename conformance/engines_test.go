//go:build chdb

package conformance

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/chstore/chdb"
	"github.com/kwhouse/kwhouse/config"
)

// ran records which registered statements the run sent, on which engine.
var ran = struct {
	sync.Mutex
	by map[string]map[string]bool // statement name → engine → sent
}{by: map[string]map[string]bool{}}

func observer(engine string) func(chstore.Statement) {
	return func(st chstore.Statement) {
		ran.Lock()
		defer ran.Unlock()
		if ran.by[st.Name] == nil {
			ran.by[st.Name] = map[string]bool{}
		}
		ran.by[st.Name][engine] = true
	}
}

var chdbEngine struct {
	once sync.Once
	e    *chdb.Engine
	dir  string // a temporary folder to remove at the end, or ""
	err  error
}

// TestMain closes the chDB session and removes its temporary data after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if chdbEngine.e != nil {
		_ = chdbEngine.e.Close()
	}
	if chdbEngine.dir != "" {
		_ = os.RemoveAll(chdbEngine.dir)
	}
	os.Exit(code)
}

// chdbDB returns a DB on chDB with a fresh database (data under KWHOUSE_CHDB_DATA or a
// temporary folder).
func chdbDB(t *testing.T, database string) *chstore.DB {
	t.Helper()
	chdbEngine.once.Do(func() {
		dir := os.Getenv("KWHOUSE_CHDB_DATA")
		if dir == "" {
			dir, chdbEngine.err = os.MkdirTemp("", "kwhouse-chdb-")
			if chdbEngine.err != nil {
				return
			}
			chdbEngine.dir = dir
		}
		chdbEngine.e, chdbEngine.err = chdb.Open(dir, "default")
	})
	if chdbEngine.err != nil {
		t.Fatalf("open chDB: %v", chdbEngine.err)
	}
	// An engine of the one chDB session a process may have open: its Close leaves the
	// session open for the next app.
	e, err := chdbEngine.e.In(database)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.ClickHouse{Database: database, MaxExecutionTime: 30 * time.Second, MaxMemoryUsage: 4 << 30}
	db := chstore.NewDB(e, cfg, e.Version())
	db.Observe = observer("chdb")
	return db
}
