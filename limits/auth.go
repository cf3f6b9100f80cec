package limits

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/rediscache"
)

// authGate remembers, in this process, the source addresses whose failed authentications
// ran past the rate, until their Retry-After: their next attempts are refused before any
// key lookup.
type authGate struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// AuthAllowed returns the 429 of a source refused for failed authentications until a
// moment not yet reached, or nil.
func (l *Limits) AuthAllowed(source string) error {
	l.auth.mu.Lock()
	until, ok := l.auth.until[source]
	l.auth.mu.Unlock()
	if wait := time.Until(until); ok && wait > 0 {
		return errAuthFailures(wait)
	}
	return nil
}

// TakeAuthFailure charges a failed authentication (an unknown API key, a GET /login pair
// that does not match) to its source address, in a bucket shared by every process through
// Redis: past limits.auth_failures_per_minute (and its burst) it answers 429, and the
// source is refused before any lookup until Retry-After. Redis down: let through (fail
// open), as every rate is.
func (l *Limits) TakeAuthFailure(ctx context.Context, source, route string) error {
	if l.cfg.AuthFailuresPerMinute == 0 {
		return nil
	}
	r := rediscache.Rate{Rate: l.cfg.AuthFailuresPerMinute, Burst: max(l.cfg.AuthFailureBurst, 1), Period: time.Minute}
	ok, retry, err := l.rates.AllowN(ctx, "authfail:"+source, r, 1)
	if err != nil {
		l.failed.Inc()
		l.log.Debug("auth failure rate not checked: redis unavailable", "err", err)
		return nil
	}
	if ok {
		return nil
	}
	l.auth.mu.Lock()
	if len(l.auth.until) > 100_000 {
		clear(l.auth.until)
	}
	l.auth.until[source] = time.Now().Add(retry)
	l.auth.mu.Unlock()
	l.Count("", route, "auth_failures")
	return errAuthFailures(retry)
}

func errAuthFailures(retry time.Duration) error {
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "rate_limited", RetryAfter: retry,
		Message: fmt.Sprintf("too many failed authentications from this address; retry after %s", retry.Round(time.Second))}
}
