package tariffs

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// MarketInterval is one market price in force over [Start, End).
type MarketInterval struct {
	Start, End int64
	Price      float64
	Confidence float64
}

// maxPriceInterval is how far before a window a price interval may start and still
// reach into it (the cost and rates queries look back as far).
const maxPriceInterval = 32 * 86400

// The latest price of each interval: a re-sent interval replaces the old one (argMax,
// not FINAL: end_time is not in the key).
var marketPricesStmt = chstore.Register("tariffs.market_prices", `SELECT market_id, toUInt32(start_time),
		toUInt32(argMax(end_time, version)) AS e, argMax(price, version), argMax(confidence, version)
	FROM market_prices
	WHERE account_id = ? AND live_mode = ? AND market_id IN ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)
	GROUP BY market_id, start_time
	HAVING e > ?
	ORDER BY market_id, start_time`)

// MarketPrices returns the prices of markets in force during [from, to), by market, in
// time order.
func (s *Service) MarketPrices(ctx context.Context, scope kwhouse.Scope, markets []string, from, to int64) (map[string][]MarketInterval, error) {
	out := map[string][]MarketInterval{}
	if len(markets) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, marketPricesStmt, scope.AccountID, scope.LiveByte(), chstore.Set(markets),
		uint32(max(from-maxPriceInterval, 0)), uint32(to), uint32(from))
	if err != nil {
		return nil, chstore.Classify(fmt.Errorf("prices of markets %v from %s: %w", markets, time.Unix(from, 0).UTC(), err))
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var s0, e0 uint32
		var iv MarketInterval
		if err := rows.Scan(&id, &s0, &e0, &iv.Price, &iv.Confidence); err != nil {
			return nil, fmt.Errorf("scan market price: %w", err)
		}
		iv.Start, iv.End = int64(s0), int64(e0)
		out[id] = append(out[id], iv)
	}
	return out, chstore.Classify(rows.Err())
}
