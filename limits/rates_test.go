package limits

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/rediscache"
)

// fakeRates answers every check with ok, or with err, recording what was asked.
type fakeRates struct {
	ok    bool
	err   error
	asked []rediscache.Rate
	keys  []string
}

func (f *fakeRates) AllowN(_ context.Context, key string, r rediscache.Rate, _ int) (bool, time.Duration, error) {
	f.asked, f.keys = append(f.asked, r), append(f.keys, key)
	return f.ok, 1500 * time.Millisecond, f.err
}

func newTestLimits(cfg config.Limits, r RateStore) *Limits {
	cfg.Queries, cfg.AccountQueries = 1, 1
	return New(cfg, config.Metrics{}, r, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
}

// An account's override replaces the global rate; other accounts keep the global one; a
// rate of 0 checks nothing.
func TestAccountOverridesAndUnlimited(t *testing.T) {
	r := &fakeRates{ok: true}
	l := newTestLimits(config.Limits{RequestsPerSecond: 100, RequestBurst: 200, RecordsPerSecond: 0,
		Accounts: map[string]config.AccountLimits{"acc_big": {RequestsPerSecond: 5, RequestBurst: 10}}}, r)
	ctx := context.Background()
	_ = l.TakeRequest(ctx, kwhouse.Scope{AccountID: "acc_big"})
	_ = l.TakeRequest(ctx, kwhouse.Scope{AccountID: "acc_small", LiveMode: true})
	_ = l.TakeRecords(ctx, kwhouse.Scope{AccountID: "acc_big"}, 500)
	if len(r.asked) != 2 {
		t.Fatalf("%d checks, want 2 (records are unlimited): %v", len(r.asked), r.asked)
	}
	if r.asked[0].Rate != 5 || r.asked[0].Burst != 10 || r.asked[1].Rate != 100 || r.asked[1].Burst != 200 {
		t.Errorf("rates %+v, want the override 5/10 then the global 100/200", r.asked)
	}
	if r.keys[0] == r.keys[1] || r.keys[1] != "rate:requests:acc_small:true" {
		t.Errorf("keys %v: want one bucket per account and mode", r.keys)
	}
}

func TestSpentRateIs429WithRetryAfterAndRedisDownLetsThrough(t *testing.T) {
	ctx, scope := context.Background(), kwhouse.Scope{AccountID: "acc_a"}
	l := newTestLimits(config.Limits{RecordsPerSecond: 10, RecordBurst: 20}, &fakeRates{ok: false})
	err := l.TakeRecords(ctx, scope, 5)
	if e := kwhouse.AsError(err); e == nil || e.Kind != kwhouse.KindRateLimited || e.RetryAfter != 1500*time.Millisecond {
		t.Errorf("spent: %v, want 429 with the limiter's retry-after", err)
	}
	if e := kwhouse.AsError(l.TakeRecords(ctx, scope, 50)); e == nil || e.Kind != kwhouse.KindTooLarge {
		t.Errorf("more than the burst in one push: %v, want 413", e)
	}
	down := newTestLimits(config.Limits{RecordsPerSecond: 10, RecordBurst: 20}, &fakeRates{err: errors.New("dial tcp: refused")})
	if err := down.TakeRecords(ctx, scope, 5); err != nil {
		t.Errorf("Redis down: %v, want the push let through", err)
	}
}
