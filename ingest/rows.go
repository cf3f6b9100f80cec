package ingest

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/kwhouse/kwhouse"
)

// Rows are records in columns, as the insert sends them.
type Rows struct {
	account, location, device, session, recordRef, batch []string
	live                                                 []uint8
	direction, tariffRate                                []int8
	start, end                                           []int64
	energy, confidence                                   []float64
	version                                              []uint64
}

// newRows returns empty Rows with room for n rows, so that adding them does not regrow
// fourteen slices.
func newRows(n int) *Rows {
	return &Rows{
		account: make([]string, 0, n), location: make([]string, 0, n), device: make([]string, 0, n),
		session: make([]string, 0, n), recordRef: make([]string, 0, n), batch: make([]string, 0, n),
		live: make([]uint8, 0, n), direction: make([]int8, 0, n), tariffRate: make([]int8, 0, n),
		start: make([]int64, 0, n), end: make([]int64, 0, n), energy: make([]float64, 0, n),
		confidence: make([]float64, 0, n), version: make([]uint64, 0, n),
	}
}

// Len is the number of rows.
func (r *Rows) Len() int { return len(r.version) }

func (r *Rows) add(scope kwhouse.Scope, rec *Record, batch string, version uint64) {
	live := uint8(0)
	if scope.LiveMode {
		live = 1
	}
	r.account = append(r.account, scope.AccountID)
	r.live = append(r.live, live)
	r.location = append(r.location, rec.LocationID)
	r.device = append(r.device, rec.DeviceID)
	r.direction = append(r.direction, rec.Direction)
	r.tariffRate = append(r.tariffRate, rec.TariffRate)
	r.start = append(r.start, rec.Start)
	r.end = append(r.end, rec.End)
	r.energy = append(r.energy, rec.EnergyWh)
	r.confidence = append(r.confidence, rec.Confidence)
	r.session = append(r.session, rec.SessionRef)
	r.recordRef = append(r.recordRef, rec.RecordRef)
	r.batch = append(r.batch, batch)
	r.version = append(r.version, version)
}

// appendAll adds every row of o.
func (r *Rows) appendAll(o *Rows) {
	r.account = append(r.account, o.account...)
	r.live = append(r.live, o.live...)
	r.location = append(r.location, o.location...)
	r.device = append(r.device, o.device...)
	r.direction = append(r.direction, o.direction...)
	r.tariffRate = append(r.tariffRate, o.tariffRate...)
	r.start = append(r.start, o.start...)
	r.end = append(r.end, o.end...)
	r.energy = append(r.energy, o.energy...)
	r.confidence = append(r.confidence, o.confidence...)
	r.session = append(r.session, o.session...)
	r.recordRef = append(r.recordRef, o.recordRef...)
	r.batch = append(r.batch, o.batch...)
	r.version = append(r.version, o.version...)
}

// pick returns the rows at idx, in that order.
func (r *Rows) pick(idx []int) *Rows {
	out := newRows(len(idx))
	for _, i := range idx {
		out.account = append(out.account, r.account[i])
		out.live = append(out.live, r.live[i])
		out.location = append(out.location, r.location[i])
		out.device = append(out.device, r.device[i])
		out.direction = append(out.direction, r.direction[i])
		out.tariffRate = append(out.tariffRate, r.tariffRate[i])
		out.start = append(out.start, r.start[i])
		out.end = append(out.end, r.end[i])
		out.energy = append(out.energy, r.energy[i])
		out.confidence = append(out.confidence, r.confidence[i])
		out.session = append(out.session, r.session[i])
		out.recordRef = append(out.recordRef, r.recordRef[i])
		out.batch = append(out.batch, r.batch[i])
		out.version = append(out.version, r.version[i])
	}
	return out
}

// slice returns rows [from, to) sharing storage with r.
func (r *Rows) slice(from, to int) *Rows {
	return &Rows{account: r.account[from:to], live: r.live[from:to], location: r.location[from:to],
		device: r.device[from:to], direction: r.direction[from:to], tariffRate: r.tariffRate[from:to],
		start: r.start[from:to], end: r.end[from:to], energy: r.energy[from:to], confidence: r.confidence[from:to],
		session: r.session[from:to], recordRef: r.recordRef[from:to], batch: r.batch[from:to], version: r.version[from:to]}
}

// MaxPartitionsPerInsert is ClickHouse's default max_partitions_per_insert_block.
const MaxPartitionsPerInsert = 100

// byPartition cuts r into blocks that each touch at most limit UTC days of start_time
// (the partitions of meter_records). Rows keep their order within a day.
func (r *Rows) byPartition(limit int) []*Rows {
	days := map[int64][]int{}
	for i, s := range r.start {
		d := s / 86400
		days[d] = append(days[d], i)
	}
	if len(days) <= limit {
		return []*Rows{r}
	}
	keys := make([]int64, 0, len(days))
	for d := range days {
		keys = append(keys, d)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var out []*Rows
	for from := 0; from < len(keys); from += limit {
		var idx []int
		for _, d := range keys[from:min(from+limit, len(keys))] {
			idx = append(idx, days[d]...)
		}
		out = append(out, r.pick(idx))
	}
	return out
}

// sortedByKey returns r ordered by meter_records' sorting key. ClickHouse skips its own
// sort (and the copy of every column it implies) for a block that arrives in key order.
func (r *Rows) sortedByKey() *Rows {
	keys := r.sortKeys()
	if slices.IsSortedFunc(keys, compareSortKeys) {
		return r
	}
	// Rows with equal keys need no particular order: the version column decides.
	slices.SortFunc(keys, compareSortKeys)
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = int(k.row)
	}
	return r.pick(idx)
}

// sortKey is one row's ORDER BY (account_id, live_mode, location_id, device_id,
// direction, tariff_rate, start_time, end_time), packed so that a sort touches one
// slice: the small columns share one integer, ordered as the key orders them.
type sortKey struct {
	account, location, device string
	small                     uint64 // live_mode, direction, tariff_rate, start_time (32 bits, as DateTime)
	end                       int64
	row                       int32
}

func (r *Rows) sortKeys() []sortKey {
	keys := make([]sortKey, r.Len())
	for i := range keys {
		keys[i] = sortKey{account: r.account[i], location: r.location[i], device: r.device[i],
			small: uint64(r.live[i])<<56 | uint64(uint8(r.direction[i]))<<48 | uint64(uint8(r.tariffRate[i]))<<40 | uint64(uint32(r.start[i])),
			end:   r.end[i], row: int32(i)}
	}
	return keys
}

// compareSortKeys compares strings bytewise, as ClickHouse does.
func compareSortKeys(a, b sortKey) int {
	if a.account != b.account {
		return strings.Compare(a.account, b.account)
	}
	if a.small>>56 != b.small>>56 {
		return cmp.Compare(a.small>>56, b.small>>56)
	}
	if c := strings.Compare(a.location, b.location); c != 0 {
		return c
	}
	if c := strings.Compare(a.device, b.device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.small, b.small); c != 0 {
		return c
	}
	return cmp.Compare(a.end, b.end)
}
