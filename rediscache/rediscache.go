// Package rediscache is kwhouse's Redis: a cache of documents, a lock and rate limits shared
// by all kwhouse processes. Redis holds nothing that is not also in ClickHouse, so every failure
// is logged and treated as a miss; after a failure Redis is skipped for a short while so
// that a dead Redis does not add its timeout to every request.
package rediscache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/kwhouse/kwhouse/config"
)

// ErrLocked is returned by Lock when another holder has the lock.
var ErrLocked = errors.New("lock held elsewhere")

// Cache is a Redis-backed cache with a key prefix.
type Cache struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	ttl     time.Duration
	log     *slog.Logger
	backoff time.Duration
	downTil atomic.Int64 // unix nanos until which Redis is skipped

	// pending holds keys whose invalidation failed while Redis was unreachable; no cached
	// value is served until they are deleted, so a write during an outage is never hidden
	// by a stale entry afterwards.
	mu      sync.Mutex
	pending map[string]struct{}
}

// New returns a Cache on the Redis of cfg; keys start with prefix.
func New(cfg config.Redis, prefix string, log *slog.Logger) *Cache {
	client := redis.NewClient(&redis.Options{
		Addr:         cfg.Addr,
		Password:     cfg.Password,
		DB:           cfg.DB,
		DialTimeout:  cfg.Timeout,
		ReadTimeout:  cfg.Timeout,
		WriteTimeout: cfg.Timeout,
		PoolTimeout:  cfg.Timeout,
		MaxRetries:   -1, // a miss is cheaper than a retry: ClickHouse has the answer
	})
	return &Cache{client: client, limiter: redis_rate.NewLimiter(client), prefix: prefix, ttl: cfg.CacheTTL, log: log, backoff: 2 * time.Second,
		pending: map[string]struct{}{}}
}

// Ping reports whether Redis answers now.
func (c *Cache) Ping(ctx context.Context) error {
	err := c.client.Ping(ctx).Err()
	c.observe(err)
	return err
}

// Scripter is the client, for scripts of other packages (the row-version clock).
func (c *Cache) Scripter() redis.Scripter { return c.client }

// Key is key under the cache's prefix, as the scripts of Scripter must name it.
func (c *Cache) Key(key string) string { return c.prefix + key }

// Close closes the client.
func (c *Cache) Close() error { return c.client.Close() }

func (c *Cache) skip() bool { return time.Now().UnixNano() < c.downTil.Load() }

// observe records the outcome of a call; a failure opens the circuit for the backoff.
func (c *Cache) observe(err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		c.downTil.Store(0)
		return
	}
	if c.downTil.Load() == 0 {
		c.log.Warn("redis unavailable; serving from ClickHouse", "err", err)
	}
	c.downTil.Store(time.Now().Add(c.backoff).UnixNano())
}

// Get returns the value of key, or false on a miss or failure.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool) {
	if c.skip() || !c.flushPending(ctx) {
		return nil, false
	}
	b, err := c.client.Get(ctx, c.prefix+key).Bytes()
	c.observe(err)
	return b, err == nil
}

// Set stores value under key with the cache TTL.
func (c *Cache) Set(ctx context.Context, key string, value []byte) {
	if c.skip() {
		c.addPending(key)
		return
	}
	if err := c.client.Set(ctx, c.prefix+key, value, c.ttl).Err(); err != nil {
		c.observe(err)
		c.addPending(key)
	}
}

// SetMany stores values[i] under keys[i] with the cache TTL, pipelined.
func (c *Cache) SetMany(ctx context.Context, keys []string, values [][]byte) {
	if c.skip() {
		c.addPending(keys...)
		return
	}
	pipe := c.client.Pipeline()
	for i, k := range keys {
		pipe.Set(ctx, c.prefix+k, values[i], c.ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		c.observe(err)
		c.addPending(keys...)
	}
}

// SetFor stores value under key for ttl. For values that carry what validates them (the
// fleet answer cache): a failed store leaves no invalidation pending, only a miss.
func (c *Cache) SetFor(ctx context.Context, key string, value []byte, ttl time.Duration) {
	if c.skip() {
		return
	}
	c.observe(c.client.Set(ctx, c.prefix+key, value, ttl).Err())
}

// SetNX stores value under key unless the key exists.
func (c *Cache) SetNX(ctx context.Context, key string, value []byte) {
	if c.skip() || !c.flushPending(ctx) {
		return
	}
	c.observe(c.client.SetNX(ctx, c.prefix+key, value, c.ttl).Err())
}

// Take deletes key and reports whether it existed (DEL is atomic: of two takers, one gets
// true). False when Redis is down or invalidations are still pending.
func (c *Cache) Take(ctx context.Context, key string) bool {
	if c.skip() || !c.flushPending(ctx) {
		return false
	}
	n, err := c.client.Del(ctx, c.prefix+key).Result()
	c.observe(err)
	return err == nil && n == 1
}

// Del removes keys. A failed delete could leave a stale entry for up to the TTL; the
// failure is logged.
func (c *Cache) Del(ctx context.Context, keys ...string) {
	if len(keys) == 0 {
		return
	}
	if c.skip() {
		c.addPending(keys...)
		return
	}
	if err := c.del(ctx, keys); err != nil {
		c.addPending(keys...)
	}
}

func (c *Cache) del(ctx context.Context, keys []string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = c.prefix + k
	}
	err := c.client.Del(ctx, full...).Err()
	c.observe(err)
	return err
}

// maxPending bounds the missed invalidations kept; past it the whole prefix is flushed.
const maxPending = 100_000

func (c *Cache) addPending(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.pending[k] = struct{}{}
	}
}

// flushPending deletes the keys of missed invalidations; it reports whether none remain.
func (c *Cache) flushPending(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return true
	}
	if len(c.pending) > maxPending {
		if err := c.flushPrefix(ctx); err != nil {
			return false
		}
		clear(c.pending)
		return true
	}
	keys := make([]string, 0, len(c.pending))
	for k := range c.pending {
		keys = append(keys, k)
	}
	if err := c.del(ctx, keys); err != nil {
		return false
	}
	clear(c.pending)
	c.log.Info("redis back; dropped entries changed during the outage", "keys", len(keys))
	return true
}

// flushPrefix deletes every key under the prefix.
func (c *Cache) flushPrefix(ctx context.Context) error {
	iter := c.client.Scan(ctx, 0, c.prefix+"doc:*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := c.client.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}

var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// Lock takes key for ttl. It returns ErrLocked when another holder has it, and ok=false
// (no error) when Redis is down, so the caller can go on with its local lock alone.
func (c *Cache) Lock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	if c.skip() {
		return func() {}, false, nil
	}
	token := randomToken()
	got, err := c.client.SetNX(ctx, c.prefix+key, token, ttl).Result()
	c.observe(err)
	if err != nil {
		return func() {}, false, nil
	}
	if !got {
		return nil, false, ErrLocked
	}
	return func() {
		c.observe(unlockScript.Run(context.WithoutCancel(ctx), c.client, []string{c.prefix + key}, token).Err())
	}, true, nil
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// holdTTL is the life of a held lock's key between renewals: a holder that dies frees the
// lock this long after.
const holdTTL = 15 * time.Second

var renewScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`)

// Hold takes the lock key until release is called, renewing it while held (a migration
// may take minutes). It returns ErrLocked when another holder has it, and ok=false when
// Redis is down.
func (c *Cache) Hold(ctx context.Context, key string) (func(), bool, error) {
	token := randomToken()
	got, err := c.client.SetNX(ctx, c.prefix+key, token, holdTTL).Result()
	c.observe(err)
	if err != nil {
		return func() {}, false, nil
	}
	if !got {
		return nil, false, ErrLocked
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(holdTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := renewScript.Run(context.WithoutCancel(ctx), c.client, []string{c.prefix + key}, token, holdTTL.Milliseconds()).Err(); err != nil {
					c.log.Warn("renew lock", "key", key, "err", err)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			c.observe(unlockScript.Run(context.WithoutCancel(ctx), c.client, []string{c.prefix + key}, token).Err())
		})
	}, true, nil
}

// LockMany takes each of keys for ttl in one round trip. unlocks[i] gives back the i-th
// lock, nil when another holder has it; ok is false (and nothing is taken) when Redis is
// down.
func (c *Cache) LockMany(ctx context.Context, keys []string, ttl time.Duration) (unlocks []func(), ok bool) {
	if c.skip() || len(keys) == 0 {
		return nil, len(keys) == 0
	}
	token := randomToken()
	pipe := c.client.Pipeline()
	cmds := make([]*redis.BoolCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.SetNX(ctx, c.prefix+k, token, ttl)
	}
	_, err := pipe.Exec(ctx)
	c.observe(err)
	if err != nil {
		return nil, false
	}
	unlocks = make([]func(), len(keys))
	for i, cmd := range cmds {
		if cmd.Val() {
			key := c.prefix + keys[i]
			unlocks[i] = func() {
				c.observe(unlockScript.Run(context.WithoutCancel(ctx), c.client, []string{key}, token).Err())
			}
		}
	}
	return unlocks, true
}
