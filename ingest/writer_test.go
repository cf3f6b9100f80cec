package ingest

import (
	"context"
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
