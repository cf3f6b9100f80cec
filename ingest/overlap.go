package ingest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// failOverlaps fails every record that overlaps, without covering exactly the same
// interval, a record sent before it in the same request with the same reading key
// (location, device, direction, tariff_rate) that was kept: both would be stored and
// counted as energy (02:00–04:00 1,000 Wh and 03:00–04:00 500 Wh are 1,500 Wh, not
// 1,000). A record with exactly the same interval replaces the earlier one, as it always
// has. Readings already stored are not consulted (docs/ingest.md).
//
// One pass finds the keys whose records do not arrive in time order (a push's usual
// records do, and cost a map lookup each); only those keys' records are sorted and walked.
func (p *parsed) failOverlaps() {
	if len(p.records) < 2 {
		return
	}
	suspect := p.outOfOrder()
	if len(suspect) == 0 {
		return
	}
	byKey := func(a, b int32) int {
		x, y := &p.records[a], &p.records[b]
		return cmp.Or(compareKey(x, y), cmp.Compare(x.Start, y.Start), cmp.Compare(x.End, y.End), cmp.Compare(a, b))
	}
	slices.SortFunc(suspect, byKey)
	failed := map[int32]int32{} // record → the earlier record it overlaps
	for lo := 0; lo < len(suspect); {
		hi := lo + 1
		for hi < len(suspect) && compareKey(&p.records[suspect[lo]], &p.records[suspect[hi]]) == 0 {
			hi++
		}
		p.walkArrivals(suspect[lo:hi], failed)
		lo = hi
	}
	if len(failed) > 0 {
		p.dropFailed(failed)
	}
}

// compareKey orders records by reading key.
func compareKey(x, y *Record) int {
	return cmp.Or(strings.Compare(x.LocationID, y.LocationID), strings.Compare(x.DeviceID, y.DeviceID),
		cmp.Compare(x.Direction, y.Direction), cmp.Compare(x.TariffRate, y.TariffRate))
}

// readingKey is what identifies a meter's series of readings.
type readingKey struct {
	location, device string
	direction, rate  int8
}

func keyOf(r *Record) readingKey {
	return readingKey{r.LocationID, r.DeviceID, r.Direction, r.TariffRate}
}

// timeRun is how records have arrived so far: the last interval and the latest end.
type timeRun struct {
	lastStart, lastEnd, maxEnd int64
	suspect                    bool
}

// next takes the next record's interval: false when it starts before an earlier record
// ends, other than as a repeat of the interval just before it.
func (t *timeRun) next(r *Record) bool {
	switch {
	case r.Start == t.lastStart && r.End == t.lastEnd:
	case r.Start >= t.maxEnd:
		t.lastStart, t.lastEnd, t.maxEnd = r.Start, r.End, r.End
	default:
		return false
	}
	return true
}

// outOfOrder returns the records of every key whose records do not arrive in time order
// (timeRun). A request that arrives in time order as a whole — a fleet's readings of one
// half hour, then the next — needs no per-key look at all; otherwise keys are looked up
// only where they change (one location's series, then the next).
func (p *parsed) outOfOrder() []int32 {
	whole := timeRun{lastStart: p.records[0].Start, lastEnd: p.records[0].End, maxEnd: p.records[0].End}
	inOrder := true
	for i := 1; i < len(p.records) && inOrder; i++ {
		inOrder = whole.next(&p.records[i])
	}
	if inOrder {
		return nil
	}
	index := map[readingKey]int32{}
	var runs []timeRun
	var run *timeRun
	any := false
	for i := range p.records {
		r := &p.records[i]
		if i == 0 || compareKey(r, &p.records[i-1]) != 0 {
			k := keyOf(r)
			at, seen := index[k]
			if !seen {
				at = int32(len(runs))
				index[k] = at
				runs = append(runs, timeRun{lastStart: r.Start, lastEnd: r.End, maxEnd: r.End})
				run = &runs[at] // runs may have moved: take the pointer after the append
				continue
			}
			run = &runs[at]
		}
		if !run.next(r) {
			run.suspect, any = true, true
		}
	}
	if !any {
		return nil
	}
	var out []int32
	for i := range p.records {
		if runs[index[keyOf(&p.records[i])]].suspect {
			out = append(out, int32(i))
		}
	}
	return out
}

// walkArrivals keeps one key's records in arrival order, each unless it overlaps one
// kept before it (then failed[it] is that one). Kept intervals never overlap, so of
// those starting before a record ends, the latest-starting one ends last: it alone
// decides. A Fenwick tree over the distinct intervals (sorted) finds it in O(log n).
func (p *parsed) walkArrivals(group []int32, failed map[int32]int32) {
	var spans []Record // distinct intervals, sorted
	pos := make(map[int32]int, len(group))
	for _, i := range group {
		r := p.records[i]
		if n := len(spans); n == 0 || spans[n-1].Start != r.Start || spans[n-1].End != r.End {
			spans = append(spans, r)
		}
		pos[i] = len(spans) - 1
	}
	kept := newFenwick(len(spans))
	keeper := make([]int32, len(spans)) // the record that first kept each interval
	arrivals := slices.Clone(group)
	slices.Sort(arrivals)
	for _, i := range arrivals {
		r, at := &p.records[i], pos[i]
		before, _ := slices.BinarySearchFunc(spans, r.End, func(s Record, end int64) int { return cmp.Compare(s.Start, end) })
		if last := kept.lastBelow(before); last >= 0 && last != at && spans[last].End > r.Start {
			failed[i] = keeper[last]
			continue
		}
		if !kept.has(at) {
			kept.add(at)
			keeper[at] = i
		}
	}
}

// dropFailed moves the records of failed to p.failed.
func (p *parsed) dropFailed(failed map[int32]int32) {
	kept, nums := p.records[:0], p.nums[:0]
	for i, rec := range p.records {
		j, ok := failed[int32(i)]
		if !ok {
			kept, nums = append(kept, rec), append(nums, p.nums[i])
			continue
		}
		other := &p.records[j]
		p.failed.add(FailedRecord{RecordNum: p.nums[i], RecordReferenceID: rec.RecordRef,
			Error: fmt.Sprintf("overlaps record %d (%s to %s) of the same location, device, direction and tariff_rate: "+
				"each interval's energy is counted once; to replace a reading, send it with the same start_time and end_time",
				p.nums[j], unixText(other.Start), unixText(other.End))})
	}
	p.records, p.nums = kept, nums
}

func unixText(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }

// fenwick is a set of positions 0..n-1 answering "the largest member below k".
type fenwick struct {
	tree []int32 // 1-based counts
	in   []bool
}

func newFenwick(n int) *fenwick { return &fenwick{tree: make([]int32, n+1), in: make([]bool, n)} }

func (f *fenwick) has(i int) bool { return f.in[i] }

func (f *fenwick) add(i int) {
	f.in[i] = true
	for j := i + 1; j < len(f.tree); j += j & -j {
		f.tree[j]++
	}
}

// lastBelow returns the largest member smaller than k, or -1.
func (f *fenwick) lastBelow(k int) int {
	var c int32
	for j := k; j > 0; j -= j & -j {
		c += f.tree[j]
	}
	if c == 0 {
		return -1
	}
	// The c-th member (1-based): descend the tree.
	at := 0
	for step := highBit(len(f.tree) - 1); step > 0; step >>= 1 {
		if next := at + step; next < len(f.tree) && f.tree[next] < c {
			at, c = next, c-f.tree[next]
		}
	}
	return at // 0-based: position at+1 in the tree
}

// highBit is the largest power of two not above n (0 for 0).
func highBit(n int) int {
	b := 1
	for b<<1 <= n {
		b <<= 1
	}
	if n == 0 {
		return 0
	}
	return b
}
