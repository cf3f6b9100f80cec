package query_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A shard's first replica dies after an answer read its state token there and before
// the answer read the shard: the answer is computed from the second replica, which had
// not fetched a reading acknowledged before the request (its fetches are stopped). Once
// both replicas hold the reading again the token is the one read before computing, and
// the answer asked again must count the reading: the answer computed without it was
// never kept (docs/costs.md, "Answer cache").
func TestAnswerCacheKeepsNoAnswerFromAReplicaThatFailedOverBehindItsToken(t *testing.T) {
	if os.Getenv("KWHOUSE_TEST_CLICKHOUSE_CLUSTER") == "" {
		t.Skip("needs the local cluster (scripts/cluster.sh)")
	}
	var armed atomic.Bool
	var tokenRead atomic.Bool
	killed := make(chan struct{})
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn, Observe: func(st chstore.Statement) {
		if !armed.Load() {
			return
		}
		if st.Name == "query.fleet_token" {
			tokenRead.Store(true)
			return
		}
		if tokenRead.Load() && armed.CompareAndSwap(true, false) {
			clusterScript(t, "kill", "3") // shard 2's first replica, before the answer's first read
			close(killed)
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

	node4 := nodeDB(t, f, "127.0.0.1:9104")
	t.Cleanup(func() {
		clusterScript(t, "start", "3")
		_ = node4.Exec(context.Background(), chstore.Tool("SYSTEM START FETCHES"))
	})
	if err := node4.Exec(context.Background(), chstore.Tool("SYSTEM STOP FETCHES")); err != nil {
		t.Fatal(err)
	}
	f.readings(loc, time.Date(2024, 3, 3, 10, 0, 0, 0, time.UTC), 1, 5000) // acknowledged by node 3 alone
	armed.Store(true)
	during, hit := f.cachedFleet(t)
	select {
	case <-killed:
	default:
		t.Fatal("the answer ran no statement after its token")
	}
	if hit {
		t.Fatal("the answer after a reading was served from the cache")
	}
	if got := during[loc+" 2024-03-03"].Energy.ValueExact; got != 24000 {
		t.Logf("answered from the second replica: %v Wh on March 3 (it lacked the reading)", got)
	}

	clusterScript(t, "start", "3")
	if err := node4.Exec(context.Background(), chstore.Tool("SYSTEM START FETCHES")); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"meter_records_local", "reading_changes_local", "reading_changes_by_month_local", "price_changes_local"} {
		if err := node4.Exec(context.Background(), chstore.Tool("SYSTEM SYNC REPLICA "+table)); err != nil {
			t.Fatalf("sync %s on node 4: %v", table, err)
		}
	}
	rows, _ := f.cachedFleet(t)
	fresh := f.freshFleet(t)
	if got := fresh[loc+" 2024-03-03"].Energy.ValueExact; got != 28000 {
		t.Fatalf("fresh answer once the replicas caught up: %v Wh on March 3, want 28000", got)
	}
	sameRows(t, "asked again once the replicas caught up", rows, fresh)
}

// shardOf is the shard (1 or 2) that holds loc's readings: Distributed's
// cityHash64(location_id) over two shards of equal weight (docs/operations.md).
func shardOf(t *testing.T, f *bucketFleet, loc string) int {
	t.Helper()
	var h uint64
	if err := f.api.App.DB.QueryRow(context.Background(), chstore.Tool("SELECT cityHash64(?) % 2"), loc).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return int(h) + 1
}

// nodeDB connects to one node of the cluster alone, in f's database.
func nodeDB(t *testing.T, f *bucketFleet, addr string) *chstore.DB {
	t.Helper()
	cfg := config.ClickHouse{Addr: addr, Database: f.api.App.Config.ClickHouse.Database, Username: "default",
		DialTimeout: 2 * time.Second, MaxOpenConns: 2, MaxExecutionTime: 60 * time.Second, MaxMemoryUsage: 1 << 30}
	db, err := chstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s: %v", addr, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// clusterScript runs scripts/cluster.sh with args.
func clusterScript(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("../scripts/cluster.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster.sh %v: %v\n%s", args, err, out)
	}
	t.Logf("cluster.sh %v %s", args, strings.TrimSpace(string(out)))
}
