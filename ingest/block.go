package ingest

import (
	"math"
	"slices"

	"github.com/kwhouse/kwhouse/chstore"
)

// block is the rows of one insert: the rows of parts that refs name, in the order of refs.
// A flush's requests keep their own Rows; the block only orders them, and each column is
// gathered in that order as it is handed to the driver, so no sorted copy of the whole
// flush is ever made.
type block struct {
	parts []*Rows
	refs  []rowRef
}

// Len is the number of rows.
func (b block) Len() int { return len(b.refs) }

// MaxPartitionsPerInsert is ClickHouse's default max_partitions_per_insert_block.
const MaxPartitionsPerInsert = 100

// byPartition cuts b into blocks that each touch at most limit UTC days of start_time
// (the partitions of meter_records). Rows keep their order within a day.
func (b block) byPartition(limit int) []block {
	if first, last := b.dayRange(); last-first < int64(limit) {
		return []block{b} // the common case, found without a map lookup per row
	}
	days := map[int64]int{} // day → rows
	for _, k := range b.refs {
		days[b.parts[k.part].start[k.row]/86400]++
	}
	if len(days) <= limit {
		return []block{b}
	}
	order := make([]int64, 0, len(days))
	for d := range days {
		order = append(order, d)
	}
	slices.Sort(order)
	group := map[int64]int{} // day → block
	for i, d := range order {
		group[d] = i / limit
	}
	out := make([]block, (len(order)+limit-1)/limit)
	for i := range out {
		out[i].parts = b.parts
	}
	for _, k := range b.refs {
		g := group[b.parts[k.part].start[k.row]/86400]
		out[g].refs = append(out[g].refs, k)
	}
	return out
}

// dayRange returns the first and last UTC day of start_time in the rows of b's parts
// (all of b's rows, and perhaps more: a range that fits fits b too).
func (b block) dayRange() (first, last int64) {
	first, last = math.MaxInt64, math.MinInt64
	for _, p := range b.parts {
		for _, s := range p.start {
			first, last = min(first, s/86400), max(last, s/86400)
		}
	}
	return first, last
}

// stringSizes are the sizes of b's String columns, so that the insert allocates each once.
func (b block) stringSizes() []chstore.StringSize {
	sizes := []chstore.StringSize{{Column: "account_id"}, {Column: "location_id"}, {Column: "device_id"},
		{Column: "session_reference_id"}, {Column: "record_reference_id"}, {Column: "batch_id"}}
	for _, k := range b.refs {
		p, i := b.parts[k.part], k.row
		for c, v := range [...]string{p.account[i], p.location[i], p.device[i], p.session[i], p.recordRef[i], p.batch[i]} {
			sizes[c].Bytes += len(v)
		}
	}
	for c := range sizes {
		sizes[c].Rows = len(b.refs)
	}
	return sizes
}

// gather returns one column of b's rows in b's order, in *buf's storage (the driver
// copies what it is given, so one buffer serves every column of a type in turn).
func gather[T any](buf *[]T, b block, column func(*Rows) []T) any {
	cols := make([][]T, len(b.parts))
	for i, p := range b.parts {
		cols[i] = column(p)
	}
	out := (*buf)[:0]
	for _, k := range b.refs {
		out = append(out, cols[k.part][k.row])
	}
	*buf = out
	return out
}

// flushBuffers are a flusher's buffers, kept from flush to flush.
type flushBuffers struct {
	sorter
	columns columnBuffers
}

// columnBuffers are the buffers for gathering columns.
type columnBuffers struct {
	strings []string
	uint8s  []uint8
	int8s   []int8
	int64s  []int64
	floats  []float64
	uint64s []uint64
}

// release lets go of the strings of the last column gathered: they point into request
// bodies, which an idle writer must not keep alive.
func (cb *columnBuffers) release() {
	clear(cb.strings)
	cb.strings = cb.strings[:0]
}

// insertColumn gathers one column of insertRecordsStmt for a block's rows.
type insertColumn func(cb *columnBuffers, b block) any

// column is the insertColumn of col, gathered into the buffer buf selects.
func column[T any](buf func(*columnBuffers) *[]T, col func(*Rows) []T) insertColumn {
	return func(cb *columnBuffers, b block) any { return gather(buf(cb), b, col) }
}

// The buffer of each column type.
var (
	strs    = func(cb *columnBuffers) *[]string { return &cb.strings }
	uint8s  = func(cb *columnBuffers) *[]uint8 { return &cb.uint8s }
	int8s   = func(cb *columnBuffers) *[]int8 { return &cb.int8s }
	int64s  = func(cb *columnBuffers) *[]int64 { return &cb.int64s }
	floats  = func(cb *columnBuffers) *[]float64 { return &cb.floats }
	uint64s = func(cb *columnBuffers) *[]uint64 { return &cb.uint64s }
)

// insertColumns are the columns of insertRecordsStmt, in its order.
var insertColumns = [...]insertColumn{
	column(strs, func(r *Rows) []string { return r.account }),
	column(uint8s, func(r *Rows) []uint8 { return r.live }),
	column(strs, func(r *Rows) []string { return r.location }),
	column(strs, func(r *Rows) []string { return r.device }),
	column(int8s, func(r *Rows) []int8 { return r.direction }),
	column(int8s, func(r *Rows) []int8 { return r.tariffRate }),
	column(int64s, func(r *Rows) []int64 { return r.start }),
	column(int64s, func(r *Rows) []int64 { return r.end }),
	column(floats, func(r *Rows) []float64 { return r.energy }),
	column(floats, func(r *Rows) []float64 { return r.confidence }),
	column(strs, func(r *Rows) []string { return r.session }),
	column(strs, func(r *Rows) []string { return r.recordRef }),
	column(strs, func(r *Rows) []string { return r.batch }),
	column(uint64s, func(r *Rows) []uint64 { return r.version }),
}
