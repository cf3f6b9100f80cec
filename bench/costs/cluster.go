package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
)

// emptyBuckets leaves no priced bucket or month of the fixture usable, nor a cached answer.
// On one server it empties priced_buckets and priced_months. On both it records a price
// change of every date for each of the fixture's locations (what a tariff write records): every bucket is then stale
// and priced again, as if none were kept. A TRUNCATE of the replicated table hung on
// 18.16 (both replicas of a shard waiting on each other with ON CLUSTER, and a replica's
// drop of the range waiting without it), leaving the shard's buckets locked.
func emptyBuckets(ctx context.Context, a *app.App, fx *fixture) error {
	// The previous answer's write-back lands first: after the TRUNCATE it would keep its
	// buckets (stale ones), and the timed answer would wait for it (Fleet).
	if err := a.Pricer.WaitBucketWrites(ctx, fx.scope); err != nil {
		return err
	}
	if a.Config.ClickHouse.Cluster == "" {
		if err := a.DB.Exec(ctx, chstore.Tool("TRUNCATE TABLE priced_months")); err != nil {
			return err
		}
		if err := a.DB.Exec(ctx, chstore.Tool("TRUNCATE TABLE priced_buckets")); err != nil {
			return err
		}
		// The price changes below also make the answer cache miss (its state token counts them).
	}
	return marked(ctx, a, fx.scope, func() error { return changeEveryPrice(ctx, a, fx) })
}

// changeEveryPrice records a price change of every date of every location of fx.
func changeEveryPrice(ctx context.Context, a *app.App, fx *fixture) error {
	b, err := a.DB.Insert(ctx, chstore.Tool("INSERT INTO price_changes (account_id, live_mode, location_id, day, n, version) VALUES"))
	if err != nil {
		return fmt.Errorf("stale buckets: %w", err)
	}
	version := uint64(time.Now().UnixNano())
	for _, loc := range fx.locations {
		if err := b.Append(fx.scope.AccountID, uint8(0), loc, time.Unix(0, 0).UTC(), uint64(1), version); err != nil {
			_ = b.Abort()
			return err
		}
	}
	return b.Send()
}
