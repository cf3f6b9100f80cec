package limits

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/rediscache"
)

// uploadGate admits one account's uploads (meter records and readings, market prices,
// carbon intensities) in this process: at most per of them are read and stored at once,
// as many more wait up to wait for a turn. It also remembers the accounts whose refused
// uploads ran past their rate, until their Retry-After.
type uploadGate struct {
	per     int // 0: no limit
	wait    time.Duration
	mu      sync.Mutex
	running map[string]int // by account
	waiting map[string]int // by account
	freed   chan struct{}  // closed and replaced whenever a turn ends
	until   map[string]time.Time
}

func newUploadGate(cfg config.Limits) *uploadGate {
	return &uploadGate{per: cfg.AccountUploads, wait: cfg.UploadWait, running: map[string]int{},
		waiting: map[string]int{}, freed: make(chan struct{}), until: map[string]time.Time{}}
}

// EnterUpload takes one of the account's upload turns before the upload's body is read;
// release ends it. An account refused for its refused uploads gets their 429 at once; an
// account with every turn taken waits up to limits.upload_wait, with as many waiting as
// running at most, and then gets 429 too_many_uploads. Other accounts never wait for it.
func (l *Limits) EnterUpload(ctx context.Context, account string) (release func(), err error) {
	g := l.uploads
	g.mu.Lock()
	wait := time.Until(g.until[account])
	g.mu.Unlock()
	if wait > 0 {
		return nil, errRefusedUploads(wait)
	}
	if g.per == 0 {
		return func() {}, nil
	}
	return g.enter(ctx, account)
}

func (g *uploadGate) enter(ctx context.Context, account string) (func(), error) {
	g.mu.Lock()
	if g.running[account] >= g.per && g.waiting[account] >= g.per {
		g.mu.Unlock()
		return nil, errTooManyUploads(g.per, "as many are waiting")
	}
	g.waiting[account]++
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.drop(g.waiting, account); g.mu.Unlock() }()
	deadline := time.NewTimer(g.wait)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		if g.running[account] < g.per {
			g.running[account]++
			g.mu.Unlock()
			return func() { g.leave(account) }, nil
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-deadline.C:
			return nil, errTooManyUploads(g.per, "none ended within "+g.wait.String())
		case <-ctx.Done():
			return nil, errTooManyUploads(g.per, "the request ended while waiting")
		}
	}
}

func (g *uploadGate) leave(account string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.drop(g.running, account)
	close(g.freed)
	g.freed = make(chan struct{})
}

// drop counts one less for account in m; g.mu is held.
func (g *uploadGate) drop(m map[string]int, account string) {
	if m[account]--; m[account] <= 0 {
		delete(m, account)
	}
}

// TakeRefusedUpload charges an upload refused for its body (400, 413, 422, or a batch of
// which no record was stored) to the account, in a bucket shared by every process through
// Redis (limits.refused_uploads_per_minute, burst limits.refused_upload_burst). Past it,
// this process refuses the account's uploads before reading their bodies until
// Retry-After. Redis down: not charged (fail open), as every rate.
func (l *Limits) TakeRefusedUpload(ctx context.Context, account, route string) {
	if l.cfg.RefusedUploadsPerMinute == 0 {
		return
	}
	r := rediscache.Rate{Rate: l.cfg.RefusedUploadsPerMinute, Burst: max(l.cfg.RefusedUploadBurst, 1), Period: time.Minute}
	ok, retry, err := l.rates.AllowN(ctx, "uploadrefused:"+account, r, 1)
	if err != nil {
		l.failed.Inc()
		l.log.Debug("refused upload rate not checked: redis unavailable", "account", account, "err", err)
		return
	}
	if ok {
		return
	}
	g := l.uploads
	g.mu.Lock()
	if len(g.until) > 100_000 {
		clear(g.until)
	}
	g.until[account] = time.Now().Add(retry)
	g.mu.Unlock()
	l.Count(account, route, "refused_uploads")
}

func errTooManyUploads(per int, why string) error {
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "too_many_uploads", RetryAfter: time.Second,
		Message: fmt.Sprintf("the account has %d uploads running in this process (%s); retry once one has been answered", per, why)}
}

func errRefusedUploads(retry time.Duration) error {
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "too_many_refused_uploads", RetryAfter: retry,
		Message: fmt.Sprintf("too many of the account's uploads were refused (invalid, too large, or no record stored); retry after %s", retry.Round(time.Second))}
}
