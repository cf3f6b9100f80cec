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
// uploads ran past their rate: each of their uploads pays for a refusal before its body
// is read, until one is stored.
type uploadGate struct {
	per     int // 0: no limit
	wait    time.Duration
	mu      sync.Mutex
	running map[string]int       // by account
	waiting map[string]int       // by account
	freed   chan struct{}        // closed and replaced whenever a turn ends
	suspect map[string]time.Time // accounts past their refused-upload rate → refused until
}

func newUploadGate(cfg config.Limits) *uploadGate {
	return &uploadGate{per: cfg.AccountUploads, wait: cfg.UploadWait, running: map[string]int{},
		waiting: map[string]int{}, freed: make(chan struct{}), suspect: map[string]time.Time{}}
}

// UploadTurn is an admitted upload: Done reports how it ended and ends the turn.
type UploadTurn struct {
	l       *Limits
	account string
	paid    bool // its refusal was charged before its body was read
	release func()
}

// EnterUpload admits an upload of account before its body is read; call Done when it has
// been answered. An account past its refused uploads' rate pays for a refusal first: with
// none left it gets 429 too_many_refused_uploads, held for up to a second so that a client
// that ignores Retry-After cannot spin. An account with every upload turn taken waits up
// to limits.upload_wait, with as many waiting as running at most, and then gets 429
// too_many_uploads. Other accounts never wait for it.
func (l *Limits) EnterUpload(ctx context.Context, account string) (*UploadTurn, error) {
	paid, err := l.payRefusal(ctx, account)
	if err != nil {
		hold(ctx, min(kwhouse.AsError(err).RetryAfter, time.Second))
		return nil, err
	}
	t := &UploadTurn{l: l, account: account, paid: paid, release: func() {}}
	if l.uploads.per > 0 {
		if t.release, err = l.uploads.enter(ctx, account); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Done ends the turn of an upload that was refused for its body (400, 413, 422, or a
// batch of which no record was stored), stored, or neither (another error). A refused
// upload is charged to the account (TakeRefusedUpload); a stored one ends its account's
// suspicion.
func (t *UploadTurn) Done(ctx context.Context, refused, stored bool) {
	t.release()
	switch {
	case refused && !t.paid:
		t.l.TakeRefusedUpload(ctx, t.account)
	case stored:
		g := t.l.uploads
		g.mu.Lock()
		delete(g.suspect, t.account)
		g.mu.Unlock()
	}
}

// payRefusal charges a refusal to a suspect account before its upload is read: false
// when the account is not suspect (nothing charged).
func (l *Limits) payRefusal(ctx context.Context, account string) (bool, error) {
	g := l.uploads
	g.mu.Lock()
	until, suspect := g.suspect[account]
	g.mu.Unlock()
	if !suspect {
		return false, nil
	}
	if wait := time.Until(until); wait > 0 {
		return false, errRefusedUploads(wait)
	}
	ok, retry, err := l.rates.AllowN(ctx, refusedKey(account), l.refusedRate(), 1)
	if err != nil {
		l.failed.Inc()
		l.log.Debug("refused upload rate not checked: redis unavailable", "account", account, "err", err)
		return false, nil
	}
	if !ok {
		l.markSuspect(account, retry)
		return false, errRefusedUploads(retry)
	}
	return true, nil
}

func (l *Limits) markSuspect(account string, retry time.Duration) {
	g := l.uploads
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.suspect) > 100_000 {
		clear(g.suspect)
	}
	g.suspect[account] = time.Now().Add(retry)
}

func (l *Limits) refusedRate() rediscache.Rate {
	return rediscache.Rate{Rate: l.cfg.RefusedUploadsPerMinute, Burst: max(l.cfg.RefusedUploadBurst, 1), Period: time.Minute}
}

func refusedKey(account string) string { return "uploadrefused:" + account }

// hold waits d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
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

// TakeRefusedUpload charges an upload refused for its body to the account, in a bucket
// shared by every process through Redis (limits.refused_uploads_per_minute, burst
// limits.refused_upload_burst). Past it the account is suspect in this process: each of
// its uploads pays for a refusal before its body is read (EnterUpload). Redis down: not
// charged (fail open), as every rate.
func (l *Limits) TakeRefusedUpload(ctx context.Context, account string) {
	if l.cfg.RefusedUploadsPerMinute == 0 {
		return
	}
	ok, retry, err := l.rates.AllowN(ctx, refusedKey(account), l.refusedRate(), 1)
	if err != nil {
		l.failed.Inc()
		l.log.Debug("refused upload rate not checked: redis unavailable", "account", account, "err", err)
		return
	}
	if !ok {
		l.markSuspect(account, retry)
	}
}

func errTooManyUploads(per int, why string) error {
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "too_many_uploads", RetryAfter: time.Second,
		Message: fmt.Sprintf("the account has %d uploads running in this process (%s); retry once one has been answered", per, why)}
}

func errRefusedUploads(retry time.Duration) error {
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "too_many_refused_uploads", RetryAfter: retry,
		Message: fmt.Sprintf("too many of the account's uploads were refused (invalid, too large, or no record stored); retry after %s", retry.Round(time.Second))}
}
