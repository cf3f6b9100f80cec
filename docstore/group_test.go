package docstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Writes arriving while an insert runs share the next insert; each caller gets its result
// and the versions its documents were stored with.
func TestGroupCommitSharesInsertsAndHandsBackResults(t *testing.T) {
	var g groupCommit
	var mu sync.Mutex
	var inserts [][]string
	release := make(chan struct{})
	insert := func(_ context.Context, docs []Doc) error {
		mu.Lock()
		ids := []string{}
		for i := range docs {
			ids = append(ids, docs[i].ID)
			docs[i].Version = uint64(100 + i)
		}
		inserts = append(inserts, ids)
		first := len(inserts) == 1
		mu.Unlock()
		if first {
			<-release // hold the first insert while others queue
			return nil
		}
		return errors.New("disk full")
	}
	ctx := context.Background()
	firstDone := make(chan error)
	go func() { firstDone <- g.write(ctx, []Doc{{ID: "a"}}, insert) }()
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(inserts) == 1 })
	var wg sync.WaitGroup
	results := make([]error, 3)
	docs := [][]Doc{{{ID: "b"}, {ID: "b-event"}}, {{ID: "c"}}, {{ID: "d"}}}
	for i := range docs {
		wg.Add(1)
		go func(i int) { defer wg.Done(); results[i] = g.write(ctx, docs[i], insert) }(i)
	}
	waitUntil(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.pending) == 3 })
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatalf("first write: %v", err)
	}
	wg.Wait()
	if len(inserts) != 2 || len(inserts[1]) != 4 {
		t.Fatalf("inserts %v, want the three queued writes in one second insert", inserts)
	}
	for i, err := range results {
		if err == nil || err.Error() != "disk full" {
			t.Errorf("write %d: %v, want the shared insert's error", i, err)
		}
	}
	if docs[0][1].Version == 0 || docs[2][0].Version == 0 {
		t.Errorf("versions not handed back: %+v", docs)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}
