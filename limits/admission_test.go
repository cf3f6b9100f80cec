package limits

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
)

func TestAdmissionQueueFullShedsFreedServes(t *testing.T) {
	a := newAdmission(config.Limits{Queries: 2, AccountQueries: 1, QueryQueue: 1, QueryWait: 2 * time.Second})
	ctx := context.Background()
	relA, err := a.enter(ctx, "acc_a")
	if err != nil {
		t.Fatal(err)
	}
	// acc_a has its one turn: its next query waits in the queue (one place)...
	got := make(chan error, 1)
	go func() {
		rel, err := a.enter(ctx, "acc_a")
		if rel != nil {
			defer rel()
		}
		got <- err
	}()
	waitFor(t, func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.waiting == 1 })
	// ...so a third, with the queue full and no turn for acc_a, is shed at once: 503.
	if _, err := a.enter(ctx, "acc_a"); kwhouse.KindOf(err) != kwhouse.KindUnavailable {
		t.Fatalf("third query of a full queue: %v, want unavailable", err)
	}
	// Another account still has a process slot: served at once despite the full queue.
	relB, err := a.enter(ctx, "acc_b")
	if err != nil {
		t.Fatalf("another account: %v", err)
	}
	relB()
	// Freed: the waiting query is served.
	relA()
	if err := <-got; err != nil {
		t.Fatalf("the queued query after a turn ended: %v", err)
	}
}

func TestAdmissionWaitRunsOut(t *testing.T) {
	a := newAdmission(config.Limits{Queries: 1, AccountQueries: 1, QueryQueue: 4, QueryWait: 50 * time.Millisecond})
	rel, err := a.enter(context.Background(), "acc_a")
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	start := time.Now()
	_, err = a.enter(context.Background(), "acc_b")
	if e := kwhouse.AsError(err); e == nil || e.Kind != kwhouse.KindUnavailable || e.RetryAfter <= 0 {
		t.Fatalf("no turn within the wait: %v, want 503 with a retry-after", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("gave up after %s, before the 50 ms wait", d)
	}
	if len(a.all) != 1 || a.waiting != 0 {
		t.Errorf("after a shed query: %d running, %d waiting; want 1 and 0", len(a.all), a.waiting)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}
