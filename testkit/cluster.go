package testkit

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
)

// ClusterScript runs scripts/cluster.sh with args (kill N, start N, …) from a test of a
// package one level below the repository root.
func ClusterScript(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("../scripts/cluster.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster.sh %v: %v\n%s", args, err, out)
	}
	t.Logf("cluster.sh %v %s", args, strings.TrimSpace(string(out)))
}

// OpenNode connects to one node of the local cluster alone (its _local tables), in
// database; the caller closes it.
func OpenNode(t testing.TB, addr, database string) *chstore.DB {
	t.Helper()
	cfg := config.ClickHouse{Addr: addr, Database: database, Username: "default", DialTimeout: 2 * time.Second,
		MaxOpenConns: 2, MaxExecutionTime: 60 * time.Second, MaxMemoryUsage: 1 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := chstore.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", addr, err)
	}
	return db
}

// ReadingTables are the replicated tables a reading is written to on a shard: its rows
// and the change counts its views add.
var ReadingTables = []string{"meter_records_local", "reading_changes_local", "reading_changes_by_month_local"}

// SyncReadings waits until node db holds every part of ReadingTables its peer has.
func SyncReadings(ctx context.Context, t testing.TB, db *chstore.DB) {
	t.Helper()
	for _, table := range ReadingTables {
		if err := db.Exec(ctx, chstore.Tool("SYSTEM SYNC REPLICA "+table)); err != nil {
			t.Errorf("sync %s: %v", table, err)
		}
	}
}
