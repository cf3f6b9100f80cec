package query

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var segmentsStmt = chstore.Register("query.segments", "segments.sql: one location's price segments over a range")

// planSegments returns the price segments of the plan's components over [t0, t1), in
// start order, at most limit of them: the rate periods stored in tariff_rates clipped to
// the plan's sources, market periods cut at every market interval and priced (market
// price + surcharge_fixed) × (1 + surcharge_percentage / 100). Time without a market price
// has no segment. The segments come from the SQL every cost query prices with, so that
// prices have one definition.
func (c *Pricer) planSegments(ctx context.Context, scope kwhouse.Scope, location string, plan tariffs.Plan, comps []int,
	t0, t1 int64, limit int) ([]segment, error) {
	if err := c.tariffs.EnsureRates(ctx, scope, plan); err != nil {
		return nil, err
	}
	want := make([]uint32, len(comps))
	for i, comp := range comps {
		want[i] = uint32(comp)
	}
	args := append(bindPlans(map[string]tariffs.Plan{location: plan}).named(),
		chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("range_from_pad", uint32(max(t0-32*86400, 0))), chstore.Named("range_to", uint32(t1)),
		chstore.Named("t0", uint32(t0)), chstore.Named("t1", uint32(t1)), chstore.Named("comps", want), chstore.Named("limit", limit))
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "plan_segments", pricingShape{Markets: len(plan.Markets) > 0}); err != nil {
		return nil, fmt.Errorf("render segments query: %w", err)
	}
	rows, err := c.db.Query(ctx, segmentsStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("price segments of %s: %w", location, err)
	}
	defer rows.Close()
	var out []segment
	for rows.Next() {
		var comp uint8
		var s, e uint32
		var seg segment
		if err := rows.Scan(&comp, &s, &e, &seg.rate, &seg.conf); err != nil {
			return nil, fmt.Errorf("scan segment: %w", err)
		}
		seg.comp, seg.s, seg.e = int(comp), int64(s), int64(e)
		out = append(out, seg)
	}
	return out, rows.Err()
}
