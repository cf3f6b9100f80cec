package schema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/schema"
	"github.com/kwhouse/kwhouse/testkit"
)

func TestApplyCreatesTablesAndIsIdempotent(t *testing.T) {
	db := testkit.ClickHouse(t) // applies every migration once
	ctx := context.Background()
	if err := schema.Apply(ctx, db, testkit.Logger()); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	migs, err := schema.Migrations(schema.Form{})
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	if err := db.QueryRow(ctx, chstore.Tool("SELECT count() FROM (SELECT DISTINCT version FROM schema_migrations)")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if int(n) != len(migs) {
		t.Fatalf("schema_migrations has %d versions, want %d", n, len(migs))
	}
	for _, table := range []string{"accounts", "api_keys", "documents", "meter_records", "meter_batches", "device_last_seen"} {
		var c uint64
		if err := db.QueryRow(ctx, chstore.Tool("SELECT count() FROM system.tables WHERE database = ? AND name = ?"), db.Database, table).Scan(&c); err != nil {
			t.Fatal(err)
		}
		if c != 1 {
			t.Errorf("table %s missing", table)
		}
	}
}

func TestClusterFormUsesReplicatedEnginesAndOnCluster(t *testing.T) {
	migs, err := schema.Migrations(schema.Form{Cluster: "kw", Database: "kwhouse"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		for _, s := range m.Statements {
			// INSERT … SELECT has no ON CLUSTER: into a replicated table it reaches the
			// shard's replicas by replication.
			creates := contains(s, "CREATE TABLE")
			inserts := strings.HasPrefix(strings.TrimSpace(stripComments(s)), "INSERT")
			if (!inserts && !contains(s, "ON CLUSTER kw")) || (creates && !contains(s, "ENGINE = Replicated") && !contains(s, "ENGINE = Distributed")) {
				t.Errorf("migration %d statement lacks the cluster form:\n%s", m.Version, s)
			}
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// stripComments drops "--" comment lines.
func stripComments(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
