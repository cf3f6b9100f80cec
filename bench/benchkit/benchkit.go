// Package benchkit holds what the benchmark programs share: the service config they run
// kwhouse with, and latency percentiles.
package benchkit

import (
	"context"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/config"
)

// Serve starts a's HTTP server in the background and returns its base URL and a stop.
func Serve(ctx context.Context, a *app.App) (string, func(), error) {
	addr, err := a.Listen()
	if err != nil {
		return "", nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	go func() { _ = a.Serve(sctx) }() // ends with stop; errors would surface as failed requests
	return "http://" + addr, stop, nil
}

// Config is the configuration of an in-process kwhouse under benchmark, on database db.
func Config(db string) *config.Config {
	defaults := config.Defaults().Costs // the answer cache's settings as the service's
	return &config.Config{
		HTTP: config.HTTP{Addr: "127.0.0.1:0", MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second},
		ClickHouse: config.ClickHouse{Addr: envOr("KWHOUSE_CLICKHOUSE_ADDR", "127.0.0.1:9000"), Database: db, Username: "default",
			DialTimeout: 5 * time.Second, MaxOpenConns: 32, MaxExecutionTime: 5 * time.Minute, MaxMemoryUsage: 8 << 30, Compression: "none",
			// The service's metadata quorum (KWHOUSE_CLICKHOUSE_INSERT_QUORUM=0 measures without it).
			InsertQuorum: config.New().GetInt("clickhouse.insert_quorum"), QuorumWait: config.New().GetDuration("clickhouse.quorum_wait")},
		Redis: config.Redis{Addr: envOr("KWHOUSE_REDIS_ADDR", "127.0.0.1:6379"), Timeout: 200 * time.Millisecond, CacheTTL: 10 * time.Minute},
		Auth:  config.Auth{JWTSecret: "bench-bench-bench-bench-bench-bench-bench", TokenTTL: time.Hour},
		Ingest: config.Ingest{MaxRecordsPerRequest: 10000, MaxBodyBytes: 64 << 20, FlushRows: 100000,
			FlushInterval: 5 * time.Millisecond, Flushers: 2, QueueLength: 64},
		Log: config.Log{Level: "warn", Format: "text"},
		Costs: config.Costs{PricedBuckets: true, MaxRawItems: 10_000, AnswerCache: defaults.AnswerCache,
			AnswerCacheTTL: defaults.AnswerCacheTTL, AnswerCacheMaxBytes: defaults.AnswerCacheMaxBytes},
		Schedules: config.Schedules{Horizon: 7 * 24 * time.Hour, MaxDevices: 100},
		Connect:   config.Connect{TokenTTL: time.Hour},
		// The service's defaults (and KWHOUSE_LIMITS_* from the environment): the
		// benchmarks must never meet the rates.
		Limits:   defaultLimits(),
		Webhooks: config.Defaults().Webhooks,
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// Percentile returns the p-th percentile of lat (sorting it).
func Percentile(lat []time.Duration, p int) time.Duration {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[min(len(lat)-1, len(lat)*p/100)]
}

// Millis is d in milliseconds.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// defaultLimits are config.SetDefaults' limits, with KWHOUSE_LIMITS_* applied.
func defaultLimits() config.Limits {
	var l config.Limits
	if err := config.New().UnmarshalKey("limits", &l); err != nil {
		panic(err)
	}
	return l
}

// StartFresh drops database db, starts kwhouse on it (warnings only on stderr, Redis keys
// under prefix) and serves it: the setup of a benchmark that starts from nothing. close
// stops the server and the app.
func StartFresh(ctx context.Context, db, prefix string) (a *app.App, base string, close func(), err error) {
	return start(ctx, db, prefix, true, nil)
}

// StartFreshWith is StartFresh with the config adjusted by adjust first.
func StartFreshWith(ctx context.Context, db, prefix string, adjust func(*config.Config)) (a *app.App, base string, close func(), err error) {
	return start(ctx, db, prefix, true, adjust)
}

// ServingDefaults sets c's HTTP timeouts and ingest bounds to the service's defaults (with
// KWHOUSE_* applied): what a benchmark of misbehaving clients must meet.
func ServingDefaults(c *config.Config) {
	var d config.Config
	v := config.New()
	if err := v.UnmarshalKey("http", &d.HTTP); err != nil {
		panic(err)
	}
	if err := v.UnmarshalKey("ingest", &d.Ingest); err != nil {
		panic(err)
	}
	c.HTTP.ReadTimeout, c.HTTP.WriteTimeout, c.HTTP.IdleTimeout = d.HTTP.ReadTimeout, d.HTTP.WriteTimeout, d.HTTP.IdleTimeout
	c.Ingest.MaxBodyBytes, c.Ingest.MaxSeriesBytes, c.Ingest.BodyTimeout = d.Ingest.MaxBodyBytes, d.Ingest.MaxSeriesBytes, d.Ingest.BodyTimeout
	c.Ingest.MaxFailedRecords, c.Ingest.MaxLineBytes = d.Ingest.MaxFailedRecords, d.Ingest.MaxLineBytes
}

// StartWith is Start with the config adjusted by adjust first.
func StartWith(ctx context.Context, db, prefix string, adjust func(*config.Config)) (a *app.App, base string, close func(), err error) {
	return start(ctx, db, prefix, false, adjust)
}

// Start is StartFresh on the database as it is (migrated, not dropped): for benchmarks
// that isolate each run in an account of its own, as a running service does, instead of
// deleting the last run's files first (see docs/benchmarks.md, "Onboarding").
func Start(ctx context.Context, db, prefix string) (a *app.App, base string, close func(), err error) {
	return start(ctx, db, prefix, false, nil)
}

func start(ctx context.Context, db, prefix string, fresh bool, adjust func(*config.Config)) (a *app.App, base string, close func(), err error) {
	cfg := Config(db)
	if adjust != nil {
		adjust(cfg)
	}
	cfg.ClickHouse.LogQueries = os.Getenv("KWBENCH_LOG_QUERIES") != ""
	if fresh {
		if err := DropDatabase(ctx, cfg.ClickHouse); err != nil {
			return nil, "", nil, err
		}
	}
	a, err = app.New(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		app.Options{RedisPrefix: prefix})
	if err != nil {
		return nil, "", nil, err
	}
	base, stop, err := Serve(ctx, a)
	if err != nil {
		a.Close()
		return nil, "", nil, err
	}
	return a, base, func() { stop(); a.Close() }, nil
}
