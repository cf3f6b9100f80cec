// Package versions hands out row versions from one clock shared by every kwhouse process
// (a Redis counter kept at or above Redis's own time), so that of two writes of the same
// row the one made later wins whichever process made it.
package versions

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Clock issues increasing row versions: nanoseconds since the Unix epoch, as versions
// written before it existed are (time.Now().UnixNano()), so old and new rows compare.
//
// With Redis, every process draws from one counter that never goes back and stays at or
// above Redis's TIME: a version drawn after another one returned, by any process, is
// larger. Without Redis (nil client, or Redis down) a process falls back to its own
// clock, never below the highest version it has issued or seen: monotone within the
// process only, so then two processes' order follows their clocks.
type Clock struct {
	rdb     redis.Scripter
	key     string
	now     func() time.Time
	log     *slog.Logger
	backoff time.Duration

	mu      sync.Mutex
	highest uint64       // the highest version this process issued
	offline uint64       // the highest it issued from its own clock (Redis down), 0 if none
	downTil atomic.Int64 // unix nanos until which Redis is not asked
	warned  atomic.Bool  // the fallback has been logged
}

// New returns a Clock on the Redis counter key (rdb nil: the local clock only). now is the
// local clock of the fallback.
func New(rdb redis.Scripter, key string, now func() time.Time, log *slog.Logger) *Clock {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Clock{rdb: rdb, key: key, now: now, log: log, backoff: 2 * time.Second}
}

// Local returns a Clock of now alone (tools and tests that share no Redis).
func Local(now func() time.Time) *Clock { return New(nil, "", now, nil) }

// nextScript takes max(Redis TIME, the counter, the caller's floor) at microsecond
// precision and adds n to the counter: it returns the last of n versions reserved.
// Lua numbers are doubles, exact only below 2^53: nanoseconds since 1970 are not, so the
// counter is compared by its microseconds (all but its last three digits) and moved in
// Redis's own 64-bit integers (SET, INCRBY) and returned as the string GET reads (INCRBY's
// reply reaches Lua as a double).
var nextScript = redis.NewScript(`
redis.replicate_commands()
local cur = redis.call('GET', KEYS[1])
local cur_us = -1
if cur then cur_us = tonumber(string.sub(cur, 1, -4)) or 0 end
local t = redis.call('TIME')
local hi = tonumber(t[1]) * 1000000 + tonumber(t[2])
local floor_us = tonumber(ARGV[2])
if floor_us > hi then hi = floor_us end
if hi > cur_us then redis.call('SET', KEYS[1], string.format('%.0f', hi) .. '000') end
redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])
`)

// Next reserves n consecutive versions and returns the first: each is larger than every
// version any process drew from the same counter before (every version this process drew
// when Redis is down). It fails only when ctx ends: Redis's failure is logged once and
// the local clock answers.
func (c *Clock) Next(ctx context.Context, n int) (uint64, error) {
	if n < 1 {
		n = 1
	}
	if c.rdb != nil && time.Now().UnixNano() >= c.downTil.Load() {
		first, err := c.shared(ctx, n)
		if err == nil {
			return first, nil
		}
		if ctx.Err() != nil {
			return 0, err // the caller gave up: Redis is not down for that
		}
		c.downTil.Store(time.Now().Add(c.backoff).UnixNano())
		if !c.warned.Swap(true) {
			c.log.Warn("version clock: Redis unavailable; row versions come from this process's clock until it answers (re-sends through other processes are then ordered by their clocks)", "err", err)
		}
	}
	return c.local(n), nil
}

// shared draws from the Redis counter, never below what this process issued.
func (c *Clock) shared(ctx context.Context, n int) (uint64, error) {
	c.mu.Lock()
	floorUS := uint64(0) // the counter already holds every version drawn from it
	if c.offline > 0 {
		floorUS = c.offline/1000 + 1
	}
	c.mu.Unlock()
	last, err := nextScript.Run(ctx, c.rdb, []string{c.key}, n, floorUS).Uint64()
	if err != nil {
		return 0, fmt.Errorf("version clock: %w", err)
	}
	if c.warned.Swap(false) {
		c.log.Info("version clock: Redis answers again; row versions are shared")
	}
	c.see(last)
	return last - uint64(n) + 1, nil
}

// local is the fallback: max(local clock, highest issued + 1).
func (c *Clock) local(n int) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := uint64(c.now().UnixNano())
	if first <= c.highest {
		first = c.highest + 1
	}
	c.highest = first + uint64(n) - 1
	c.offline = c.highest
	return first
}

func (c *Clock) see(last uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if last > c.highest {
		c.highest = last
	}
	if last > c.offline {
		c.offline = 0 // the counter is past every version issued offline
	}
}
