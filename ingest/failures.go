package ingest

import (
	"container/heap"
	"sort"
)

// DefaultMaxFailed is how many failed records a batch lists when the config leaves
// ingest.max_failed_records 0.
const DefaultMaxFailed = 1000

// failures are a request's failed records: the first keep of them by record number (every
// one when keep is 0) and how many there were. Memory follows keep, not the body: a body
// of three million bad lines keeps a thousand.
type failures struct {
	keep  int
	count int
	kept  failHeap // a max-heap on RecordNum once keep is set
}

// add counts f and keeps it when it is among the first keep by record number.
func (fs *failures) add(f FailedRecord) {
	fs.count++
	switch {
	case fs.keep == 0:
		fs.kept = append(fs.kept, f)
	case len(fs.kept) < fs.keep:
		heap.Push(&fs.kept, f)
	case f.RecordNum < fs.kept[0].RecordNum:
		fs.kept[0] = f
		heap.Fix(&fs.kept, 0)
	}
}

// firstFailed sorts fs by record number and returns the first keep of them (all: keep 0).
func firstFailed(fs []FailedRecord, keep int) []FailedRecord {
	sort.Slice(fs, func(i, j int) bool { return fs[i].RecordNum < fs[j].RecordNum })
	if keep > 0 && len(fs) > keep {
		fs = fs[:keep:keep]
	}
	return fs
}

// failHeap orders failed records by falling record number (container/heap).
type failHeap []FailedRecord

func (h failHeap) Len() int           { return len(h) }
func (h failHeap) Less(i, j int) bool { return h[i].RecordNum > h[j].RecordNum }
func (h failHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *failHeap) Push(x any)        { *h = append(*h, x.(FailedRecord)) }
func (h *failHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
