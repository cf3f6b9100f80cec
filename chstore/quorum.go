package chstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ShardingKeys are the tables spread over a cluster's shards (through a Distributed
// table of the same name), with their sharding key: a location's readings live on one
// shard, so per-reading argMax/FINAL stay exact. Every other table is metadata, replicated
// to every node. The schema renders its DDL from this map; inserts consult it.
var ShardingKeys = map[string]string{"meter_records": "cityHash64(location_id)",
	// The tables migration 0008 copies meter_records through, sharded as it is.
	"meter_records_by_day": "cityHash64(location_id)", "meter_records_by_month": "cityHash64(location_id)",
	// The tables migration 0024 copies meter_records through, sharded as it is.
	"meter_records_1k": "cityHash64(location_id)", "meter_records_8k": "cityHash64(location_id)",
	// Priced buckets and their change records live with their location's readings
	// (docs/costs.md, "Priced buckets").
	"reading_changes": "cityHash64(location_id)", "price_changes": "cityHash64(location_id)",
	"priced_buckets": "cityHash64(location_id)", "demand_peaks": "cityHash64(location_id)", "demand_days": "cityHash64(location_id)",
	"reading_changes_by_month": "cityHash64(location_id)", "priced_months": "cityHash64(location_id)",
	// The tables migration 0023 copies demand_peaks through, sharded as it is.
	"demand_peaks_by_month": "cityHash64(location_id)", "demand_peaks_by_year": "cityHash64(location_id)"}

// Read your writes on a cluster (docs/operations.md, "One service on any node"): a
// metadata insert is acknowledged once clickhouse.insert_quorum replicas have it
// (insert_quorum), and every read asks its replica to have every such part first
// (select_sequential_consistency). 18.16 lets one quorum insert of a table run at a time,
// cluster-wide: a second one fails at once with code 286 and is sent again here; a read on
// a replica still fetching the last quorum part fails with code 289 and is sent again.
const (
	codeTooFewLiveReplicas = 285 // fewer replicas alive than the quorum
	codeQuorumBusy         = 286 // UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE
	codeReplicaBehind      = 289 // REPLICA_IS_NOT_IN_QUORUM
	codeQuorumUnknown      = 319 // UNKNOWN_STATUS_OF_INSERT: the quorum timed out
)

var insertTarget = regexp.MustCompile(`^\s*INSERT INTO\s+(\w+)`)

// quorumInsert reports whether an INSERT of sql takes the metadata quorum.
func (db *DB) quorumInsert(sql string) bool {
	if db.quorum == nil {
		return false
	}
	m := insertTarget.FindStringSubmatch(sql)
	if m == nil {
		return false
	}
	_, sharded := ShardingKeys[m[1]]
	return !sharded
}

// quorumBatch keeps an insert's rows so that the insert can be sent again while another
// quorum insert of the table is in flight.
type quorumBatch struct {
	db   *DB
	ctx  context.Context
	st   Statement
	rows [][]any
}

func (b *quorumBatch) Append(values ...any) error {
	b.rows = append(b.rows, append([]any(nil), values...))
	return nil
}

// Column is not offered: metadata inserts append rows.
func (b *quorumBatch) Column(int) BatchColumn { return failingColumn{} }

func (b *quorumBatch) Abort() error { b.rows = nil; return nil }

// Send inserts the rows, again after a short random pause while the table's previous
// quorum insert is unfinished, until clickhouse.quorum_wait has passed.
func (b *quorumBatch) Send() error {
	return b.db.untilQuorum(b.ctx, codeQuorumBusy, func() error { return b.send() })
}

func (b *quorumBatch) send() error {
	batch, err := b.db.engine.PrepareBatch(b.ctx, b.db.quorum, b.st.SQL)
	if err != nil {
		return err
	}
	for _, r := range b.rows {
		if err := batch.Append(r...); err != nil {
			_ = batch.Abort()
			return err
		}
	}
	return batch.Send()
}

type failingColumn struct{}

func (failingColumn) Append(any) error {
	return errors.New("chstore: a metadata insert appends rows, not columns")
}

// untilQuorum runs do again while it fails with the server exception code, pausing a
// little longer each time, for up to clickhouse.quorum_wait.
func (db *DB) untilQuorum(ctx context.Context, code int32, do func() error) error {
	deadline := time.Now().Add(db.quorumWait)
	pause := 5 * time.Millisecond
	for {
		err := do()
		var ex *clickhouse.Exception
		if err == nil || !errors.As(err, &ex) || ex.Code != code || time.Now().After(deadline) {
			return err
		}
		wait := pause/2 + rand.N(pause) // jittered: two processes' retries do not meet again
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting for the quorum: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}
