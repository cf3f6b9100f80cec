package ingest

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// sortedBlock returns the rows of parts as one block in meter_records' sorting-key order
// (account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time,
// end_time). ClickHouse skips its own sort, and the copy of every column it implies, for
// a block that arrives in key order. A single part already in order is returned as is.
func sortedBlock(parts []*Rows) *Rows {
	keys := sortKeys(parts)
	compare := keyOrder(parts)
	if len(parts) == 1 && slices.IsSortedFunc(keys, compare) {
		return parts[0]
	}
	// Rows with equal keys need no particular order: the version column decides.
	slices.SortFunc(keys, compare)
	out := newRows(len(keys))
	for _, k := range keys {
		out.addFrom(parts[k.part], int(k.row))
	}
	return out
}

// sortKey stands for one row in a sort. Most comparisons end at group or locPrefix, so
// the strings are read only on ties.
type sortKey struct {
	group     uint32 // rank of the row's (account_id, live_mode) among the block's pairs
	part      uint32
	row       int32
	locPrefix uint64 // 8 bytes of location_id after the prefix every row shares ("loc_")
	small     uint64 // direction, tariff_rate, start_time (DateTime: 32 bits)
}

type scopeKey struct {
	account string
	live    uint8
}

func sortKeys(parts []*Rows) []sortKey {
	n := 0
	for _, p := range parts {
		n += p.Len()
	}
	ranks := scopeRanks(parts)
	skip := sharedPrefix(parts)
	keys := make([]sortKey, 0, n)
	for pi, p := range parts {
		for i := range p.version {
			keys = append(keys, sortKey{group: ranks[scopeKey{p.account[i], p.live[i]}], part: uint32(pi), row: int32(i),
				locPrefix: prefix8(p.location[i][skip:]),
				small:     uint64(uint8(p.direction[i]))<<48 | uint64(uint8(p.tariffRate[i]))<<40 | uint64(uint32(p.start[i]))})
		}
	}
	return keys
}

// scopeRanks numbers the distinct (account_id, live_mode) pairs of parts in key order.
func scopeRanks(parts []*Rows) map[scopeKey]uint32 {
	seen := map[scopeKey]uint32{}
	for _, p := range parts {
		for i := range p.account {
			if i > 0 && p.account[i] == p.account[i-1] && p.live[i] == p.live[i-1] {
				continue // a request's rows share one scope: skip the map
			}
			seen[scopeKey{p.account[i], p.live[i]}] = 0
		}
	}
	distinct := make([]scopeKey, 0, len(seen))
	for k := range seen {
		distinct = append(distinct, k)
	}
	slices.SortFunc(distinct, func(a, b scopeKey) int {
		if c := strings.Compare(a.account, b.account); c != 0 {
			return c
		}
		return cmp.Compare(a.live, b.live)
	})
	for i, k := range distinct {
		seen[k] = uint32(i)
	}
	return seen
}

// sharedPrefix is the length of the longest prefix every location_id of parts shares.
func sharedPrefix(parts []*Rows) int {
	var first string
	shared := -1
	for _, p := range parts {
		for _, l := range p.location {
			if shared < 0 {
				first, shared = l, len(l)
			}
			shared = min(shared, len(l))
			for i := 0; i < shared; i++ {
				if l[i] != first[i] {
					shared = i
					break
				}
			}
		}
	}
	return max(shared, 0)
}

// prefix8 orders as the string does wherever two prefixes differ: bytewise, a shorter
// string first. Equal prefixes leave the order to the whole strings.
func prefix8(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// keyOrder compares sort keys of parts as ClickHouse compares the rows: strings bytewise.
func keyOrder(parts []*Rows) func(a, b sortKey) int {
	return func(a, b sortKey) int {
		if a.group != b.group {
			return cmp.Compare(a.group, b.group)
		}
		if a.locPrefix != b.locPrefix {
			return cmp.Compare(a.locPrefix, b.locPrefix)
		}
		pa, pb := parts[a.part], parts[b.part]
		if c := strings.Compare(pa.location[a.row], pb.location[b.row]); c != 0 {
			return c
		}
		if c := strings.Compare(pa.device[a.row], pb.device[b.row]); c != 0 {
			return c
		}
		if a.small != b.small {
			return cmp.Compare(a.small, b.small)
		}
		return cmp.Compare(pa.end[a.row], pb.end[b.row])
	}
}
