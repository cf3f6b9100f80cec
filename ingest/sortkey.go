package ingest

import (
	"cmp"
	"slices"
	"strings"
)

// sortedBlock returns the rows of parts as one block in meter_records' sorting-key order
// (account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time,
// end_time). ClickHouse skips its own sort, and the copy of every column it implies, for
// a block that arrives in key order.
func sortedBlock(parts []*Rows) block {
	keys := sortKeys(parts)
	if !slices.IsSortedFunc(keys, compareSortKeys) {
		// Rows with equal keys need no particular order: the version column decides.
		slices.SortFunc(keys, compareSortKeys)
	}
	return block{parts: parts, keys: keys}
}

// sortKey is one row's sorting key in integers: each string column is replaced by the
// rank of its value among the block's distinct values, which orders the same way and
// compares without reading strings.
type sortKey struct {
	scope     uint64 // rank of (account_id, live_mode) << 32 | rank of location_id
	device    uint64 // rank of device_id << 16 | direction << 8 | tariff_rate
	time      uint64 // start_time << 32 | end_time (DateTime is 32 bits)
	part, row uint32
}

func compareSortKeys(a, b sortKey) int {
	if a.scope != b.scope {
		return cmp.Compare(a.scope, b.scope)
	}
	if a.device != b.device {
		return cmp.Compare(a.device, b.device)
	}
	return cmp.Compare(a.time, b.time)
}

func sortKeys(parts []*Rows) []sortKey {
	n := 0
	for _, p := range parts {
		n += p.Len()
	}
	scopes := rank(parts, func(p *Rows, i int) scopeKey { return scopeKey{p.account[i], p.live[i]} }, compareScopes)
	locations := rank(parts, func(p *Rows, i int) string { return p.location[i] }, strings.Compare)
	devices := rank(parts, func(p *Rows, i int) string { return p.device[i] }, strings.Compare)
	keys := make([]sortKey, 0, n)
	for pi, p := range parts {
		for i := range p.version {
			keys = append(keys, sortKey{
				scope:  uint64(scopes[pi][i])<<32 | uint64(locations[pi][i]),
				device: uint64(devices[pi][i])<<16 | uint64(uint8(p.direction[i]))<<8 | uint64(uint8(p.tariffRate[i])),
				time:   uint64(uint32(p.start[i]))<<32 | uint64(uint32(p.end[i])),
				part:   uint32(pi), row: uint32(i)})
		}
	}
	return keys
}

type scopeKey struct {
	account string
	live    uint8
}

func compareScopes(a, b scopeKey) int {
	if c := strings.Compare(a.account, b.account); c != 0 {
		return c
	}
	return cmp.Compare(a.live, b.live)
}

// rank gives every row of parts the rank of its value of a column among the column's
// distinct values, in the order compare gives them (strings bytewise, as ClickHouse
// compares them): ranks[part][row].
func rank[K comparable](parts []*Rows, value func(p *Rows, i int) K, compare func(a, b K) int) [][]uint32 {
	index := map[K]uint32{} // value → place in distinct
	var distinct []K
	ranks := make([][]uint32, len(parts))
	for pi, p := range parts {
		ranks[pi] = make([]uint32, p.Len())
		var last K
		for i := range ranks[pi] {
			v := value(p, i)
			if i > 0 && v == last {
				ranks[pi][i] = ranks[pi][i-1] // runs of one value (a request's scope) skip the map
				continue
			}
			last = v
			d, ok := index[v]
			if !ok {
				d = uint32(len(distinct))
				index[v] = d
				distinct = append(distinct, v)
			}
			ranks[pi][i] = d
		}
	}
	order := make([]uint32, len(distinct))
	for d := range order {
		order[d] = uint32(d)
	}
	slices.SortFunc(order, func(a, b uint32) int { return compare(distinct[a], distinct[b]) })
	rankOf := make([]uint32, len(distinct))
	for r, d := range order {
		rankOf[d] = uint32(r)
	}
	for _, rs := range ranks {
		for i, d := range rs {
			rs[i] = rankOf[d]
		}
	}
	return ranks
}
