package chstore

import (
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kwhouse/kwhouse/config"
)

// On a cluster, inserts into metadata tables take the quorum and reads the sequential
// consistency; readings (sharded) and Eventual statements do not; one server takes neither.
func TestQuorumOnlyForClusterMetadata(t *testing.T) {
	v := driver.ServerVersion{Version: struct{ Major, Minor, Patch uint64 }{18, 16, 1}}
	cluster := NewDB(nil, config.ClickHouse{Cluster: "kw", InsertQuorum: 2, QuorumWait: time.Second}, v)
	single := NewDB(nil, config.ClickHouse{InsertQuorum: 2, QuorumWait: time.Second}, v)
	cases := []struct {
		sql  string
		want bool
	}{
		{"INSERT INTO documents (a, b) VALUES", true},
		{"INSERT INTO tariff_rates (a) VALUES", true},
		{"INSERT INTO meter_records (a) VALUES", false},
		{"SELECT 1", false},
	}
	for _, c := range cases {
		if got := cluster.quorumInsert(c.sql); got != c.want {
			t.Errorf("cluster %q: quorum %v, want %v", c.sql, got, c.want)
		}
		if single.quorumInsert(c.sql) {
			t.Errorf("one server %q: quorum, want none", c.sql)
		}
	}
	if cluster.read["select_sequential_consistency"] != 1 || single.read["select_sequential_consistency"] != nil {
		t.Errorf("sequential consistency: cluster %v, one server %v", cluster.read, single.read)
	}
	if cluster.quorum["insert_quorum"] != 2 || cluster.quorum["insert_quorum_timeout"] != 1000 {
		t.Errorf("quorum settings %v", cluster.quorum)
	}
}
