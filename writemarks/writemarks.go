// Package writemarks marks, in Redis, every write that can change what a fleet answer's
// state token counts (docs/costs.md, "Answer cache", "Write marks"): per scope an epoch that
// moves when a write begins and again when it ends, and the set of writes begun and not
// ended. A reader that finds a scope's epoch where it was, and no write of it pending, knows
// that no write of the scope began since, so an answer stored with that epoch is still the
// answer now, without asking ClickHouse.
package writemarks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kwhouse/kwhouse"
)

// Marks brackets writes with marks and reads them. A nil *Marks marks nothing (the answer
// cache is off): Begin and End succeed at once and Look vouches for nothing.
type Marks struct {
	rdb     redis.Scripter
	prefix  string
	hold    time.Duration
	retries []time.Duration
	downTil atomic.Int64 // unix nanos until which Look does not ask Redis
}

// Hold is how long a write may stay pending: longer than any write takes (a flush of the
// meter writer is bounded at a minute). A pending write older than that is taken as its
// writer's death: the next reader removes it and moves the epoch.
const Hold = 10 * time.Minute

// New returns the marks of the deployment's Redis rdb, under key prefix (the prefix of
// the deployment's other keys); a write stays pending at most hold (Hold).
func New(rdb redis.Scripter, prefix string, hold time.Duration) *Marks {
	return &Marks{rdb: rdb, prefix: prefix, hold: hold,
		retries: []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond}}
}

// keys are the scope's epoch and pending set.
func (m *Marks) keys(scope kwhouse.Scope) (epoch, pending string) {
	base := m.prefix + "write-marks:" + scope.AccountID + ":" + strconv.Itoa(int(scope.LiveByte()))
	return base + ":epoch", base + ":pending"
}

// bump is the Lua of an epoch's move: to Redis's time in microseconds, or one more when
// the epoch is already there. An epoch never repeats, even after its key was lost (an
// entry stored with the old value never meets it again); microseconds since 1970 are
// below 2^53, exact in Lua's doubles.
const bump = `
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function bump(k)
  local v = tonumber(redis.call('GET', k) or '0') + 1
  if now > v then v = now end
  redis.call('SET', k, string.format('%.0f', v))
end
`

// markScript begins (ARGV[1] "1") or ends ("0") write ARGV[2] in every scope of KEYS
// (epoch, pending pairs): it adds the write to (removes it from) the pending set, with
// the deadline now + ARGV[3] microseconds, and moves the epoch.
var markScript = redis.NewScript(bump + `
for i = 1, #KEYS, 2 do
  if ARGV[1] == '1' then
    redis.call('ZADD', KEYS[i+1], now + tonumber(ARGV[3]), ARGV[2])
  else
    redis.call('ZREM', KEYS[i+1], ARGV[2])
  end
  bump(KEYS[i])
end
return 1
`)

// lookScript reads KEYS[1] (an entry) and the marks of the scope of KEYS[2] (epoch) and
// KEYS[3] (pending): a pending write past its deadline is removed and moves the epoch, as
// does the first look at a scope without an epoch. It returns the entry (false when
// absent), the epoch and how many writes are pending.
var lookScript = redis.NewScript(bump + `
if redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) > 0 or redis.call('EXISTS', KEYS[2]) == 0 then
  bump(KEYS[2])
end
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('ZCARD', KEYS[3])}
`)

// Write is a write begun: End ends it.
type Write struct {
	m      *Marks
	id     string
	scopes []kwhouse.Scope
}

// Begin marks a write of scopes as begun, before it reaches ClickHouse. It retries
// briefly; when Redis cannot take the mark the write must not be made: the error is
// Unavailable (503 store_unavailable).
func (m *Marks) Begin(ctx context.Context, scopes ...kwhouse.Scope) (*Write, error) {
	if m == nil || len(scopes) == 0 {
		return nil, nil
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	w := &Write{m: m, id: hex.EncodeToString(id[:]), scopes: scopes}
	if err := w.mark(ctx, "1"); err != nil {
		return nil, kwhouse.Unavailable("Redis (write marks)", fmt.Errorf("begin a write of %d scopes: %w", len(scopes), err))
	}
	return w, nil
}

// End marks w as ended, after its ClickHouse write returned (stored or failed) and before
// it is acknowledged. When Redis cannot take the mark the write must not be acknowledged:
// the error is Unavailable, and w stays pending until its deadline.
func (w *Write) End(ctx context.Context) error {
	if w == nil {
		return nil
	}
	if err := w.mark(context.WithoutCancel(ctx), "0"); err != nil {
		return kwhouse.Unavailable("Redis (write marks)", fmt.Errorf("end a write of %d scopes: %w", len(w.scopes), err))
	}
	return nil
}

// Around runs write between Begin and End of scopes: its error first, else End's.
func (m *Marks) Around(ctx context.Context, scopes []kwhouse.Scope, write func() error) error {
	w, err := m.Begin(ctx, scopes...)
	if err != nil {
		return err
	}
	werr := write()
	return errors.Join(werr, w.End(ctx))
}

func (w *Write) mark(ctx context.Context, begin string) error {
	keys := make([]string, 0, 2*len(w.scopes))
	seen := map[kwhouse.Scope]bool{}
	for _, s := range w.scopes {
		if !seen[s] {
			seen[s] = true
			e, p := w.m.keys(s)
			keys = append(keys, e, p)
		}
	}
	var err error
	for i := 0; ; i++ {
		if err = markScript.Run(ctx, w.m.rdb, keys, begin, w.id, w.m.hold.Microseconds()).Err(); err == nil {
			return nil
		}
		if i == len(w.m.retries) || ctx.Err() != nil {
			return err
		}
		time.Sleep(w.m.retries[i])
	}
}

// Epoch is what a reader saw of a scope's marks: the epoch when no write of the scope was
// pending, else 0 (nothing can be vouched for).
type Epoch uint64

// Look reads the entry under key (under the marks' prefix, as the deployment's cache
// stores it) and scope's epoch, in one round trip. Redis failing is a miss with epoch 0.
func (m *Marks) Look(ctx context.Context, key string, scope kwhouse.Scope) ([]byte, bool, Epoch) {
	if m == nil || time.Now().UnixNano() < m.downTil.Load() {
		return nil, false, 0
	}
	e, p := m.keys(scope)
	v, err := lookScript.Run(ctx, m.rdb, []string{m.prefix + key, e, p}).Slice()
	if err != nil || len(v) != 3 {
		if ctx.Err() == nil {
			m.downTil.Store(time.Now().Add(2 * time.Second).UnixNano())
		}
		return nil, false, 0
	}
	entry, found := v[0].(string)
	var epoch Epoch
	if s, ok := v[1].(string); ok {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			epoch = Epoch(n)
		}
	}
	if pending, _ := v[2].(int64); pending > 0 {
		epoch = 0
	}
	return []byte(entry), found, epoch
}
