package webhooks_test

import (
	"context"
	"testing"
	"time"
)

// A running dispatcher makes a retry when it comes due, by itself.
func TestRunningDispatcherRetries(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, func(n int) int { return map[bool]int{true: 500, false: 204}[n == 0] })
	d := h.dispatcher()
	h.endpoint(rcv.url())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()
	h.device()
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(rcv.requests()); n != 2 {
		t.Fatalf("%d attempts 20 s after the event, want 2 (a failure, then the retry 5 s later)", n)
	}
}
