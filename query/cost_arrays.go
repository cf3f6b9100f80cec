package query

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// maxArraySegments bounds the price segments sent inside one cost query (about 45 bytes
// each, against ClickHouse's 256 KiB max_query_size); longer timelines, such as a year
// of half-hourly market prices, are priced by the JOIN of fleet.sql instead.
const maxArraySegments = 4000

// costArraysCacheSize bounds the cost windows whose arrays stay in memory: at most
// maxArraySegments and as many gaps between them of 37 bytes and, per component,
// maxBuckets indexes of 4 bytes — about 345 KB a window, 350 MB for 1024 at worst (no
// timeline has a gap between every two prices); a month of a time-of-use tariff takes
// about 20 KB.
const costArraysCacheSize = 1024

// maxBuckets bounds the bucket index of one component. Buckets are half hours where the
// range allows (a month's range, its window and the longest record after it: 2,928), so
// that no segment of a half-hourly market price or time-of-use tariff starts inside one and
// a record's segments are found with no step (arrays_component).
const maxBuckets = 4096

// allComponents are the components a record can be priced by, in their SQL numbering.
var allComponents = []int{tariffs.CompImportCommodity, tariffs.CompImportNonCommodity, tariffs.CompExportCommodity}

// componentArrays is one component's segments as the arrays of cost_arrays.sql: each
// timeline's segments cover its whole range, time without a price filled by segments
// that price nothing and cover nothing (gaps).
type componentArrays struct {
	N       int
	Present bool
	Gapless bool // no timeline has a gap: a record's covered seconds are its own (no coverage arrays sent)
	OneConf bool // every segment has one confidence: confidences are not sent, c is a scalar
	// Tariffed: some timeline has tariffs of the component (its tariff bit), so time it
	// leaves unpriced lowers confidence to 0 (fleet_arrays.sql: pricingShape.Uncovered).
	Tariffed bool
	Steps    []int // 1 … the most segments starting inside one bucket after its first (arrays_find)
	start    []uint32
	price    []float64
	// base[i] is the money per kWh of the segments before i, less price[i] × (start[i] - t0):
	// base[i] + price[i] × (t - t0) is the running sum of price × seconds from t0 to any t
	// in segment i (the price integral arrays_component takes differences of).
	base []float64
	// covBase and covers are the same running sum of covered seconds (covers: 1, a gap: 0).
	covBase []int64
	covers  []uint8
	conf    []float64 // a gap's is 1: a record's confidence is the least of rc and its segments'
	first   []uint32  // per bucket: 1-based number of the segment holding its start
	conf1   float64   // the confidence of every segment, where OneConf
	gaps    bool      // a timeline has a gap (built per timeline; Gapless is set when concatenated)
	steps   int
}

// costArrays are the constant arrays of an untiered cost query over [t0, t1); ok is false
// when the window has more segments than a query takes as arrays.
type costArrays struct {
	t0, bucket int64
	n          int64 // buckets
	comps      []componentArrays
	ok         bool
}

// arraySegments returns the arrays pricing a's records, from memory when the scope's
// pricing epoch has not moved (a warm request neither computes nor indexes segments).
func (c *Pricer) arraySegments(ctx context.Context, a costArgs) (costArrays, error) {
	t0, t1 := a.plan.RangeStart, a.plan.RangeEnd
	comps := withTariffs(a.plan, allComponents)
	if len(comps) == 0 {
		return buildArrays(nil, t0, t1), nil
	}
	// Keyed by what prices the records, not by location: a fleet's locations on one
	// product share their arrays.
	key := fmt.Sprintf("cost|%s|%d|%d", a.plan.PriceKey(), t0, t1)
	return c.costArrays.Get(ctx, a.scope, key, func() (costArrays, error) {
		segs, err := c.planSegments(ctx, a.scope, a.location, a.plan, comps, t0, t1, maxArraySegments+1)
		if err != nil || len(segs) > maxArraySegments {
			return costArrays{}, err // only the verdict is kept
		}
		return buildArrays(segs, t0, t1), nil
	})
}

// buildArrays indexes segments (sorted by start, disjoint within a component) by buckets
// of whole half hours from t0, at most maxBuckets of them.
func buildArrays(segs []segment, t0, t1 int64) costArrays {
	halves := (t1 - t0 + 1799) / 1800
	bucket := 1800 * max(1, (halves+maxBuckets-1)/maxBuckets)
	n := max(1, (t1-t0+bucket-1)/bucket)
	out := costArrays{t0: t0, bucket: bucket, n: n, ok: true}
	for _, comp := range allComponents {
		var own []segment
		for _, s := range segs {
			if s.comp == comp && min(s.e, t1) > max(s.s, t0) {
				own = append(own, segment{comp: comp, s: max(s.s, t0), e: min(s.e, t1), rate: s.rate, conf: s.conf})
			}
		}
		ca := componentArrays{N: comp, Present: len(own) > 0}
		if ca.Present {
			ca = filled(ca, own, t0, t1)
			ca.first, ca.steps = bucketIndex(ca.start, t0, t1, bucket, n)
		}
		out.comps = append(out.comps, ca)
	}
	return out
}

// filled lays a component's segments over [t0, t1) with its gaps as segments of price 0
// that cover nothing, and the running sums of money per kWh and covered seconds.
func filled(ca componentArrays, segs []segment, t0, t1 int64) componentArrays {
	ca.OneConf = true
	add := func(s int64, price, conf float64, covers uint8) {
		ca.push(uint32(s), price, 0, 0, covers, conf) // running sums set below
	}
	at := t0
	for _, s := range segs {
		if s.s > at {
			add(at, 0, 1, 0)
			ca.gaps = true
		}
		add(s.s, s.rate, s.conf, 1)
		ca.OneConf = ca.OneConf && s.conf == segs[0].conf
		at = s.e
	}
	if at < t1 {
		add(at, 0, 1, 0)
		ca.gaps = true
	}
	money, covered := 0., int64(0)
	for i, s := range ca.start {
		from := int64(s) - t0
		ca.base[i] = money - ca.price[i]*float64(from)
		ca.covBase[i] = covered - int64(ca.covers[i])*from
		end := t1
		if i+1 < len(ca.start) {
			end = int64(ca.start[i+1])
		}
		money += ca.price[i] * float64(end-int64(s))
		covered += int64(ca.covers[i]) * (end - int64(s))
	}
	ca.conf1 = segs[0].conf
	return ca
}

// push appends one segment to every per-segment array.
func (ca *componentArrays) push(start uint32, price, base float64, covBase int64, covers uint8, conf float64) {
	ca.start, ca.price, ca.base = append(ca.start, start), append(ca.price, price), append(ca.base, base)
	ca.covBase, ca.covers, ca.conf = append(ca.covBase, covBase), append(ca.covers, covers), append(ca.conf, conf)
}

// bucketIndex returns, for each of n buckets from t0, the 1-based number of the segment
// (of contiguous ones from t0 to t1) holding the bucket's start, and the most segments
// starting inside one bucket after it.
func bucketIndex(start []uint32, t0, t1, bucket, n int64) (first []uint32, steps int) {
	first = make([]uint32, n)
	f := 0
	for j := int64(0); j < n; j++ {
		from, to := t0+j*bucket, min(t0+(j+1)*bucket, t1)
		for f+1 < len(start) && int64(start[f+1]) <= from {
			f++
		}
		first[j] = uint32(f + 1)
		inside := 0
		for k := f + 1; k < len(start) && int64(start[k]) < to; k++ {
			inside++
		}
		steps = max(steps, inside)
	}
	return first, steps
}

// SegmentConfs reports whether a present component of fleet_arrays.sql has segments of
// different confidences: a record's confidence then depends on the segments it meets
// (arrays_confidence).
func (s pricingShape) SegmentConfs() bool {
	for _, c := range s.Comps {
		if c.Present && !c.OneConf {
			return true
		}
	}
	return false
}

// Rate is the tariff rate (tr) of the records the component prices: 2 (EXPORT) for export
// commodity, else 1 (IMPORT).
func (ca componentArrays) Rate() int {
	if ca.N == tariffs.CompExportCommodity {
		return 2
	}
	return 1
}

// LowersConf reports whether the component's one confidence (OneConf) can lower a
// group's: a reading's confidence is at most 1 (ingest), so a confidence of 1 never does
// and arrays_confidence takes no sum for it.
func (ca componentArrays) LowersConf() bool { return ca.conf1 < 1 }

// named binds the arrays.
func (ca costArrays) named() []any {
	out := []any{chstore.Named("t0", uint32(ca.t0)), chstore.Named("bucket", uint32(ca.bucket))}
	for _, comp := range ca.comps {
		if comp.Present {
			out = append(out, comp.named()...)
		}
	}
	return out
}

// named binds one present component's arrays, as arrays_columns takes them.
func (ca componentArrays) named() []any {
	p := fmt.Sprintf("s%d_", ca.N)
	out := []any{chstore.Named(p+"price", ca.price), chstore.Named(p+"base", ca.base), chstore.Named(p+"first", ca.first)}
	if len(ca.Steps) > 0 {
		out = append(out, chstore.Named(p+"start", ca.start))
	}
	if !ca.Gapless {
		out = append(out, chstore.Named(p+"cov", ca.covBase), chstore.Named(p+"covers", ca.covers))
	}
	if ca.OneConf {
		return append(out, chstore.Named(p+"conf1", ca.conf1))
	}
	return append(out, chstore.Named(p+"conf", ca.conf))
}
