package ingest

import (
	"context"
	"math/rand/v2"
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
	w := NewWriter(db, WriterConfig{MaxRows: 1_000_000, MaxDelay: time.Hour, Flushers: 1, QueueLength: 16}, testkit.Logger())
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
	blocks := rows.byPartition(MaxPartitionsPerInsert)
	total := 0
	for _, b := range blocks {
		days := map[int64]bool{}
		for _, s := range b.start {
			days[s/86400] = true
		}
		if len(days) > 100 {
			t.Errorf("a block spans %d days", len(days))
		}
		total += b.Len()
	}
	if len(blocks) != 3 || total != 750 {
		t.Errorf("%d blocks with %d rows, want 3 blocks with 750", len(blocks), total)
	}
}

// TestFlushHoldsForAnnouncedRequests: while a request is being decoded (expect), a
// flush waits for its rows (up to MaxHold), so both land in one insert block.
func TestFlushHoldsForAnnouncedRequests(t *testing.T) {
	db := testkit.ClickHouse(t)
	w := NewWriter(db, WriterConfig{MaxRows: 1_000_000, MaxDelay: time.Millisecond, MaxHold: 5 * time.Second,
		Flushers: 1, QueueLength: 16}, testkit.Logger())
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
	w := NewWriter(db, WriterConfig{MaxRows: 1000, MaxDelay: time.Millisecond, Flushers: 1, QueueLength: 4}, testkit.Logger())
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
	if err := w.insert(context.Background(), rows); err != nil {
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
	// As a flush sees it: the rows of three requests.
	sorted := sortedBlock([]*Rows{rows.slice(0, 100), rows.slice(100, 350), rows.slice(350, 500)})
	if len(stored) != sorted.Len() {
		t.Fatalf("%d rows stored, want %d", len(stored), sorted.Len())
	}
	mismatches := 0
	for i, v := range stored {
		if v != sorted.version[i] && !sameKey(rows, v, sorted.version[i]) {
			mismatches++
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d rows in another order than ClickHouse's", mismatches, len(stored))
	}
	if again := sortedBlock([]*Rows{sorted}); again != sorted {
		t.Error("a sorted block was copied again instead of being recognised as sorted")
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
