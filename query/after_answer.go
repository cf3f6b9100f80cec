package query

import (
	"context"
	"sync"
	"time"
)

// An answer's work after it (priced buckets written back, demand peaks kept, the answer
// stored in the answer cache) starts once the answer is sent, not beside it: on two cores
// a cold fleet month of 1,000 locations was sent 3–32 ms sooner at p50 (p50s 511–523
// against 526–542 ms in three alternate runs; docs/benchmarks.md "Priced buckets in
// ClickHouse"), its merge and CSV no longer sharing the process with that work's rows,
// gzip and garbage.

// afterAnswerWait bounds how long that work waits for its answer to be sent (a client that
// reads slowly): a write-back later than that is one the scope's next answer may not wait
// for (writeBackWait).
const afterAnswerWait = time.Second

type sendingKey struct{}

// WithAnswerSending returns a context for computing an answer whose work after it waits
// until sent is called (the answer written), and that function. Work started on a context
// without it (a background pricer's pass) starts at once.
func WithAnswerSending(ctx context.Context) (context.Context, func()) {
	ch := make(chan struct{})
	var once sync.Once
	return context.WithValue(ctx, sendingKey{}, ch), func() { once.Do(func() { close(ch) }) }
}

// waitAnswerSent waits until the answer ctx computes is sent (WithAnswerSending), or
// afterAnswerWait has passed; at once when ctx computes none.
func waitAnswerSent(ctx context.Context) {
	ch, ok := ctx.Value(sendingKey{}).(chan struct{})
	if !ok {
		return
	}
	t := time.NewTimer(afterAnswerWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}
