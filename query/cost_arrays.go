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
// maxArraySegments of 24 bytes and, per component, 2 × maxBuckets indexes of 4 bytes —
// about 145 KB a window, 150 MB for 1024 at worst; a month of a time-of-use tariff
// takes about 18 KB.
const costArraysCacheSize = 1024

// maxBuckets bounds the bucket index of one component.
const maxBuckets = 2048

// allComponents are the components a record can be priced by, in their SQL numbering.
var allComponents = []int{tariffs.CompImportCommodity, tariffs.CompImportNonCommodity, tariffs.CompExportCommodity}

// componentArrays is one component's segments as the arrays of cost_arrays.sql.
type componentArrays struct {
	N          int
	Present    bool
	Contiguous bool // every segment ends where the next starts: ends are not sent (arrays_ends)
	OneConf    bool // every segment has one confidence: confidences are not sent, c is a scalar
	start      []uint32
	end        []uint32
	price      []float64
	conf       []float64
	first      []uint32 // per bucket: 1-based number of the first segment ending after its start
	last       []uint32 // per bucket: number of the last segment starting before its end
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
// of whole hours from t0, at most maxBuckets of them.
func buildArrays(segs []segment, t0, t1 int64) costArrays {
	hours := (t1 - t0 + 3599) / 3600
	bucket := 3600 * max(1, (hours+maxBuckets-1)/maxBuckets)
	n := max(1, (t1-t0+bucket-1)/bucket)
	out := costArrays{t0: t0, bucket: bucket, n: n, ok: true}
	for _, comp := range allComponents {
		ca := componentArrays{N: comp}
		for _, s := range segs {
			if s.comp == comp {
				ca.start, ca.end = append(ca.start, uint32(s.s)), append(ca.end, uint32(s.e))
				ca.price, ca.conf = append(ca.price, s.rate), append(ca.conf, s.conf)
			}
		}
		ca.Present = len(ca.start) > 0
		if ca.Present {
			ca.first, ca.last = bucketIndex(ca.start, ca.end, t0, bucket, n)
		}
		out.comps = append(out.comps, ca.shaped())
	}
	return out
}

// bucketIndex returns, for each of n buckets from t0, the 1-based numbers of the first
// segment ending after the bucket's start and of the last segment starting before its end.
func bucketIndex(start, end []uint32, t0, bucket, n int64) (first, last []uint32) {
	first, last = make([]uint32, n), make([]uint32, n)
	f, l := 0, 0
	for j := int64(0); j < n; j++ {
		from, to := t0+j*bucket, t0+(j+1)*bucket
		for f < len(end) && int64(end[f]) <= from {
			f++
		}
		for l < len(start) && int64(start[l]) < to {
			l++
		}
		first[j], last[j] = uint32(f+1), uint32(l)
	}
	return first, last
}

// shaped sets Contiguous and OneConf from the segments.
func (ca componentArrays) shaped() componentArrays {
	ca.Contiguous, ca.OneConf = ca.Present, ca.Present
	for i := 1; i < len(ca.start); i++ {
		ca.Contiguous = ca.Contiguous && ca.end[i-1] == ca.start[i]
		ca.OneConf = ca.OneConf && ca.conf[i] == ca.conf[0]
	}
	return ca
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
	out := []any{chstore.Named(p+"start", ca.start), chstore.Named(p+"price", ca.price),
		chstore.Named(p+"first", ca.first), chstore.Named(p+"last", ca.last)}
	if ca.Contiguous {
		out = append(out, chstore.Named(p+"last_end", ca.end[len(ca.end)-1]))
	} else {
		out = append(out, chstore.Named(p+"end", ca.end))
	}
	if ca.OneConf {
		return append(out, chstore.Named(p+"conf1", ca.conf[0]))
	}
	return append(out, chstore.Named(p+"conf", ca.conf))
}
