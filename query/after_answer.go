package query

import (
	"context"
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
// until sent is called (the answer written; later calls do nothing), and that function.
// Work started on a context without it (a background pricer's pass) starts at once.
func WithAnswerSending(ctx context.Context) (context.Context, func()) {
	answer, sent := context.WithCancel(context.Background())
	return context.WithValue(ctx, sendingKey{}, answer.Done()), sent
}

// afterAnswer is the context of work after the answer ctx computes, once it is sent
// (WithAnswerSending) or afterAnswerWait has passed, at once when ctx computes none: ctx's
// values without its cancellation, for at most timeout. Call it on the work's goroutine.
func afterAnswer(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if sent, ok := ctx.Value(sendingKey{}).(<-chan struct{}); ok {
		t := time.NewTimer(afterAnswerWait)
		select {
		case <-sent:
		case <-t.C:
		}
		t.Stop()
	}
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}
