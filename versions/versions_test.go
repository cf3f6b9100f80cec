package versions_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/versions"
)

// Two processes' clocks disagree by ten minutes: versions drawn in turn from the shared
// counter still increase in the order they were drawn, and stay near real time.
func TestSharedClockIgnoresLocalClocks(t *testing.T) {
	rdb, prefix := testkit.Redis(t)
	ahead := func() time.Time { return time.Now().Add(10 * time.Minute) }
	behind := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	a := versions.New(rdb, prefix+"version", ahead, testkit.Logger())
	b := versions.New(rdb, prefix+"version", behind, testkit.Logger())
	ctx := context.Background()
	var last uint64
	for i := 0; i < 200; i++ {
		c, n := a, 1+i%7
		if i%2 == 1 {
			c = b
		}
		first, err := c.Next(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if first <= last {
			t.Fatalf("draw %d: first %d not above the last version %d drawn before", i, first, last)
		}
		last = first + uint64(n) - 1
	}
	if d := time.Duration(int64(last) - time.Now().UnixNano()); d > time.Second || d < -time.Second {
		t.Errorf("versions are %v from real time, want close to it", d)
	}
}

// Concurrent draws from several clocks never hand out a version twice.
func TestSharedClockNeverRepeats(t *testing.T) {
	rdb, prefix := testkit.Redis(t)
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		c := versions.New(rdb, prefix+"version", nil, testkit.Logger())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				first, _ := c.Next(context.Background(), 3)
				mu.Lock()
				for v := first; v < first+3; v++ {
					if seen[v] {
						t.Errorf("version %d handed out twice", v)
					}
					seen[v] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// The counter stays above versions already issued even when Redis's time is behind them
// (a clock stepped back, or versions issued from a fast local clock during an outage).
func TestSharedClockNeverGoesBack(t *testing.T) {
	rdb, prefix := testkit.Redis(t)
	ctx := context.Background()
	future := uint64(time.Now().Add(time.Hour).UnixNano())
	if err := rdb.Set(ctx, prefix+"version", future, 0).Err(); err != nil {
		t.Fatal(err)
	}
	c := versions.New(rdb, prefix+"version", nil, testkit.Logger())
	first, _ := c.Next(ctx, 5)
	if first != future+1 {
		t.Errorf("first %d, want %d (the counter, ahead of Redis's time)", first, future+1)
	}
	next, _ := c.Next(ctx, 1)
	if next != future+6 {
		t.Errorf("next %d, want %d", next, future+6)
	}
}

// With Redis down the clock falls back to the local one, never below a version it issued.
func TestFallbackIsMonotone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: Redis is down
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	back := time.Now().Add(time.Hour)
	now := func() time.Time { return back }
	c := versions.New(rdb, "kwtest:version", now, testkit.Logger())
	first, err := c.Next(context.Background(), 10)
	if err != nil || first != uint64(back.UnixNano()) {
		t.Fatalf("first %d, %v: want the local clock %d", first, err, back.UnixNano())
	}
	back = back.Add(-time.Minute) // the local clock steps back
	next, _ := c.Next(context.Background(), 1)
	if next != first+10 {
		t.Errorf("after the clock stepped back: %d, want %d", next, first+10)
	}
}
