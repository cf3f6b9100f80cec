package tariffs

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// MarketInterval is a market's price over [Start, End), Unix seconds.
type MarketInterval struct {
	Start, End        int64
	Price, Confidence float64
}

// The latest version of each interval, as the price segments read it (cost_segments.sql):
// argMax by version rather than FINAL, filtered on key columns only.
var marketPricesStmt = chstore.Register("tariffs.market_prices", `SELECT toUInt32(start_time) AS s,
		toUInt32(argMax(end_time, version)) AS e, argMax(price, version) AS p, argMax(confidence, version) AS c
	FROM market_prices
	WHERE account_id = ? AND live_mode = ? AND market_id = ? AND start_time > ? AND start_time < ?
	GROUP BY start_time
	ORDER BY start_time`)

// MarketPrices returns the intervals of a market that overlap [from, to), in time order
// (an interval is at most 31 days long).
func (s *Service) MarketPrices(ctx context.Context, scope kwhouse.Scope, market string, from, to int64) ([]MarketInterval, error) {
	rows, err := s.db.Query(ctx, marketPricesStmt, scope.AccountID, scope.LiveByte(), market,
		time.Unix(from-32*86400, 0).UTC(), time.Unix(to, 0).UTC())
	if err != nil {
		return nil, fmt.Errorf("prices of market %s: %w", market, err)
	}
	defer rows.Close()
	var out []MarketInterval
	for rows.Next() {
		var a, b uint32
		var iv MarketInterval
		if err := rows.Scan(&a, &b, &iv.Price, &iv.Confidence); err != nil {
			return nil, fmt.Errorf("scan market price: %w", err)
		}
		if iv.Start, iv.End = int64(a), int64(b); iv.End > from {
			out = append(out, iv)
		}
	}
	return out, rows.Err()
}
