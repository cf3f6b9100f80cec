package ingest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
)

func TestCloseFlushesEveryQueuedWrite(t *testing.T) {
	db := testkit.ClickHouse(t)
	// A flush would wait an hour for more rows: only Close makes these writes happen.
	w := NewWriter(db, WriterConfig{MaxRows: 1_000_000, MaxDelay: time.Hour, Flushers: 1, QueueLength: 16})
	scope := kwhouse.Scope{AccountID: "acc_0123456789abcdef01234567"}
	const writers = 5
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rows := &Rows{}
			rec := Record{LocationID: "loc_0123456789abcdef01234567", Direction: Import, TariffRate: Import,
				Start: 1_700_000_000 + int64(i)*1800, End: 1_700_000_000 + int64(i+1)*1800, EnergyWh: 1, Confidence: 1}
			rows.add(scope, &rec, "bat_0123456789abcdef01234567", uint64(i+1))
			errs <- w.Write(context.Background(), rows)
		}(i)
	}
	time.Sleep(200 * time.Millisecond) // let every write queue up
	w.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("queued write answered %v", err)
		}
	}
	var n uint64
	if err := db.QueryRow(context.Background(), chstore.Tool("SELECT count() FROM meter_records")).Scan(&n); err != nil || n != writers {
		t.Fatalf("%d rows stored after Close (%v), want %d", n, err, writers)
	}
	late := &Rows{}
	late.add(scope, &Record{Start: 1_700_000_000, End: 1_700_000_060}, "", 99)
	if err := w.Write(context.Background(), late); err != ErrClosed {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
}

func TestBlocksNeverSpanMoreThan100Days(t *testing.T) {
	rows := &Rows{}
	scope := kwhouse.Scope{AccountID: "acc_0123456789abcdef01234567"}
	for d := int64(0); d < 250; d++ {
		for h := int64(0); h < 3; h++ {
			rec := Record{Start: 1_700_006_400 + d*86400 + h*3600, End: 1_700_006_400 + d*86400 + h*3600 + 60}
			rows.add(scope, &rec, "", uint64(d*3+h))
		}
	}
	// As a flush sees it: two requests, the second's days interleaved with the first's.
	blocks := new(sorter).sortedBlock([]*Rows{rows.slice(0, 400), rows.slice(400, 750)}).byPartition(MaxPartitionsPerInsert)
	total, seen := 0, map[uint64]bool{}
	for _, b := range blocks {
		days := map[int64]bool{}
		for _, k := range b.refs {
			p := b.parts[k.part]
			days[p.start[k.row]/86400] = true
			seen[p.version[k.row]] = true
		}
		if len(days) > 100 {
			t.Errorf("a block spans %d days", len(days))
		}
		total += b.Len()
	}
	if len(blocks) != 3 || total != 750 || len(seen) != 750 {
		t.Errorf("%d blocks with %d rows (%d distinct), want 3 blocks with 750", len(blocks), total, len(seen))
	}
}

func TestBlocksOfUpTo100DaysAreNotSplit(t *testing.T) {
	scope := kwhouse.Scope{AccountID: "acc_0123456789abcdef01234567"}
	for days, want := range map[int64]int{1: 1, 100: 1, 101: 2, 200: 2, 201: 3} {
		rows := &Rows{}
		for d := days - 1; d >= 0; d-- { // last day first: the range, not the order, counts
			rows.add(scope, &Record{Start: 1_700_006_400 + d*86400, End: 1_700_006_400 + d*86400 + 60}, "", uint64(d))
		}
		if got := len(new(sorter).sortedBlock([]*Rows{rows}).byPartition(MaxPartitionsPerInsert)); got != want {
			t.Errorf("%d days: %d blocks, want %d", days, got, want)
		}
	}
}

// TestFlushHoldsForAnnouncedRequests: while a request is being decoded (expect), a
// flush waits for its rows (up to MaxHold), so both land in one insert block.
func TestFlushHoldsForAnnouncedRequests(t *testing.T) {
	db := testkit.ClickHouse(t)
	w := NewWriter(db, WriterConfig{MaxRows: 1_000_000, MaxDelay: time.Millisecond, MaxHold: 5 * time.Second,
		Flushers: 1, QueueLength: 16})
	defer w.Close()
	scope := kwhouse.Scope{AccountID: "acc_0123456789abcdef01234567"}
	one := func(i int) *Rows {
		rows := &Rows{}
		rows.add(scope, &Record{LocationID: "loc_0123456789abcdef01234567", Direction: Import, TariffRate: Import,
			Start: 1_700_000_000 + int64(i)*1800, End: 1_700_000_000 + int64(i+1)*1800, EnergyWh: 1, Confidence: 1},
			"bat_0123456789abcdef01234567", uint64(i+1))
		return rows
	}
	decoding := w.expect()
	first := make(chan error, 1)
	go func() { first <- w.Write(context.Background(), one(0)) }()
	select {
	case err := <-first:
		t.Fatalf("the first write was flushed (%v) while another request was being decoded", err)
	case <-time.After(300 * time.Millisecond):
	}
	second := make(chan error, 1)
	go func() { second <- w.Write(context.Background(), one(1)) }()
	time.Sleep(50 * time.Millisecond) // the second write is queued behind the held flush
	decoding()
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if st := w.Stats(); st.Flushes != 1 || st.Inserts != 1 || st.Rows != 2 {
		t.Errorf("stats %+v, want both rows in one flush and one insert", st)
	}
}

// TestSortedBlocksMatchClickHouseOrder: rows sorted in Go come out in the order
// ClickHouse itself gives a block it had to sort (one part, read in storage order), so
// the server can skip its sort.
func TestSortedBlocksMatchClickHouseOrder(t *testing.T) {
	db := testkit.ClickHouse(t)
	if db.Cluster != "" {
		// A Distributed table splits the block by shard and reads shards in any order; each
		// shard's share of a sorted block is sorted, so the one-part order is what matters.
		t.Skip("compares the row order of one part: run on a single node")
	}
	w := NewWriter(db, WriterConfig{MaxRows: 1000, MaxDelay: time.Millisecond, Flushers: 1, QueueLength: 4})
	defer w.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	rows := &Rows{}
	for i := 0; i < 500; i++ {
		scope := kwhouse.Scope{AccountID: pick("acc_b", "acc_a", "acc_ab"), LiveMode: rng.IntN(2) == 0}
		dir := int8(1 + rng.IntN(2))
		rec := Record{LocationID: pick("loc_Z", "loc_a", "loc_aa", "loc_\u00e9", "loc_", "loc_abcd", "loc_abcd1", "loc_abcd0", "loc_abc\x00"), DeviceID: pick("", "dev_1", "dev_10", "dev_2"),
			Direction: dir, TariffRate: int8(1 + rng.IntN(3)), Start: 1_700_006_400 + int64(rng.IntN(40))*900} // one day: one part
		rec.End = rec.Start + int64(1+rng.IntN(3))*900
		rows.add(scope, &rec, "bat_x", uint64(i+1))
	}
	// The unsorted block: ClickHouse sorts it.
	if err := w.insert(context.Background(), inOrder([]*Rows{rows}), &columnBuffers{}); err != nil {
		t.Fatal(err)
	}
	res, err := db.Query(context.Background(), chstore.Tool("SELECT version FROM meter_records SETTINGS max_threads = 1"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var stored []uint64
	for res.Next() {
		var v uint64
		if err := res.Scan(&v); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, v)
	}
	for _, path := range []struct {
		name string
		bits int
	}{{"packed keys, radix sort", 64}, {"comparison sort", 8}} {
		t.Run(path.name, func(t *testing.T) {
			defer func(b int) { packedBits = b }(packedBits)
			packedBits = path.bits
			// As a flusher sees it: the rows of three requests, its buffers used by an
			// earlier flush.
			var s sorter
			s.sortedBlock([]*Rows{rows.slice(200, 500), rows.slice(0, 30)})
			sorted := s.sortedBlock([]*Rows{rows.slice(0, 100), rows.slice(100, 350), rows.slice(350, 500)})
			if len(stored) != sorted.Len() {
				t.Fatalf("%d rows stored, want %d", len(stored), sorted.Len())
			}
			// The columns the insert sends, gathered in the block's order.
			versions := slices.Clone(lastColumn(sorted).([]uint64))
			again := s.sortedBlock([]*Rows{rows.slice(0, 100), rows.slice(100, 350), rows.slice(350, 500)})
			if !slices.Equal(lastColumn(again).([]uint64), versions) {
				t.Error("the same rows sorted again with the same buffers came out in another order")
			}
			mismatches := 0
			for i, v := range stored {
				if v != versions[i] && !sameKey(rows, v, versions[i]) {
					mismatches++
				}
			}
			if mismatches > 0 {
				t.Errorf("%d of %d rows in another order than ClickHouse's", mismatches, len(stored))
			}
		})
	}
}

// sameKey reports whether the rows with versions a and b have the same sorting key (their
// relative order is then free).
func sameKey(r *Rows, a, b uint64) bool {
	i, j := int(a-1), int(b-1)
	return r.account[i] == r.account[j] && r.live[i] == r.live[j] && r.location[i] == r.location[j] &&
		r.device[i] == r.device[j] && r.direction[i] == r.direction[j] && r.tariffRate[i] == r.tariffRate[j] &&
		r.start[i] == r.start[j] && r.end[i] == r.end[j]
}

// TestFlushStoresEveryColumnOfEveryRequest: requests that share one flush are gathered
// column by column in sorting-key order; every stored row must still carry its own values
// in every column.
func TestFlushStoresEveryColumnOfEveryRequest(t *testing.T) {
	db := testkit.ClickHouse(t)
	const requests, each = 3, 40
	w := NewWriter(db, WriterConfig{MaxRows: requests * each, MaxDelay: time.Hour, Flushers: 1, QueueLength: 4})
	defer w.Close()
	want := map[uint64]string{}
	parts := make([]*Rows, requests)
	for r := range parts {
		parts[r] = &Rows{}
		for i := 0; i < each; i++ {
			v := uint64(r*each + i + 1)
			scope := kwhouse.Scope{AccountID: fmt.Sprintf("acc_%024d", (v*7)%5), LiveMode: v%2 == 0}
			rec := Record{LocationID: fmt.Sprintf("loc_%024d", (v*13)%11), DeviceID: fmt.Sprintf("dev_%024d", v%3),
				Direction: int8(1 + v%2), TariffRate: int8(1 + v%3), Start: 1_700_000_000 + int64(v%17)*900,
				EnergyWh: float64(v) * 1.5, Confidence: float64(v%10) / 10, SessionRef: fmt.Sprint("s", v), RecordRef: fmt.Sprint("r", v)}
			rec.End = rec.Start + 900 + int64(v%2)*900
			parts[r].add(scope, &rec, fmt.Sprintf("bat_%024d", r), v)
			want[v] = fmt.Sprint(scope.AccountID, scope.LiveMode, rec.LocationID, rec.DeviceID, DirectionName(rec.Direction),
				DirectionName(rec.TariffRate), rec.Start, rec.End, rec.EnergyWh, rec.Confidence, rec.SessionRef, rec.RecordRef,
				fmt.Sprintf("bat_%024d", r))
		}
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Write(context.Background(), p); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st := w.Stats(); st.Flushes != 1 {
		t.Fatalf("%d flushes, want the requests in one", st.Flushes)
	}
	res, err := db.Query(context.Background(), chstore.Tool(`SELECT version, account_id, live_mode, location_id, device_id,
		toString(direction), toString(tariff_rate), toUInt32(start_time), toUInt32(end_time), energy_wh, confidence,
		session_reference_id, record_reference_id, batch_id FROM meter_records`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	n := 0
	for res.Next() {
		var v uint64
		var acc, loc, dev, dir, rate, sess, ref, bat string
		var live uint8
		var start, end uint32
		var energy, conf float64
		if err := res.Scan(&v, &acc, &live, &loc, &dev, &dir, &rate, &start, &end, &energy, &conf, &sess, &ref, &bat); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(acc, live == 1, loc, dev, dir, rate, int64(start), int64(end), energy, conf, sess, ref, bat)
		if got != want[v] {
			t.Errorf("row %d stored as\n%s\nwant\n%s", v, got, want[v])
		}
		n++
	}
	if n != requests*each {
		t.Errorf("%d rows stored, want %d", n, requests*each)
	}
}

func TestRadixSortsByTheLowBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, total := range []int{1, 7, 8, 20, 36, 64} {
		v := make([]uint64, 5000)
		for i := range v {
			v[i] = rng.Uint64() >> (64 - total)
		}
		want := slices.Clone(v)
		slices.Sort(want)
		if got, _ := radix(v, make([]uint64, len(v)), total); !slices.Equal(got, want) {
			t.Errorf("%d bits: radix order differs from slices.Sort", total)
		}
	}
}

// lastColumn is the version column the insert sends for b.
func lastColumn(b block) any { return insertColumns[len(insertColumns)-1](new(columnBuffers), b) }

// inOrder is a block of parts' rows as they are, part after part (unsorted).
func inOrder(parts []*Rows) block {
	b := block{parts: parts}
	for pi, p := range parts {
		for i := range p.version {
			b.refs = append(b.refs, rowRef{part: uint32(pi), row: uint32(i)})
		}
	}
	return b
}
