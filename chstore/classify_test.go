package chstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/kwhouse/kwhouse"
)

// A store that is down answers 503, whatever way its failure reaches kwhouse; a query
// ClickHouse refuses stays an internal error.
func TestClassifyTellsAStoreThatIsDownFromAQueryThatIsWrong(t *testing.T) {
	cases := []struct {
		name string
		err  error
		down bool
	}{
		{"a replica killed mid-query", &clickhouse.Exception{Code: 32, Message: "Attempt to read after eof"}, true},
		{"every replica of a shard down", &clickhouse.Exception{Code: 279, Message: "All connection tries failed"}, true},
		{"a read-only replica", fmt.Errorf("read: %w", &clickhouse.Exception{Code: 242}), true},
		{"an insert into a replica whose replication has not restarted", &clickhouse.Exception{Code: 164,
			Message: "Replica is not active right now"}, true},
		{"a user set read-only", &clickhouse.Exception{Code: 164,
			Message: "Cannot execute query in readonly mode"}, false},
		{"a syntax error", &clickhouse.Exception{Code: 62, Message: "Syntax error"}, false},
		{"an unknown column", &clickhouse.Exception{Code: 47}, false},
		{"a plain error", errors.New("bad value"), false},
	}
	for _, c := range cases {
		err := Classify(c.err)
		down := kwhouse.KindOf(err) == kwhouse.KindUnavailable
		if down != c.down {
			t.Errorf("%s: Classify gave %v (503: %v), want 503: %v", c.name, err, down, c.down)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: Classify lost the cause %v", c.name, c.err)
		}
	}
}
