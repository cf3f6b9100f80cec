package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/schedules"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// statementLog records the names of the statements the service runs.
type statementLog struct {
	mu    sync.Mutex
	names []string
}

func (l *statementLog) observe(st chstore.Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = append(l.names, st.Name)
}

// during returns the statements run by fn.
func (l *statementLog) during(fn func()) []string {
	l.mu.Lock()
	from := len(l.names)
	l.mu.Unlock()
	fn()
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names[from:])
}

// storedSchedulesCount is how many schedules the test stores beside its own.
const storedSchedulesCount = 5000

// A long-lived account's schedules cost its next ones nothing: with thousands stored,
// POST /schedules runs the one statement it runs with none (the insert of the new
// schedule), and GET /schedules/{id} with the cache down reads the schedule by its key,
// a granule or two, not the account's schedules.
func TestScheduleWorkDoesNotGrowWithStoredSchedules(t *testing.T) {
	log := &statementLog{}
	e := newScheduleEnvWith(t, time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC), apitest.Options{Observe: log.observe,
		Configure: func(c *config.Config) { c.ClickHouse.LogQueries = true }})
	e.marketTariff(hourPrices(0.30, -0.05, 0.10, 0.20))
	dev := e.device("EV-1")
	e.reads(map[string]any{"location_id": e.loc, "device_id": dev, "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "WH",
		"value": 100, "start_time": "2024-01-09T10:00:00Z", "end_time": "2024-01-09T10:30:00Z"})
	body := oneDevice(e.loc, dev, 2000, 2000, "2024-01-10T14:00:00Z")
	e.schedule("", body) // the price timeline and the device's placement are read once
	fresh := log.during(func() { e.schedule("", body) })
	if !slices.Equal(fresh, []string{"docstore.insert"}) {
		t.Fatalf("POST /schedules with no schedules stored ran %v, want only the insert", fresh)
	}

	ids := e.storeSchedules(storedSchedulesCount)
	stored := log.during(func() { e.schedule("", body) })
	if !slices.Equal(stored, fresh) {
		t.Errorf("POST /schedules with %d schedules stored ran %v, with none %v", storedSchedulesCount, stored, fresh)
	}

	id := ids[storedSchedulesCount/2]
	e.api.Redis.Down()
	defer e.api.Redis.Up()
	var got map[string]any
	gets := log.during(func() {
		r := e.do("GET", "/schedules/"+id, nil)
		if r.Status != 200 {
			t.Fatalf("GET /schedules/%s: %d %s", id, r.Status, r.Body)
		}
		got = r.Map(t)
	})
	if got["id"] != id || got["location_id"] != e.loc {
		t.Errorf("GET /schedules/%s answered id %v location %v", id, got["id"], got["location_id"])
	}
	if !slices.Equal(gets, []string{"docstore.get"}) {
		t.Errorf("GET /schedules/{id} with the cache down ran %v, want one keyed read", gets)
	}
	if e.api.App.DB.Cluster == "" && !testkit.Embedded() { // a cluster's query_log is per node; chDB keeps none
		rows := e.readRowsOf(id)
		t.Logf("GET /schedules/{id} read %d rows of documents", rows)
		if rows > 1024 {
			t.Errorf("GET /schedules/{id} read %d rows of documents, with %d schedules stored; want at most 1,024 (its granules)", rows, storedSchedulesCount+3)
		}
	}
}

// storeSchedules stores n schedules of the location in one insert, as n POST /schedules
// would have one by one, and returns their ids.
func (e *costEnv) storeSchedules(n int) []string {
	e.t.Helper()
	r := e.do("POST", "/schedules", oneDevice(e.loc, e.device("EV-2"), 1000, 1000, "2024-01-10T12:00:00Z"))
	if r.Status != 200 {
		e.t.Fatalf("POST /schedules: %d %s", r.Status, r.Body)
	}
	template := r.Map(e.t)
	scope := kwhouse.Scope{AccountID: e.acc.ID}
	docs := make([]docstore.Doc, n)
	ids := make([]string, n)
	for i := range docs {
		ids[i] = kwhouse.NewID(kwhouse.PrefixSchedule)
		template["id"] = ids[i]
		b, err := json.Marshal(template)
		if err != nil {
			e.t.Fatal(err)
		}
		docs[i] = docstore.Doc{Kind: schedules.KindSchedule, ID: ids[i], Scope: scope, CreatedUS: time.Now().UnixMicro(),
			Fields: docstore.Fields{LocationID: e.loc}, Body: b}
	}
	// In writes of 250, as requests would write them: in embedded mode the cache's pipeline
	// of one write's 5,000 documents outlasts redis.timeout (docs/operations.md), so the
	// cache counts as down for its backoff and the next requests read ClickHouse.
	for len(docs) > 0 {
		k := min(len(docs), 250)
		if err := e.api.App.Catalog.Docs().Write(context.Background(), docs[:k]...); err != nil {
			e.t.Fatalf("store %d schedules: %v", n, err)
		}
		docs = docs[k:]
	}
	e.awaitCache()
	if e.api.App.DB.Cluster == "" && !testkit.Embedded() { // where the rows a read takes are checked
		e.mergeDocuments()
	}
	return ids
}

// mergeDocuments merges the documents' parts, as a long-lived account's are: 5,000
// schedules written 250 at a time are 20 parts of one granule each, and a read by key
// reads the granule of every part whose id range holds the key (most of them) until
// ClickHouse merges them.
func (e *costEnv) mergeDocuments() {
	e.t.Helper()
	if err := e.api.App.DB.Exec(context.Background(), chstore.Tool("OPTIMIZE TABLE documents FINAL")); err != nil {
		e.t.Fatalf("merge documents: %v", err)
	}
}

// awaitCache waits until the cache answers again. On a loaded machine a write's pipeline
// can still outlast redis.timeout; the cache then counts as down for its backoff and the
// next requests read ClickHouse, work that has nothing to do with the stored schedules.
func (e *costEnv) awaitCache() {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := e.api.App.Cache.Ping(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the cache did not answer after storing schedules: %v", err)
		}
	}
}

// readRowsOf is the rows of documents the read of document id took, from ClickHouse's
// query log. The server logs a query as it finishes, which may be just after the client
// has its answer: the log is flushed and read until the read shows (up to 10 s).
func (e *costEnv) readRowsOf(id string) uint64 {
	e.t.Helper()
	ctx := context.Background()
	db := e.api.App.DB
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := db.Exec(ctx, chstore.Tool("SYSTEM FLUSH LOGS")); err != nil {
			e.t.Fatal(err)
		}
		var rows uint64
		err := db.QueryRow(ctx, chstore.Tool(`SELECT max(read_rows) FROM system.query_log
			WHERE type = 2 AND event_date >= yesterday() AND position(query, ?) > 0 AND position(query, 'argMax(body') > 0
				AND query NOT LIKE '%query_log%'`), id).Scan(&rows)
		if err != nil {
			e.t.Fatal(err)
		}
		if rows > 0 {
			return rows
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no read of %s in system.query_log", id)
		}
	}
}
