package query

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
)

// TestWriteBacksStartOnceTheAnswerIsSent: a write-back started while an answer is computed
// runs once the answer is sent, and the scope's next answer (wait) sees it pending until
// then; one started without an answer (a pricer's pass) runs at once.
func TestWriteBacksStartOnceTheAnswerIsSent(t *testing.T) {
	var w writeBacks
	scope := kwhouse.Scope{AccountID: "acc_sent"}
	ctx, sent := WithAnswerSending(context.Background())
	ran := make(chan struct{})
	w.start(ctx, scope, func(context.Context) error { close(ran); return nil })
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.wait(short, scope); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("before its answer was sent, waiting for the write-back returned %v, want it pending", err)
	}
	select {
	case <-ran:
		t.Fatal("the write-back ran before its answer was sent")
	default:
	}
	sent()
	sent() // a second call (a handler's deferred one after another) is harmless
	if err := w.wait(context.Background(), scope); err != nil {
		t.Fatal(err)
	}
	<-ran

	pass := make(chan struct{})
	w.start(context.Background(), scope, func(context.Context) error { close(pass); return nil })
	if err := w.wait(context.Background(), scope); err != nil {
		t.Fatal(err)
	}
	<-pass
}
