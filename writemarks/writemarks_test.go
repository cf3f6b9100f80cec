package writemarks_test

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/writemarks"
)

// TestMarksVouchOnlyWhileNoWriteBegan: a scope's epoch vouches for nothing while a write of
// it is pending, moves at each begin and end, and leaves other scopes' alone; a write
// spanning two scopes marks both; a pending write past its deadline is removed by the next
// look, which moves the epoch.
func TestMarksVouchOnlyWhileNoWriteBegan(t *testing.T) {
	rdb, prefix := testkit.Redis(t)
	ctx := context.Background()
	m := writemarks.New(rdb, prefix, time.Second)
	a, b := kwhouse.Scope{AccountID: "acc_a"}, kwhouse.Scope{AccountID: "acc_b", LiveMode: true}
	look := func(s kwhouse.Scope) writemarks.Epoch {
		_, _, e := m.Look(ctx, "no-entry", s)
		return e
	}
	a0, b0 := look(a), look(b)
	if a0 == 0 || b0 == 0 || look(a) != a0 {
		t.Fatalf("first looks: %d, %d, then %d (want one epoch each, unchanged)", a0, b0, look(a))
	}
	w, err := m.Begin(ctx, a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	if look(a) != 0 || look(b) != 0 {
		t.Errorf("while a write of both is pending: epochs %d, %d (want 0)", look(a), look(b))
	}
	if err := w.End(ctx); err != nil {
		t.Fatal(err)
	}
	a1 := look(a)
	if a1 <= a0 || look(b) <= b0 {
		t.Errorf("after the write: epochs %d, %d from %d, %d (want both moved)", a1, look(b), a0, b0)
	}
	if _, err := m.Begin(ctx, b); err != nil { // never ended
		t.Fatal(err)
	}
	if look(a) != a1 || look(b) != 0 {
		t.Errorf("a write of b pending: epochs %d, %d (want a's %d, b's 0)", look(a), look(b), a1)
	}
	time.Sleep(1200 * time.Millisecond)
	if e := look(b); e == 0 || e == b0 {
		t.Errorf("past the pending write's deadline: b's epoch %d (want a new one)", e)
	}

	var none *writemarks.Marks // the answer cache off: nothing to mark
	if err := none.Around(ctx, []kwhouse.Scope{a}, func() error { return nil }); err != nil {
		t.Errorf("no marks: %v", err)
	}
}
