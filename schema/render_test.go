package schema_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/schema"
)

// Migrations are never edited once applied: the single-node DDL of each stays byte for
// byte what servers ran (hashes taken when each was applied; 0003 and 0006 gained
// cluster-only template pieces that render empty or unchanged on one node).
func TestSingleNodeDDLIsUnchanged(t *testing.T) {
	want := map[int]string{
		1: "5a1d81e42c56e1fa4f10310b587aa392bd4f69a132b1f2ec7dd5e94da0ca394e",
		2: "a23d474824823ff0325a53396e0201af52c18bc83a6f38afe00e6d5f32469fad",
		3: "2f3d52812cf8c401671318cac44aafe04e3e030e5c4242a6fe50d23dd5765b76",
		4: "10c94f1158f4a95b614d3bb60eee2d73c51e63055afa93e4455a751c778d46f9",
		5: "cebd037fd3a9791b4c2a8e108276cdabe2b2c6d5bc6a3e867b758049e602683e",
		6: "1832ea7ef6238aeab8388757cffd8b7b336cfafe6e10d77494bf415d4086263a",
		7: "027cacb67869a49ad4023ee3af155bd834193f9cd689674531dde9a352a7e87a",
	}
	migs, err := schema.Migrations(schema.Form{Database: "kwhouse"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		got := fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(m.Statements, ";\n"))))
		if w, ok := want[m.Version]; ok && got != w {
			t.Errorf("migration %04d_%s renders differently on one node than when it was applied:\n%s", m.Version, m.Name, strings.Join(m.Statements, ";\n"))
		}
	}
}

func TestClusterFormShardsRecordsAndReplicatesTheRest(t *testing.T) {
	migs, err := schema.Migrations(schema.Form{Cluster: "kw", Database: "kwdb"})
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, m := range migs {
		all += strings.Join(m.Statements, ";\n") + ";\n"
	}
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS meter_records_local ON CLUSTER kw",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/kwdb/meter_records_local', '{replica}', version)",
		"CREATE TABLE IF NOT EXISTS meter_records ON CLUSTER kw AS kwdb.meter_records_local ENGINE = Distributed(kw, kwdb, meter_records_local, cityHash64(location_id))",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/documents', '{replica}', version)",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/accounts', '{replica}', version)",
		"CREATE TABLE IF NOT EXISTS documents_g256 ON CLUSTER kw AS kwdb.documents",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/documents_g256', '{replica}', version)",
		// Priced buckets and their change records live on their location's shard; the view
		// counts each shard's own inserts.
		"CREATE MATERIALIZED VIEW IF NOT EXISTS reading_changes_mv ON CLUSTER kw TO kwdb.reading_changes_local",
		"FROM kwdb.meter_records_local",
		"ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/kwdb/reading_changes_local', '{replica}', n)",
		"CREATE TABLE IF NOT EXISTS price_changes ON CLUSTER kw AS kwdb.price_changes_local ENGINE = Distributed(kw, kwdb, price_changes_local, cityHash64(location_id))",
		"CREATE TABLE IF NOT EXISTS priced_buckets ON CLUSTER kw AS kwdb.priced_buckets_local ENGINE = Distributed(kw, kwdb, priced_buckets_local, cityHash64(location_id))",
		// Webhooks: the outbox view fires where the insert lands; its table replicates.
		"CREATE TABLE IF NOT EXISTS webhook_outbox ON CLUSTER kw",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/webhook_outbox', '{replica}')",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS webhook_outbox_feed ON CLUSTER kw TO kwdb.webhook_outbox",
		"FROM kwdb.documents\nWHERE kind = 'event'",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/webhook_deliveries', '{replica}')",
		"ReplicatedReplacingMergeTree('/clickhouse/tables/all/kwdb/webhook_cursor', '{replica}', position)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("cluster DDL lacks %s", want)
		}
	}
	if strings.Contains(all, "{uuid}") || strings.Contains(all, "{table}") {
		t.Error("cluster DDL uses a macro 18.16 lacks or stores unexpanded")
	}
}
