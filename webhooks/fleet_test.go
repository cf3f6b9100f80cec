package webhooks_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/webhooks"
)

// Two kwhouse processes dispatching from one database and Redis deliver every event once.
func TestTwoDispatchersDeliverEveryEventOnce(t *testing.T) {
	h := start(t, func(w *config.Webhooks) { w.PollInterval = 100 * time.Millisecond })
	rcv := newReceiver(t, always(200))
	a, b := h.dispatcher(), h.dispatcher()
	h.endpoint(rcv.url())
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, d := range []*webhooks.Dispatcher{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	const events = 40
	began := time.Now()
	for range events {
		h.device()
	}
	t.Logf("created in %v, %d delivered", time.Since(began), len(rcv.requests()))
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.requests()) < events && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("delivered after %v", time.Since(began))
	time.Sleep(500 * time.Millisecond) // time for a duplicate to arrive
	stop()
	wg.Wait()
	seen := map[string]int{}
	for _, r := range rcv.requests() {
		seen[r.header.Get("webhook-id")]++
	}
	if len(seen) != events {
		t.Errorf("%d distinct events delivered, want %d", len(seen), events)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
}

// A process stopped in the middle of an attempt records nothing; another process (or the
// same one restarted) makes the attempt, with the same webhook-id.
func TestAttemptCutShortIsMadeAgainByAnotherProcess(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, always(200))
	rcv.hang = func(n int) bool { return n == 0 }
	first := h.dispatcher()
	h.endpoint(rcv.url())
	h.device()
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { first.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(rcv.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	kill() // mid-delivery: the receiver has the request and has not answered
	<-done

	restarted := h.dispatcher()
	h.clock.Advance(h.cfg.SweepInterval)
	drive(t, restarted, func() bool { return len(rcv.requests()) == 2 })
	got := rcv.requests()
	if got[0].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
		t.Errorf("the repeated attempt has webhook-id %s, the cut one %s", got[1].header.Get("webhook-id"), got[0].header.Get("webhook-id"))
	}
}

type stubResolver map[string]string

func (s stubResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := s[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host (stub)", Name: host, IsNotFound: true}
}

// A live-mode endpoint whose name resolves to an internal address gets failed attempts
// that say why, and no connection.
func TestLiveModeDeliveryToAnInternalAddressFails(t *testing.T) {
	h := start(t, nil)
	live := h.api.As(h.api.NewAccount("live").Live())
	r := live("POST", "/webhooks", map[string]any{"url": "https://metadata.example/hook"})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["id"].(string)
	d := webhooks.NewDispatcher(webhooks.NewStore(h.api.App.DB), h.api.App.Webhooks, h.api.App.Cache, h.cfg, testkit.Logger(),
		webhooks.DispatcherOptions{Now: h.clock.Now, Dial: loopbackOnly(t), Resolver: stubResolver{"metadata.example": "169.254.169.254"}})
	turn(t, d)
	live("POST", "/customers", map[string]any{})
	var attempts []any
	drive(t, d, func() bool {
		attempts = live("GET", "/webhooks/"+id+"/deliveries", nil).Map(t)["data"].([]any)
		return len(attempts) > 0
	})
	a := attempts[0].(map[string]any)
	if a["status"] != "pending" || !strings.Contains(a["error"].(string), "169.254.169.254") ||
		!strings.Contains(a["error"].(string), "internal address") {
		t.Errorf("attempt %v: want a refusal naming the address", a)
	}
}

// An endpoint failing for webhooks.disable_after is disabled, and webhook.disabled tells
// the account.
func TestEndpointFailingTooLongIsDisabled(t *testing.T) {
	h := start(t, func(w *config.Webhooks) { w.DisableAfter = time.Minute })
	dead := newReceiver(t, always(503))
	d := h.dispatcher()
	id, _ := h.endpoint(dead.url())
	h.device()
	drive(t, d, func() bool { return len(dead.requests()) == 1 })
	h.clock.Advance(5 * time.Second)
	drive(t, d, func() bool { return len(dead.requests()) == 2 })
	if e := h.do("GET", "/webhooks/"+id, nil).Map(t); e["disabled"] != false || e["failing_since"] == nil {
		t.Fatalf("after 5 s of failures: %v", e)
	}
	h.clock.Advance(5*time.Minute + h.cfg.SweepInterval)
	drive(t, d, func() bool { return len(dead.requests()) == 3 })
	if e := h.do("GET", "/webhooks/"+id, nil).Map(t); e["disabled"] != true {
		t.Fatalf("after 6 min of failures (disable_after 1m): %v", e)
	}
	events := h.do("GET", "/events?event_type=webhook.disabled", nil).Map(t)["data"].([]any)
	if len(events) != 1 || events[0].(map[string]any)["data"].(map[string]any)["id"] != id {
		t.Fatalf("webhook.disabled events: %v", events)
	}
	if _, shown := events[0].(map[string]any)["data"].(map[string]any)["secret"]; shown {
		t.Error("webhook.disabled shows the secret")
	}
	h.device()
	for range 5 {
		turn(t, d)
	}
	if n := len(dead.requests()); n != 3 {
		t.Errorf("%d requests to a disabled endpoint, want none after the third", n)
	}
}
