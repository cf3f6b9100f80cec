package ingest

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// sortedBlock returns the rows of parts as one block in meter_records' sorting-key order
// (account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time,
// end_time). ClickHouse skips its own sort, and the copy of every column it implies, for
// a block that arrives in key order. The block's order lives in s until its next use.
//
// Each key column is replaced by the rank of its value among the block's distinct values,
// which orders the same way. The ranks of a flush's rows take few bits (a fleet's push:
// one account, 10,000 locations, a few times), so a row's whole key and its index pack
// into one uint64 that a radix sort orders in a few passes; a flush too varied for 64
// bits is sorted with a comparison instead.
func (s *sorter) sortedBlock(parts []*Rows) block {
	s.refs = s.refs[:0]
	for pi, p := range parts {
		for i := range p.version {
			s.refs = append(s.refs, rowRef{part: uint32(pi), row: uint32(i)})
		}
	}
	r := s.rankColumns(parts)
	widths := [...]int{r.scopes.width, r.locations.width, r.devices.width, 2, 2, r.times.width, bitsFor(len(s.refs))}
	total := 0
	for _, w := range widths {
		total += w
	}
	if total > packedBits {
		return block{parts: parts, refs: s.compareSort(r)}
	}
	return block{parts: parts, refs: s.radixSort(r, widths, total)}
}

// packedBits is the most bits a packed key may take (tests lower it to reach the
// comparison sort).
var packedBits = 64

// rowRef names one row of a flush: row of parts[part].
type rowRef struct{ part, row uint32 }

// sorter keeps a flusher's sorting buffers from one flush to the next: a busy writer
// sorts tens of thousands of rows every few milliseconds.
type sorter struct {
	refs, sorted []rowRef
	packed, swap []uint64
	keys         []sortKey
	scopes       ranker[scopeKey]
	locations    ranker[string]
	devices      ranker[string]
	times        ranker[timeKey]
}

// columnRanks are the ranks of every row of a flush, part after part, per key column.
type columnRanks struct {
	scopes, locations, devices, times ranked
	parts                             []*Rows // direction and tariff_rate are read from them
}

// ranked are a column's ranks and the bits the largest takes.
type ranked struct {
	ranks []uint32
	width int
}

type scopeKey struct {
	account string
	live    uint8
}

type timeKey struct{ start, end int64 }

func (s *sorter) rankColumns(parts []*Rows) columnRanks {
	return columnRanks{parts: parts,
		scopes: s.scopes.rank(parts, func(p *Rows, i int) scopeKey { return scopeKey{p.account[i], p.live[i]} },
			func(a, b scopeKey) int {
				return cmp.Or(strings.Compare(a.account, b.account), cmp.Compare(a.live, b.live))
			}),
		locations: s.locations.rank(parts, func(p *Rows, i int) string { return p.location[i] }, strings.Compare),
		devices:   s.devices.rank(parts, func(p *Rows, i int) string { return p.device[i] }, strings.Compare),
		times: s.times.rank(parts, func(p *Rows, i int) timeKey { return timeKey{p.start[i], p.end[i]} },
			func(a, b timeKey) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end)) }),
	}
}

// directions returns a row's direction and tariff_rate codes (1 to 3, as stored).
func (r columnRanks) directions(ref rowRef) (dir, rate uint64) {
	p := r.parts[ref.part]
	return uint64(uint8(p.direction[ref.row])), uint64(uint8(p.tariffRate[ref.row]))
}

// radixSort orders the rows by keys packed with the given bit widths (the last is the
// row's index, which also keeps rows with equal keys in arrival order).
func (s *sorter) radixSort(r columnRanks, widths [7]int, total int) []rowRef {
	packed := s.packed[:0]
	for g, ref := range s.refs {
		dir, rate := r.directions(ref)
		fields := [...]uint64{uint64(r.scopes.ranks[g]), uint64(r.locations.ranks[g]), uint64(r.devices.ranks[g]),
			dir, rate, uint64(r.times.ranks[g]), uint64(g)}
		var v uint64
		for f, w := range widths {
			v = v<<w | fields[f]
		}
		packed = append(packed, v)
	}
	s.packed, s.swap = radix(packed, slices.Grow(s.swap[:0], len(packed))[:len(packed)], total)
	packed = s.packed
	index := uint64(1)<<widths[6] - 1
	sorted := s.sorted[:0]
	for _, v := range packed {
		sorted = append(sorted, s.refs[v&index])
	}
	s.sorted = sorted
	return sorted
}

// radix sorts v by its low total bits, a byte per pass (LSD), using buf (as long as v) as
// scratch; it returns the sorted values and the other slice, as either may hold them. A
// pass whose byte is the same in every value is skipped.
func radix(v, buf []uint64, total int) (sorted, scratch []uint64) {
	if len(v) == 0 {
		return v, buf
	}
	for shift := 0; shift < total; shift += 8 {
		var count [256]int
		for _, x := range v {
			count[byte(x>>shift)]++
		}
		if count[byte(v[0]>>shift)] == len(v) {
			continue
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, x := range v {
			d := byte(x >> shift)
			buf[count[d]] = x
			count[d]++
		}
		v, buf = buf, v
	}
	return v, buf
}

// sortKey is one row's key in ranks for the comparison sort.
type sortKey struct {
	scope  uint64 // rank of (account_id, live_mode) << 32 | rank of location_id
	device uint64 // rank of device_id << 16 | direction << 8 | tariff_rate
	time   uint32 // rank of (start_time, end_time)
	ref    rowRef
}

func compareSortKeys(a, b sortKey) int {
	return cmp.Or(cmp.Compare(a.scope, b.scope), cmp.Compare(a.device, b.device), cmp.Compare(a.time, b.time))
}

// compareSort orders the rows with a comparison sort, for flushes whose ranks do not fit
// in 64 bits.
func (s *sorter) compareSort(r columnRanks) []rowRef {
	keys := s.keys[:0]
	for g, ref := range s.refs {
		dir, rate := r.directions(ref)
		keys = append(keys, sortKey{
			scope:  uint64(r.scopes.ranks[g])<<32 | uint64(r.locations.ranks[g]),
			device: uint64(r.devices.ranks[g])<<16 | dir<<8 | rate,
			time:   r.times.ranks[g], ref: ref})
	}
	slices.SortStableFunc(keys, compareSortKeys)
	s.keys = keys
	sorted := s.sorted[:0]
	for _, k := range keys {
		sorted = append(sorted, k.ref)
	}
	s.sorted = sorted
	return sorted
}

// bitsFor is the number of bits that hold the numbers 0 to n-1.
func bitsFor(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// ranker gives every row of a flush the rank of its value of one column among the
// column's distinct values, in the order compare gives them (strings bytewise, as
// ClickHouse compares them). Its buffers are reused; the values are let go after each use
// (they point into request bodies).
type ranker[K comparable] struct {
	index    map[K]uint32 // value → place in distinct
	distinct []K
	ranks    []uint32
	order    []uint32
	rankOf   []uint32
}

// rank returns the ranks of the rows of parts, part after part.
func (r *ranker[K]) rank(parts []*Rows, value func(p *Rows, i int) K, compare func(a, b K) int) ranked {
	if r.index == nil {
		r.index = map[K]uint32{}
	}
	defer func() { clear(r.index); clear(r.distinct); r.distinct = r.distinct[:0] }()
	ranks := r.ranks[:0]
	for _, p := range parts {
		var last K
		for i := range p.version {
			v := value(p, i)
			if i > 0 && v == last {
				ranks = append(ranks, ranks[len(ranks)-1]) // runs of one value (a request's scope) skip the map
				continue
			}
			last = v
			d, ok := r.index[v]
			if !ok {
				d = uint32(len(r.distinct))
				r.index[v] = d
				r.distinct = append(r.distinct, v)
			}
			ranks = append(ranks, d)
		}
	}
	r.order = r.order[:0]
	for d := range r.distinct {
		r.order = append(r.order, uint32(d))
	}
	slices.SortFunc(r.order, func(a, b uint32) int { return compare(r.distinct[a], r.distinct[b]) })
	r.rankOf = slices.Grow(r.rankOf[:0], len(r.distinct))[:len(r.distinct)]
	for rank, d := range r.order {
		r.rankOf[d] = uint32(rank)
	}
	for i, d := range ranks {
		ranks[i] = r.rankOf[d]
	}
	r.ranks = ranks
	return ranked{ranks: ranks, width: bitsFor(len(r.distinct))}
}
