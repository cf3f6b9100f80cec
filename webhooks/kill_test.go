package webhooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/rediscache"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/webhooks"
)

// The environment of the dispatcher process TestKilledMidDelivery starts and kills.
const (
	childDB     = "KWHOUSE_WEBHOOKS_CHILD_DB"
	childPrefix = "KWHOUSE_WEBHOOKS_CHILD_PREFIX"
	childConfig = "KWHOUSE_WEBHOOKS_CHILD_CONFIG"
)

// A kwhouse process killed (SIGKILL: nothing given back, nothing stored) while an endpoint
// holds its attempt: after a restart the event still arrives, with the same webhook-id,
// once the dead process's lease has expired. The cut attempt is the one repeat the
// receiver sees (at least once: a duplicate after a crash, counted here).
func TestKilledMidDelivery(t *testing.T) {
	h := start(t, func(w *config.Webhooks) { w.Timeout, w.SweepInterval = 3*time.Second, 500*time.Millisecond })
	rcv := newReceiver(t, always(200))
	rcv.hang = func(n int) bool { return n == 0 }
	h.endpoint(rcv.url())
	cfg, _ := json.Marshal(h.cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDispatcherProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDB+"="+h.api.Database(), childPrefix+"="+h.api.RedisPrefix(), childConfig+"="+string(cfg))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "dispatching" {
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the dispatcher process did not start in 60 s")
	}

	h.device()
	waitFor(t, 30*time.Second, func() bool { return len(rcv.requests()) >= 1 })
	if err := cmd.Process.Kill(); err != nil { // mid-delivery: the receiver has not answered
		t.Fatal(err)
	}
	_ = cmd.Wait()

	restarted := h.dispatcher()
	waitFor(t, 45*time.Second, func() bool { turn(t, restarted); return len(rcv.requests()) >= 2 })
	for range 5 {
		turn(t, restarted)
	}
	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2: the attempt cut by the kill and the one after the restart", len(got))
	}
	if a, b := got[0].header.Get("webhook-id"), got[1].header.Get("webhook-id"); a == "" || a != b {
		t.Errorf("after the restart webhook-id %q, the cut attempt had %q", b, a)
	}
}

// TestDispatcherProcess is the kwhouse process TestKilledMidDelivery kills: a dispatcher
// on the test's database and Redis prefix, dispatching until it is killed.
func TestDispatcherProcess(t *testing.T) {
	db := os.Getenv(childDB)
	if db == "" {
		t.Skip("the process TestKilledMidDelivery starts")
	}
	var cfg config.Webhooks
	if err := json.Unmarshal([]byte(os.Getenv(childConfig)), &cfg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ch := testkit.ClickHouseConfig(t)
	ch.Database = db
	chdb, err := chstore.Open(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	cache := rediscache.New(testkit.RedisConfig(t), os.Getenv(childPrefix), testkit.Logger())
	store := webhooks.NewStore(chdb)
	d := webhooks.NewDispatcher(store, webhooks.NewService(docstore.New(chdb, cache, time.Now), store, false), cache, cfg,
		testkit.Logger(), webhooks.DispatcherOptions{})
	if err := d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("dispatching\n")
	d.Run(ctx) // until killed
}

// waitFor polls done until it holds or d has passed.
func waitFor(t *testing.T, d time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("not done in %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
