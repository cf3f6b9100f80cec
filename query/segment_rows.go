package query

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var segmentRowsStmt = chstore.Register("query.segment_rows", "cost_segments.sql segment_rows: a plan's segments for _segs")

// segmentRowsCacheSize bounds the plans' windows whose segments stay in memory: a year of
// half-hourly market prices is ≈ 19,000 rows, ≈ 1.5 MB.
const segmentRowsCacheSize = 64

// segmentCols are a plan's segments (the "segments" of cost_segments.sql) by column, as
// the external table _segs takes them; they are shared, never changed once read.
type segmentCols struct {
	id           uint64 // names these rows (chstore.External.Key)
	comp, ctr    []uint8
	ss, se, tier []uint32
	hi, price    [][]float64
	sconf        []float64
}

// table is _segs of the segments, each under location loc.
func (s segmentCols) table(loc []string) chstore.External {
	return chstore.External{Name: "_segs", Columns: []chstore.ExternalColumn{
		{Name: "loc", Type: "String", Values: loc}, {Name: "comp", Type: "UInt8", Values: s.comp},
		{Name: "ctr", Type: "UInt8", Values: s.ctr}, {Name: "ss", Type: "UInt32", Values: s.ss},
		{Name: "se", Type: "UInt32", Values: s.se}, {Name: "tier", Type: "UInt32", Values: s.tier},
		{Name: "hi", Type: "Array(Float64)", Values: s.hi}, {Name: "price", Type: "Array(Float64)", Values: s.price},
		{Name: "sconf", Type: "Float64", Values: s.sconf}}}
}

func (s *segmentCols) append(o segmentCols) {
	s.comp, s.ctr = append(s.comp, o.comp...), append(s.ctr, o.ctr...)
	s.ss, s.se, s.tier = append(s.ss, o.ss...), append(s.se, o.se...), append(s.tier, o.tier...)
	s.hi, s.price, s.sconf = append(s.hi, o.hi...), append(s.price, o.price...), append(s.sconf, o.sconf...)
}

// planSegmentCols returns the segments pricing a's plan over its range, computed by the
// one "segments" statement and kept per price key and range under the pricing epoch, so
// that a location's later requests and every location on the same product reuse them.
func (c *Pricer) planSegmentCols(ctx context.Context, a costArgs) (segmentCols, error) {
	key := fmt.Sprintf("segs|%s|%d|%d", a.plan.PriceKey(), a.plan.RangeStart, a.plan.RangeEnd)
	return c.segmentRows.Get(ctx, a.scope, key, func() (segmentCols, error) {
		s, err := c.readSegmentCols(ctx, a)
		s.id = segmentColsIDs.Add(1)
		return s, err
	})
}

func (c *Pricer) readSegmentCols(ctx context.Context, a costArgs) (segmentCols, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "segment_rows", pricingShape{Markets: len(a.plan.Markets) > 0}); err != nil {
		return segmentCols{}, fmt.Errorf("render segment rows: %w", err)
	}
	rows, err := c.db.Query(ctx, segmentRowsStmt.With(buf.String()), a.named()...)
	if err != nil {
		return segmentCols{}, fmt.Errorf("price segments of %s: %w", a.location, err)
	}
	defer rows.Close()
	var s segmentCols
	for rows.Next() {
		var comp, ctr uint8
		var ss, se, tier uint32
		var hi, price []float64
		var sconf float64
		if err := rows.Scan(&comp, &ctr, &ss, &se, &tier, &hi, &price, &sconf); err != nil {
			return segmentCols{}, fmt.Errorf("scan segment row: %w", err)
		}
		s.comp, s.ctr = append(s.comp, comp), append(s.ctr, ctr)
		s.ss, s.se, s.tier = append(s.ss, ss), append(s.se, se), append(s.tier, tier)
		s.hi, s.price, s.sconf = append(s.hi, hi), append(s.price, price), append(s.sconf, sconf)
	}
	return s, rows.Err()
}

// segmentColsIDs numbers the segmentCols read by this process.
var segmentColsIDs atomic.Uint64

// fleetSegments is _segs of a fleet JOIN: each product's segments once, under the id of
// its first location in the batch (the rep of joinArgs).
func (c *Pricer) fleetSegments(ctx context.Context, scope kwhouse.Scope, b fleetBatch,
	plans map[string]tariffs.Plan) (chstore.External, error) {
	var all segmentCols
	var loc, keys []string
	seen := map[string]bool{}
	for _, id := range b.ids {
		p := plans[id]
		if seen[p.PriceKey()] {
			continue
		}
		seen[p.PriceKey()] = true
		s, err := c.planSegmentCols(ctx, costArgs{scope: scope, location: id, plan: p})
		if err != nil {
			return chstore.External{}, err
		}
		all.append(s)
		for range s.comp {
			loc = append(loc, id)
		}
		keys = append(keys, fmt.Sprintf("%d:%s", s.id, id))
	}
	t := all.table(loc)
	if len(keys) == 1 {
		// One product's rows under one rep (a location asked again under the same epoch)
		// are the same table: built once.
		t.Key = "segs-" + keys[0]
	}
	return t, nil
}
