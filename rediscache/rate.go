package rediscache

import (
	"context"
	"errors"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// ErrDown is returned when Redis is being skipped after a recent failure.
var ErrDown = errors.New("redis unavailable")

// Rate is a limit of Rate events per Period with bursts up to Burst (GCRA, shared by every
// kwhouse process through Redis).
type Rate struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// AllowN takes n events from the bucket named key. It reports whether they were allowed and,
// when not, how long until they would be. A Redis failure is returned as an error: the
// caller decides (kwhouse's limits fail open).
func (c *Cache) AllowN(ctx context.Context, key string, r Rate, n int) (bool, time.Duration, error) {
	if c.skip() {
		return true, 0, ErrDown
	}
	res, err := c.limiter.AllowN(ctx, c.prefix+key, redis_rate.Limit{Rate: r.Rate, Burst: r.Burst, Period: r.Period}, n)
	c.observe(err)
	if err != nil {
		return true, 0, err
	}
	return res.Allowed >= n, res.RetryAfter, nil
}
