package tariffs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Price changes are recorded for priced fleet buckets (docs/costs.md, "Priced buckets"):
// a write that can change what a location's records cost adds to the counter of each UTC
// date it touches, or of date 1970-01-01 ("every date"). A bucket priced under some
// counts is served only while they are unchanged. Recorded after the write they describe
// succeeded (so a pricer that read the new count also sees the new prices), and also after
// a write that failed: it may have landed.
var (
	insertPriceChangesStmt = chstore.Register("tariffs.price_changes",
		"INSERT INTO price_changes (account_id, live_mode, location_id, day, n, version) VALUES")
	// A deleted location's kept sums: its priced buckets, priced months, demand peaks and days (deleteKept).
	dropKeptStmts = []struct {
		table string
		stmt  chstore.Statement
	}{
		{"priced_buckets", chstore.Register("tariffs.drop_buckets", "ALTER TABLE priced_buckets DELETE WHERE account_id = ? AND live_mode = ? AND location_id = ?")},
		{"demand_peaks", chstore.Register("tariffs.drop_demand_peaks", "ALTER TABLE demand_peaks DELETE WHERE account_id = ? AND live_mode = ? AND location_id = ?")},
		{"demand_days", chstore.Register("tariffs.drop_demand_days", "ALTER TABLE demand_days DELETE WHERE account_id = ? AND live_mode = ? AND location_id = ?")},
		{"priced_months", chstore.Register("tariffs.drop_months", "ALTER TABLE priced_months DELETE WHERE account_id = ? AND live_mode = ? AND location_id = ?")},
	}
)

// everyDate is the date of a price change that touches every date.
var everyDate = time.Unix(0, 0).UTC()

// maxMarkedDates bounds the dates one write marks one by one: a longer range marks every
// date (the buckets of its locations are priced again whatever their day).
const maxMarkedDates = 62

// markLocations records a price change of locations at every date.
func (s *Service) markLocations(ctx context.Context, scope kwhouse.Scope, locations ...string) error {
	return s.markDates(ctx, scope, locations, []time.Time{everyDate})
}

// markRange records a price change of locations over the UTC dates of [from, to).
func (s *Service) markRange(ctx context.Context, scope kwhouse.Scope, locations []string, from, to time.Time) error {
	var dates []time.Time
	first := from.UTC().Truncate(24 * time.Hour)
	for d := first; d.Before(to) && len(dates) <= maxMarkedDates; d = d.Add(24 * time.Hour) {
		dates = append(dates, d)
	}
	if len(dates) > maxMarkedDates {
		dates = []time.Time{everyDate}
	}
	return s.markDates(ctx, scope, locations, dates)
}

func (s *Service) markDates(ctx context.Context, scope kwhouse.Scope, locations []string, dates []time.Time) error {
	if len(locations) == 0 || len(dates) == 0 {
		return nil
	}
	ver := uint64(s.now().UnixNano())
	n := len(locations) * len(dates)
	err := s.docs.WriteMarks().Around(ctx, []kwhouse.Scope{scope}, func() error {
		return s.db.InsertRows(ctx, insertPriceChangesStmt, n, func(i int) []any {
			return []any{scope.AccountID, scope.LiveByte(), locations[i/len(dates)], dates[i%len(dates)], uint64(1), ver}
		})
	})
	if err != nil {
		return fmt.Errorf("record the price change of %d locations: %w", len(locations), err)
	}
	return nil
}

// followers returns the locations whose tariffs follow market id.
func (s *Service) followers(ctx context.Context, scope kwhouse.Scope, market string) ([]string, error) {
	all, err := s.ofScope(ctx, scope)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range all {
		if t.MarketRates && t.MarketID == market && !seen[t.LocationID] {
			seen[t.LocationID] = true
			out = append(out, t.LocationID)
		}
	}
	return out, nil
}

// dropBuckets marks a deleted location's prices changed everywhere, so that none of its
// priced buckets is served again, and then deletes them and its kept demand peaks (which
// no tariff of it can ask for again: their keys name its deleted tariffs) in the
// background: mutations, sent to a replica of every shard on a cluster (chstore's
// MutateShards; with a replica down, its shard waits for the dial to fail), so the
// location's delete does not wait for them. A process that stops first leaves the buckets marked stale, never
// served, and the peaks unread (the location is gone).
func (s *Service) dropBuckets(ctx context.Context, scope kwhouse.Scope, location string) error {
	if err := s.markLocations(ctx, scope, location); err != nil {
		return err
	}
	go s.deleteKept(context.WithoutCancel(ctx), scope, location)
	return nil
}

// bucketDeleteTimeout bounds the background delete of a location's buckets and peaks.
const bucketDeleteTimeout = 5 * time.Minute

// deleteKept deletes a deleted location's priced buckets and demand peaks, one table
// after the other.
func (s *Service) deleteKept(ctx context.Context, scope kwhouse.Scope, location string) {
	ctx, cancel := context.WithTimeout(ctx, bucketDeleteTimeout)
	defer cancel()
	for _, d := range dropKeptStmts {
		st := d.stmt
		if s.db.Cluster != "" { // a mutation runs on each shard's table, not the Distributed one
			st = st.With("ALTER TABLE " + d.table + "_local DELETE WHERE account_id = ? AND live_mode = ? AND location_id = ?")
		}
		if err := s.db.MutateShards(ctx, st, scope.AccountID, scope.LiveByte(), location); err != nil {
			slog.Warn("delete the kept sums of a deleted location (buckets stay marked stale, peaks unread)",
				"location", location, "table", d.table, "err", err)
		}
	}
}

// pricesChange is what a market price write changes: the records of the locations
// following the market, over the written intervals only (tomorrow's prices leave every
// past bucket served).
func (s *Service) pricesChange(ctx context.Context, scope kwhouse.Scope, market string, prices []MarketPrice) (PriceChange, error) {
	if len(prices) == 0 {
		return PriceChange{}, nil
	}
	locations, err := s.followers(ctx, scope, market)
	if err != nil {
		return PriceChange{}, err
	}
	from, to := prices[0].StartTime.Time(), prices[0].EndTime.Time()
	for _, p := range prices {
		if t := p.StartTime.Time(); t.Before(from) {
			from = t
		}
		if t := p.EndTime.Time(); t.After(to) {
			to = t
		}
	}
	return PriceChange{Locations: locations, From: from, To: to}, nil
}
