package app_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/schema"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// serveConfig is a service's config on the test ClickHouse database ch and Redis rc.
func serveConfig(ch config.ClickHouse, rc config.Redis) *config.Config {
	return &config.Config{
		HTTP:       config.HTTP{Addr: "127.0.0.1:0", MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second},
		ClickHouse: ch, Redis: rc,
		Auth: config.Auth{JWTSecret: "test-secret-0123456789abcdef0123456789", TokenTTL: time.Hour},
		Ingest: config.Ingest{MaxRecordsPerRequest: 10000, MaxBodyBytes: 64 << 20, FlushRows: 100000,
			FlushInterval: 5 * time.Millisecond, Flushers: 1, QueueLength: 64},
		Log:    config.Log{Level: "info", Format: "text"},
		Limits: config.Limits{Queries: 8, AccountQueries: 4, QueryQueue: 32, QueryWait: 5 * time.Second},
	}
}

// countApplied is a log handler that counts "applied migration" records.
type countApplied struct {
	slog.Handler
	n *atomic.Int64
}

func (h countApplied) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "applied migration" {
		h.n.Add(1)
	}
	return nil
}

func (h countApplied) Enabled(context.Context, slog.Level) bool { return true }

// Two processes start together on a fresh database: the migrations run once (one process
// takes the lock, the other waits and finds nothing pending) and both serve.
func TestTwoProcessesStartingTogetherMigrateOnce(t *testing.T) {
	ch, rc := testkit.ClickHouseConfig(t), testkit.RedisConfig(t)
	t.Cleanup(func() { apitest.DropDatabase(ch) })
	rc.KeyPrefix = testkit.RandomName("kwtest:") + ":"
	var applied atomic.Int64
	log := slog.New(countApplied{Handler: slog.Default().Handler(), n: &applied})
	apps := make([]*app.App, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			apps[i], errs[i] = app.New(context.Background(), serveConfig(ch, rc), log, app.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i+1, err)
		}
		defer apps[i].Close()
	}
	migs, err := schema.Migrations(schema.Form{})
	if err != nil {
		t.Fatal(err)
	}
	if int(applied.Load()) != len(migs) {
		t.Errorf("%d migrations applied by the two processes, want each of the %d once", applied.Load(), len(migs))
	}
	for i, a := range apps {
		addr, err := a.Listen()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = a.Serve(ctx); close(done) }()
		r, err := http.Get("http://" + addr + "/readyz")
		if err != nil || r.StatusCode != 200 {
			t.Errorf("process %d readyz: %v %v", i+1, r, err)
		}
		if r != nil {
			r.Body.Close()
		}
		cancel()
		<-done
	}
}

// With migrations pending and Redis (the lock between processes) down, serve refuses to
// start and names the command that migrates.
func TestServeWithPendingMigrationsAndNoLockSaysWhatToRun(t *testing.T) {
	ch, rc := testkit.ClickHouseConfig(t), testkit.RedisConfig(t)
	t.Cleanup(func() { apitest.DropDatabase(ch) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc.Addr = ln.Addr().String()
	ln.Close() // nothing listens: Redis is down
	_, err = app.New(context.Background(), serveConfig(ch, rc), testkit.Logger(), app.Options{})
	if err == nil || !strings.Contains(err.Error(), "run `kwhouse migrate`") {
		t.Fatalf("serve with Redis down and a fresh database: %v, want a refusal naming kwhouse migrate", err)
	}
}
