package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Leases give one process at a time a key for a while (rediscache.Cache.Lock): ok=false
// with no error means the lease service is down and nothing is held.
type Leases interface {
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), ok bool, err error)
}

// BucketPricer prices, in the background, the buckets that writes made stale or that
// were never priced, so that dashboards rarely price on their read path: every interval,
// for each scope with readings in the last days, it asks the fleet of that scope (both
// directions, locations and devices, by DAY), which prices and writes back what changed.
// One process prices a scope at a time: it holds the scope's lease for the pass.
type BucketPricer struct {
	pricer   *Pricer
	leases   Leases
	log      *slog.Logger
	interval time.Duration
	days     int
	lastPass atomic.Int64 // Unix nanoseconds when the last complete pass started (0: none yet)
}

var (
	recentScopesStmt = chstore.Register("query.recent_scopes", `SELECT DISTINCT account_id, live_mode FROM reading_changes
	WHERE day >= toDate(?) ORDER BY account_id, live_mode`)
	// The directions and groupings (devices or not) a scope has readings of in a window.
	recentKindsStmt = chstore.Register("query.recent_kinds", `SELECT DISTINCT toString(direction), toUInt8(device_id != '')
	FROM reading_changes WHERE account_id = ? AND live_mode = ? AND day >= toDate(?)`)
)

// NewBucketPricer returns a background pricer of the buckets of the last days days.
func NewBucketPricer(p *Pricer, leases Leases, log *slog.Logger, interval time.Duration, days int) *BucketPricer {
	return &BucketPricer{pricer: p, leases: leases, log: log, interval: interval, days: days}
}

// Run prices every interval until ctx ends.
func (b *BucketPricer) Run(ctx context.Context) {
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		if err := b.Pass(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("background bucket pricing", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Lag is how old a change the pricer may not have priced yet: the time since its last
// complete pass started (every change before that is priced), or 0 before the first one.
func (b *BucketPricer) Lag() time.Duration {
	at := b.lastPass.Load()
	if at == 0 {
		return 0
	}
	return b.pricer.now().Sub(time.Unix(0, at))
}

// Pass prices the stale buckets of every scope with recent readings once; scopes whose
// lease another process holds are left to it.
func (b *BucketPricer) Pass(ctx context.Context) error {
	start := b.pricer.now()
	w0 := start.UTC().Truncate(24*time.Hour).AddDate(0, 0, -b.days)
	w1 := start.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	scopes, err := b.recentScopes(ctx, w0)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range scopes {
		if err := b.priceScope(ctx, s, w0, w1); err != nil {
			errs = append(errs, fmt.Errorf("scope %s (live %t): %w", s.AccountID, s.LiveMode, err))
		}
	}
	if len(errs) == 0 {
		b.lastPass.Store(start.UnixNano())
	}
	return errors.Join(errs...)
}

func (b *BucketPricer) recentScopes(ctx context.Context, from time.Time) ([]kwhouse.Scope, error) {
	rows, err := b.pricer.db.Query(chstore.Background(ctx), recentScopesStmt, from.Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("scopes with recent readings: %w", err)
	}
	defer rows.Close()
	var out []kwhouse.Scope
	for rows.Next() {
		var s kwhouse.Scope
		var live uint8
		if err := rows.Scan(&s.AccountID, &live); err != nil {
			return nil, fmt.Errorf("scan scope: %w", err)
		}
		s.LiveMode = live == 1
		out = append(out, s)
	}
	return out, rows.Err()
}

// priceScope asks the scope's fleet of [w0, w1) in every direction and grouping it has
// readings of there, and keeps the demand peaks of those directions' months, holding the
// scope's lease until the buckets and peaks it priced are written. A direction without
// readings in the window has only empty buckets there (a tiered location's import
// readings make its export buckets stale too: its tier counters count both), so it is
// left to the read path, which prices it if ever asked.
func (b *BucketPricer) priceScope(ctx context.Context, scope kwhouse.Scope, w0, w1 time.Time) error {
	unlock, _, err := b.leases.Lock(ctx, fmt.Sprintf("bucket-pricer:%s:%t", scope.AccountID, scope.LiveMode), 10*b.interval)
	if err != nil || unlock == nil {
		return nil // held: another process prices this scope now
	}
	defer unlock()
	ctx = chstore.Background(ctx)
	kinds, err := b.recentKinds(ctx, scope, w0)
	if err != nil {
		return err
	}
	for _, dir := range []string{"IMPORT", "EXPORT"} {
		for _, group := range []string{GroupLocation, GroupDevice} {
			if !kinds[dir+" "+group] {
				continue
			}
			if err := b.priceKind(ctx, scope, dir, group, w0, w1); err != nil {
				return fmt.Errorf("%s %s: %w", dir, group, err)
			}
		}
		if !kinds[dir+" "+GroupLocation] {
			continue // demand is measured from location-level readings only
		}
		if err := b.pricer.keepFleetPeaks(ctx, scope, dir, w0, w1); err != nil {
			return fmt.Errorf("%s demand peaks: %w", dir, err)
		}
	}
	return b.pricer.WaitBucketWrites(ctx, scope) // the pass is complete once its buckets and peaks are written
}

// priceKind asks the fleet of one direction and grouping over [w0, w1), which prices its
// stale buckets. When it priced any, it asks once more over the whole local months the
// window touches, a day more on each side (so that they are whole in every zone): that
// answer verifies the months priced again from their buckets' latest versions and keeps
// them as priced months (priced_months.go), so a dashboard's MONTH answer reads them as
// kept instead of summing their buckets, and prices nothing unless a write landed meanwhile.
func (b *BucketPricer) priceKind(ctx context.Context, scope kwhouse.Scope, dir, group string, w0, w1 time.Time) error {
	// Buckets are priced and kept per day whatever the aggregation asked: one row per
	// location is the least answer to build (it is not used).
	req := FleetRequest{Start: w0, End: w1, Direction: dir, Aggregation: FleetAggregationNone, GroupBy: group, All: true}
	priced := b.pricer.BucketCounts().Priced
	if _, err := b.pricer.Fleet(ctx, scope, req); err != nil || b.pricer.BucketCounts().Priced == priced {
		return err
	}
	last := w1.Add(-time.Nanosecond)
	req.Start = time.Date(w0.Year(), w0.Month(), 0, 0, 0, 0, 0, time.UTC)
	req.End = time.Date(last.Year(), last.Month()+1, 2, 0, 0, 0, 0, time.UTC)
	if _, err := b.pricer.Fleet(ctx, scope, req); err != nil {
		return fmt.Errorf("keep the months priced again: %w", err)
	}
	return nil
}

// recentKinds returns the "direction grouping" pairs (IMPORT location, EXPORT device, …)
// the scope has readings of from w0 on.
func (b *BucketPricer) recentKinds(ctx context.Context, scope kwhouse.Scope, w0 time.Time) (map[string]bool, error) {
	rows, err := b.pricer.db.Query(ctx, recentKindsStmt, scope.AccountID, scope.LiveByte(), w0.Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("directions with recent readings: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var dir string
		var devices uint8
		if err := rows.Scan(&dir, &devices); err != nil {
			return nil, fmt.Errorf("scan direction: %w", err)
		}
		group := GroupLocation
		if devices == 1 {
			group = GroupDevice
		}
		out[dir+" "+group] = true
	}
	return out, rows.Err()
}
