package query_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A shard's replica dies after an answer read its state token there and before the
// answer read the shard: the answer is computed from the other replica, which had not
// fetched a reading acknowledged before the request (fetches stopped). Once both replicas
// hold the reading again the token is the one read before computing, and the answer
// asked again must count the reading: the answer computed without it was never kept
// (docs/costs.md, "Answer cache").
func TestAnswerCacheKeepsNoAnswerFromAReplicaThatFailedOverBehindItsToken(t *testing.T) {
	if os.Getenv("KWHOUSE_TEST_CLICKHOUSE_CLUSTER") == "" {
		t.Skip("needs the local cluster (scripts/cluster.sh)")
	}
	// Once the answer has read its token, its statements wait until the node is killed.
	var victim string
	var armed, tokenRead, killed atomic.Bool
	var kill sync.Once
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn, Observe: func(st chstore.Statement) {
		if !armed.Load() {
			return
		}
		if st.Name == "query.fleet_token" {
			tokenRead.Store(true)
		} else if tokenRead.Load() {
			kill.Do(func() { testkit.ClusterScript(t, "kill", victim); killed.Store(true) })
		}
	}})
	loc := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}})})
	for shardOf(t, f, loc) != 2 {
		loc = f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}})})
	}
	f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	f.cachedFleet(t)
	if _, hit := f.cachedFleet(t); !hit {
		t.Fatal("asked again on a healthy cluster: not served from the cache")
	}

	// Shard 2 is nodes 3 and 4; the reading lands on the one its reads prefer now.
	nodes := map[string]*chstore.DB{"3": nodeDB(t, f, "127.0.0.1:9103"), "4": nodeDB(t, f, "127.0.0.1:9104")}
	t.Cleanup(func() {
		for n := range nodes {
			testkit.ClusterScript(t, "start", n)
			_ = nodeDB(t, f, "127.0.0.1:910"+n).Exec(context.Background(), chstore.Tool("SYSTEM START FETCHES"))
		}
	})
	for _, db := range nodes {
		if err := db.Exec(context.Background(), chstore.Tool("SYSTEM STOP FETCHES")); err != nil {
			t.Fatal(err)
		}
	}
	f.readings(loc, time.Date(2024, 3, 3, 10, 0, 0, 0, time.UTC), 1, 5000) // acknowledged by one replica
	holder, other := "3", "4"
	if countsOn(t, nodes["4"], loc) > countsOn(t, nodes["3"], loc) {
		holder, other = "4", "3"
	}
	victim = holder
	armed.Store(true)
	during, hit := f.cachedFleet(t)
	if hit || !killed.Load() {
		t.Fatalf("the answer after a reading: served %t, node %s not killed", hit, holder)
	}
	if got := during[loc+" 2024-03-03"].Energy.ValueExact; got != 24000 {
		t.Fatalf("answered with node %s down: %v Wh on March 3, want 24000 (node %s lacks the reading)", holder, got, other)
	}

	testkit.ClusterScript(t, "start", holder)
	if err := nodes[other].Exec(context.Background(), chstore.Tool("SYSTEM START FETCHES")); err != nil {
		t.Fatal(err)
	}
	testkit.SyncReadings(context.Background(), t, nodes[other])
	rows, _ := f.cachedFleet(t)
	fresh := f.freshFleet(t)
	if got := fresh[loc+" 2024-03-03"].Energy.ValueExact; got != 28000 {
		t.Fatalf("fresh answer once the replicas caught up: %v Wh on March 3, want 28000", got)
	}
	sameRows(t, "asked again once the replicas caught up", rows, fresh)
}

// countsOn is the rows of loc's readings node db has counted.
func countsOn(t *testing.T, db *chstore.DB, loc string) uint64 {
	t.Helper()
	var n uint64
	if err := db.QueryRow(context.Background(), chstore.Tool("SELECT sum(n) FROM reading_changes_local WHERE location_id = ?"), loc).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// shardOf is the shard (1 or 2) that holds loc's readings: Distributed's
// cityHash64(location_id) over two shards of equal weight (docs/operations.md).
func shardOf(t *testing.T, f *bucketFleet, loc string) int {
	t.Helper()
	var h uint64
	if err := f.api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT toUInt64(cityHash64(?) % 2)"), loc).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return int(h) + 1
}

// nodeDB connects to one node of the cluster alone, in f's database.
func nodeDB(t *testing.T, f *bucketFleet, addr string) *chstore.DB {
	t.Helper()
	db := testkit.OpenNode(t, addr, f.api.App.Config.ClickHouse.Database)
	t.Cleanup(func() { db.Close() })
	return db
}
