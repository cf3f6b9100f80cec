package chstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/kwhouse/kwhouse"
)

// Mutations on a cluster run without ON CLUSTER. A mutation of a Replicated table issued
// on one replica is queued in ZooKeeper for every replica of that table, so:
//   - a table replicated on every node (documents, webhooks) takes it through the pool,
//     on whichever node answers (Exec);
//   - a sharded table's shard tables (<name>_local) take it on one replica of each shard
//     (MutateShards).
//
// 18.16's DDL worker runs an ALTER … ON CLUSTER of a Replicated table on one replica of
// each shard, the replicas racing for it in ZooKeeper; a replica that loses the race with
// "Node exists" stops executing distributed DDL until it restarts, and every later ON
// CLUSTER statement (migrations, CREATE DATABASE) then waits for it until
// distributed_ddl_task_timeout. The local cluster hit it in a test run deleting locations
// (docs/operations.md, "Running on a ClickHouse cluster").

// shardReplicasStmt is read on a cluster only, so it is not registered: the conformance
// scenario, which replays every registered statement on chDB, has no cluster.
var shardReplicasStmt = Statement{Name: "chstore.shard_replicas",
	SQL: "SELECT shard_num, host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num"}

// MutateShards runs st, an ALTER TABLE … DELETE of a sharded table, on every shard. On one
// server it runs as Exec does, st naming the table. On a cluster st names the shard table
// (<name>_local) and runs on the first replica of each shard that answers.
func (db *DB) MutateShards(ctx context.Context, st Statement, args ...any) error {
	if db.Cluster == "" {
		return db.Exec(ctx, st, args...)
	}
	shards, err := db.shardReplicas(ctx)
	if err != nil {
		return err
	}
	q, err := db.render(st, args)
	if err != nil {
		return err
	}
	for _, replicas := range shards {
		if err := db.execOnOneOf(ctx, replicas, q); err != nil {
			return err
		}
	}
	return nil
}

// shardReplicas returns the native addresses of each shard's replicas, shards in order.
func (db *DB) shardReplicas(ctx context.Context) ([][]string, error) {
	rows, err := db.Query(ctx, shardReplicasStmt, db.Cluster)
	if err != nil {
		return nil, fmt.Errorf("replicas of cluster %s: %w", db.Cluster, err)
	}
	defer rows.Close()
	var out [][]string
	last := uint32(0)
	for rows.Next() {
		var shard uint32
		var host string
		var port uint16
		if err := rows.Scan(&shard, &host, &port); err != nil {
			return nil, fmt.Errorf("replicas of cluster %s: %w", db.Cluster, err)
		}
		if len(out) == 0 || shard != last {
			out = append(out, nil)
			last = shard
		}
		i := len(out) - 1
		out[i] = append(out[i], net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("replicas of cluster %s: %w", db.Cluster, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster %s: no shards in system.clusters", db.Cluster)
	}
	return out, nil
}

// execOnOneOf runs q on the first of replicas that can be reached.
func (db *DB) execOnOneOf(ctx context.Context, replicas []string, q string) error {
	var errs []error
	for _, addr := range replicas {
		cfg := db.cfg
		cfg.Addr = addr
		conn, err := dial(cfg, db.Database)
		if err == nil {
			err = Classify(native{conn}.Exec(ctx, db.write, q))
			conn.Close()
		}
		if err == nil {
			return nil
		}
		if kwhouse.KindOf(err) != kwhouse.KindUnavailable {
			return fmt.Errorf("on replica %s: %w", addr, err)
		}
		errs = append(errs, fmt.Errorf("replica %s: %w", addr, err))
	}
	return errors.Join(errs...)
}
