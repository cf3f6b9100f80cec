package embedded_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/embedded"
	"github.com/kwhouse/kwhouse/rediscache"
	"github.com/kwhouse/kwhouse/versions"
)

func TestLockIsHeldUntilClosed(t *testing.T) {
	dir := t.TempDir()
	first, err := embedded.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Lock(dir); !errors.Is(err, embedded.ErrInUse) {
		t.Fatalf("second lock while held: %v, want ErrInUse", err)
	}
	first.Close()
	again, err := embedded.Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Close()
}

// The in-process Redis does what kwhouse asks of Redis: locks with a TTL that runs out on
// the wall clock, the scripts of the row-version clock and of unlocking, rate limits.
func TestInProcessRedisPlaysRedissRoles(t *testing.T) {
	m, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := rediscache.New(config.Redis{Addr: m.Addr(), Timeout: time.Second, CacheTTL: time.Minute}, "t:", log)
	defer c.Close()

	unlock, ok, err := c.Lock(ctx, "k", 300*time.Millisecond)
	if err != nil || !ok {
		t.Fatalf("lock: ok %v err %v", ok, err)
	}
	if _, _, err := c.Lock(ctx, "k", time.Second); !errors.Is(err, rediscache.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	unlock()
	if _, ok, err := c.Lock(ctx, "k", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("lock after unlock: ok %v err %v", ok, err)
	}
	time.Sleep(500 * time.Millisecond)
	if _, ok, err := c.Lock(ctx, "k", time.Second); err != nil || !ok {
		t.Fatalf("lock after its TTL ran out: ok %v err %v; want it free", ok, err)
	}

	clock := versions.New(c.Scripter(), "t:row-version", nil, log)
	before := uint64(time.Now().UnixNano())
	a, err := clock.Next(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := clock.Next(ctx, 1)
	if err != nil || a < before || b < a+3 {
		t.Fatalf("versions %d then %d (err %v), want ≥ %d and increasing past the 3 reserved", a, b, err, before)
	}

	r := rediscache.Rate{Rate: 2, Burst: 2, Period: time.Minute}
	for i, want := range []bool{true, true, false} {
		allowed, _, err := c.AllowN(ctx, "rate", r, 1)
		if err != nil || allowed != want {
			t.Fatalf("request %d: allowed %v err %v, want %v", i+1, allowed, err, want)
		}
	}
}
