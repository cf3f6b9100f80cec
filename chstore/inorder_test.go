package chstore

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
)

// A cluster whose profile leaves load_balancing at its default (random) is refused before
// anything is created: reads would meet replicas still fetching acknowledged writes. One
// server's default profile stands in for such a cluster's.
func TestAClusterProfileWithoutInOrderIsRefused(t *testing.T) {
	addr := os.Getenv("KWHOUSE_TEST_SINGLE_CLICKHOUSE_ADDR")
	if addr == "" && os.Getenv("KWHOUSE_TEST_CLICKHOUSE_CLUSTER") == "" {
		addr = os.Getenv("KWHOUSE_TEST_CLICKHOUSE_ADDR")
	}
	if addr == "" {
		t.Skip("needs a ClickHouse server (KWHOUSE_TEST_CLICKHOUSE_ADDR)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := config.ClickHouse{Addr: addr, Username: "default", DialTimeout: 2 * time.Second, MaxOpenConns: 1,
		MaxExecutionTime: 30 * time.Second, MaxMemoryUsage: 1 << 30}
	probe := cfg
	probe.Database = "default"
	db, err := Open(ctx, probe)
	if err != nil {
		t.Fatal(err)
	}
	var lb string
	err = db.QueryRow(ctx, Tool("SELECT value FROM system.settings WHERE name = 'load_balancing'")).Scan(&lb)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if lb == "in_order" {
		t.Skipf("the server's profile already reads in order")
	}
	cfg.Database, cfg.Cluster = "kwhouse_never_created", "kw"
	if _, err := Open(ctx, cfg); err == nil || !strings.Contains(err.Error(), "load_balancing is "+lb+"; kwhouse needs in_order") {
		t.Fatalf("open of a cluster balancing %s: %v, want refused for load_balancing", lb, err)
	}
}
