package main

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
)

// emptyBuckets removes every priced bucket. On a cluster it truncates the local table on
// the first replica of each shard, which replicates the truncation to the others:
// TRUNCATE … ON CLUSTER runs it on both replicas of a shard at once, and on 18.16 those
// two waited on each other until the distributed DDL timed out.
func emptyBuckets(ctx context.Context, a *app.App) error {
	c := a.Config.ClickHouse
	if c.Cluster == "" {
		return a.DB.Exec(ctx, chstore.Tool("TRUNCATE TABLE priced_buckets"))
	}
	rows, err := a.DB.Query(ctx, chstore.Tool("SELECT host_address, port FROM system.clusters WHERE cluster = ? AND replica_num = 1"), c.Cluster)
	if err != nil {
		return fmt.Errorf("the cluster's shards: %w", err)
	}
	var addrs []string
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			rows.Close()
			return err
		}
		addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
	}
	rows.Close()
	for _, addr := range addrs {
		one := c
		one.Addr, one.Cluster = addr, ""
		db, err := chstore.Open(ctx, one)
		if err != nil {
			return fmt.Errorf("open shard %s: %w", addr, err)
		}
		err = db.Exec(ctx, chstore.Tool("TRUNCATE TABLE priced_buckets_local"))
		db.Close()
		if err != nil {
			return fmt.Errorf("empty the buckets of shard %s: %w", addr, err)
		}
	}
	return nil
}
