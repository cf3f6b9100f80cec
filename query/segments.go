package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Market price reads kept in memory: at most 256 of at most 70 days each (a month's cost
// window with its 31 days for long records fits). 70 days of half-hourly prices are
// 3,360 intervals, about 110 KB; of 5-minute prices about 650 KB.
const (
	marketPricesCacheSize = 256
	marketPricesCacheSpan = 70 * 86400
)

// planSegments computes the price segments of the plan's components over [t0, t1) as
// the "segments" query of cost_segments.sql does: schedule periods (tariffs.Tariff.Periods,
// the same expansion that fills tariff_rates) clipped to the plan's sources; for market
// tariffs, cut at every market interval and priced (market price + surcharge_fixed) ×
// (1 + surcharge_percentage / 100). Time without a market price has no segment. Only the
// market prices come from ClickHouse, in one simple read.
func (c *Coster) planSegments(ctx context.Context, scope kwhouse.Scope, plan tariffs.Plan, comps []int, t0, t1 int64) ([]segment, error) {
	prices, err := c.marketPrices(ctx, scope, plan.Markets, t0, t1)
	if err != nil {
		return nil, err
	}
	var out []segment
	for _, comp := range comps {
		for _, src := range plan.Sources[comp] {
			from, to := max(src.From, t0), min(src.To, t1)
			if from >= to {
				continue
			}
			periods, err := src.Tariff.Periods(from, to)
			if err != nil {
				return nil, err
			}
			for _, p := range periods {
				s, e := max(p.Start, from), min(p.End, to)
				if s >= e || len(p.Bands.Fixed) == 0 {
					continue
				}
				if !src.Tariff.MarketRates {
					out = append(out, segment{comp: comp, s: s, e: e, rate: p.Bands.Fixed[0], conf: src.Confidence})
					continue
				}
				out = appendMarket(out, comp, s, e, p.Bands, src.Confidence, prices[src.Tariff.MarketID])
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].s < out[j].s || out[i].s == out[j].s && out[i].comp < out[j].comp })
	return out, nil
}

// marketPrices reads the markets' prices over [t0, t1), from memory when the scope's
// pricing epoch has not moved: locations following one market share the read.
func (c *Coster) marketPrices(ctx context.Context, scope kwhouse.Scope, markets []string, t0, t1 int64) (map[string][]tariffs.MarketInterval, error) {
	if len(markets) == 0 {
		return nil, nil
	}
	if t1-t0 > marketPricesCacheSpan {
		return c.tariffs.MarketPrices(ctx, scope, markets, t0, t1)
	}
	sorted := append([]string(nil), markets...)
	sort.Strings(sorted)
	key := fmt.Sprintf("%s|%d|%d", strings.Join(sorted, ","), t0, t1)
	return c.prices.Get(ctx, scope, key, func() (map[string][]tariffs.MarketInterval, error) {
		return c.tariffs.MarketPrices(ctx, scope, sorted, t0, t1)
	})
}

// appendMarket adds the segments of a market period [s, e): one per market interval
// overlapping it (ivs in time order).
func appendMarket(out []segment, comp int, s, e int64, b tariffs.Bands, conf float64, ivs []tariffs.MarketInterval) []segment {
	i := sort.Search(len(ivs), func(k int) bool { return ivs[k].End > s })
	for ; i < len(ivs) && ivs[i].Start < e; i++ {
		iv := ivs[i]
		a, z := max(s, iv.Start), min(e, iv.End)
		if a >= z {
			continue
		}
		price := (iv.Price + first(b.SurFix)) * (1 + first(b.SurPct)/100)
		out = append(out, segment{comp: comp, s: a, e: z, rate: price, conf: min(conf, iv.Confidence)})
	}
	return out
}

// first is a band list's first value, 0 when it has none.
func first(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	return fs[0]
}
