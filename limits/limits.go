// Package limits keeps any one account from taking the service from the others: request
// and record rates per account and mode, failed authentications per source address and
// refused uploads per account, shared by every kwhouse process through Redis (429 when
// spent; Redis down: let through), a bounded number of heavy queries per process and per
// account with a short queue (503 when full), and a bounded number of one account's
// uploads per process (429 when its turns stay taken).
package limits

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/rediscache"
)

// RateStore takes events from rate buckets shared by every kwhouse process (Redis).
type RateStore interface {
	AllowN(ctx context.Context, key string, r rediscache.Rate, n int) (bool, time.Duration, error)
}

// Limits applies config.Limits.
type Limits struct {
	cfg     config.Limits
	rates   RateStore
	log     *slog.Logger
	limited *prometheus.CounterVec // by route and reason, and account when metrics.account_labels is on
	byAcct  bool
	failed  prometheus.Counter // rate checks that could not reach Redis (let through)
	queries *admission
	uploads *uploadGate
	auth    authGate
}

// New returns the limits of cfg; its series are registered on reg, labelled by account
// only when m.AccountLabels is on (GET /metrics needs no credentials).
func New(cfg config.Limits, m config.Metrics, rates RateStore, log *slog.Logger, reg *prometheus.Registry) *Limits {
	labels := []string{"route", "reason"}
	if m.AccountLabels {
		labels = append([]string{"account"}, labels...)
	}
	l := &Limits{cfg: cfg, rates: rates, log: log, queries: newAdmission(cfg), uploads: newUploadGate(cfg), byAcct: m.AccountLabels,
		auth: authGate{until: map[string]time.Time{}},
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kwhouse_requests_limited_total",
			Help: "Requests refused to protect the service: reason rate_limit, records_limit, auth_failures, uploads and refused_uploads (429), shed (503, the query queue was full).",
		}, labels),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kwhouse_rate_limit_errors_total", Help: "Rate checks that could not reach Redis; the request was let through.",
		}),
	}
	reg.MustRegister(l.limited, l.failed)
	return l
}

// rateOf returns the account's requests or records rate, the account override first.
func (l *Limits) rateOf(account string, records bool) rediscache.Rate {
	rate, burst := l.cfg.RequestsPerSecond, l.cfg.RequestBurst
	o, ok := l.cfg.Accounts[account]
	if records {
		rate, burst = l.cfg.RecordsPerSecond, l.cfg.RecordBurst
		if ok && o.RecordsPerSecond > 0 {
			rate, burst = o.RecordsPerSecond, max(o.RecordBurst, o.RecordsPerSecond)
		}
	} else if ok && o.RequestsPerSecond > 0 {
		rate, burst = o.RequestsPerSecond, max(o.RequestBurst, o.RequestsPerSecond)
	}
	return rediscache.Rate{Rate: rate, Burst: max(burst, rate), Period: time.Second}
}

// TakeRequest charges one API request to the scope.
func (l *Limits) TakeRequest(ctx context.Context, scope kwhouse.Scope) error {
	return l.take(ctx, scope, false, 1)
}

// TakeRecords charges n ingested records (or readings) to the scope; ingest calls it once
// a request's records are parsed, before anything is stored.
func (l *Limits) TakeRecords(ctx context.Context, scope kwhouse.Scope, n int) error {
	return l.take(ctx, scope, true, n)
}

// take takes n events of the scope's requests or records bucket: a *kwhouse.Error of 429
// when the rate is spent. Redis down: let through, logged and counted (fail open).
func (l *Limits) take(ctx context.Context, scope kwhouse.Scope, records bool, n int) error {
	r := l.rateOf(scope.AccountID, records)
	if r.Rate == 0 || n == 0 {
		return nil
	}
	kind := "requests"
	if records {
		kind = "records"
	}
	key := fmt.Sprintf("rate:%s:%s:%t", kind, scope.AccountID, scope.LiveMode)
	ok, retry, err := l.rates.AllowN(ctx, key, r, n)
	if err != nil {
		l.failed.Inc()
		l.log.Debug("rate limit not checked: redis unavailable", "account", scope.AccountID, "err", err)
		return nil
	}
	if ok {
		return nil
	}
	if n > r.Burst {
		return &kwhouse.Error{Kind: kwhouse.KindTooLarge, Code: "too_many_records",
			Message: fmt.Sprintf("%d records exceed the account's burst of %d: send fewer per request", n, r.Burst)}
	}
	return &kwhouse.Error{Kind: kwhouse.KindRateLimited, Code: "rate_limited", RetryAfter: retry,
		Message: fmt.Sprintf("the account's %s rate (%d a second) is spent; retry after %s", kind, r.Rate, retry.Round(time.Millisecond))}
}

// EnterQuery waits for a heavy query's turn (see admission); release ends it.
func (l *Limits) EnterQuery(ctx context.Context, account string) (release func(), err error) {
	return l.queries.enter(ctx, account)
}

// Count records a refused request of account on route: reason rate_limit, records_limit,
// auth_failures (account "": not authenticated), uploads, refused_uploads or shed.
func (l *Limits) Count(account, route, reason string) {
	if l.byAcct {
		l.limited.WithLabelValues(account, route, reason).Inc()
		return
	}
	l.limited.WithLabelValues(route, reason).Inc()
}

// admission bounds the heavy queries running at once in this process, and one account's
// share of them, with a short queue in front.
type admission struct {
	all     chan struct{}
	per     int
	queue   int
	wait    time.Duration
	mu      sync.Mutex
	waiting int
	running map[string]int // by account
	freed   chan struct{}  // closed and replaced whenever a turn ends
}

func newAdmission(cfg config.Limits) *admission {
	return &admission{all: make(chan struct{}, max(cfg.Queries, 1)), per: max(cfg.AccountQueries, 1),
		queue: cfg.QueryQueue, wait: cfg.QueryWait, running: map[string]int{}, freed: make(chan struct{})}
}

// errBusy is the 503 of a full queue or a wait that ran out.
func errBusy(why string, retry time.Duration) error {
	return &kwhouse.Error{Kind: kwhouse.KindUnavailable, Code: "too_busy", RetryAfter: retry,
		Message: "too many heavy queries (costs, rates, slots, location status) are running (" + why + "); retry shortly"}
}

// enter waits for a turn: a free process slot and fewer than the account's share running.
func (a *admission) enter(ctx context.Context, account string) (func(), error) {
	a.mu.Lock()
	if a.waiting >= a.queue && !a.free(account) {
		a.mu.Unlock()
		return nil, errBusy("the queue is full", time.Second)
	}
	a.waiting++
	a.mu.Unlock()
	defer func() { a.mu.Lock(); a.waiting--; a.mu.Unlock() }()
	deadline := time.NewTimer(a.wait)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		if a.free(account) {
			a.running[account]++
			a.all <- struct{}{} // free() saw room: does not block
			a.mu.Unlock()
			return func() { a.leave(account) }, nil
		}
		freed := a.freed
		a.mu.Unlock()
		select {
		case <-freed:
		case <-deadline.C:
			return nil, errBusy("no turn within "+a.wait.String(), time.Second)
		case <-ctx.Done():
			return nil, errBusy("the request ended while waiting", time.Second)
		}
	}
}

// free reports whether account may start a query now; a.mu is held.
func (a *admission) free(account string) bool {
	return len(a.all) < cap(a.all) && a.running[account] < a.per
}

func (a *admission) leave(account string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	<-a.all
	if a.running[account]--; a.running[account] == 0 {
		delete(a.running, account)
	}
	close(a.freed)
	a.freed = make(chan struct{})
}
