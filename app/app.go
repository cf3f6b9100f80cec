// Package app wires kwhouse's parts into a running service: it opens the stores, applies
// the schema and builds the HTTP API. The binary and the integration tests both start the
// service through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/connect"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/httpapi"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/limits"
	"github.com/kwhouse/kwhouse/onboard"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/rediscache"
	"github.com/kwhouse/kwhouse/schedules"
	"github.com/kwhouse/kwhouse/schema"
	"github.com/kwhouse/kwhouse/tariffs"
	"github.com/kwhouse/kwhouse/versions"
	"github.com/kwhouse/kwhouse/webhooks"
	"github.com/kwhouse/kwhouse/writemarks"
)

// App is the assembled service.
type App struct {
	Config   *config.Config
	Log      *slog.Logger
	DB       *chstore.DB
	Cache    *rediscache.Cache
	Accounts *accounts.Store
	Catalog  *catalog.Catalog
	Ingest   *ingest.Service
	Tariffs  *tariffs.Service
	Carbon   *carbon.Store
	Limits   *limits.Limits
	Pricer   *query.Pricer
	// BucketPricer prices stale buckets in the background while Serve runs (nil: off).
	BucketPricer *query.BucketPricer
	Writer       *ingest.Writer
	// Marks are the write marks every writer of the deployment makes while the answer
	// cache is on (nil: off); a tool that writes what a fleet answer reads marks too.
	Marks    *writemarks.Marks
	Webhooks *webhooks.Service
	// Dispatcher delivers webhooks; nil when webhooks.dispatch is off.
	Dispatcher *webhooks.Dispatcher
	API        *httpapi.Server
	Now        func() time.Time

	server   *http.Server
	listener net.Listener
	stop     context.CancelFunc
}

// Options adjust how the app is built; the zero value is what the binary uses.
type Options struct {
	Now         func() time.Time // the clock; time.Now when nil
	RedisPrefix string           // key prefix in Redis; redis.key_prefix when empty
	// DB, when set, is used instead of opening cfg.ClickHouse (embedded mode and the
	// conformance suite pass a chDB-backed one); the app closes it.
	DB *chstore.DB
	// NoCache serves every document read from ClickHouse (Redis is still pinged).
	NoCache bool
	// Webhooks replaces the dispatcher's resolver and dialer (tests; Now defaults to the
	// app's clock).
	Webhooks webhooks.DispatcherOptions
}

// DefaultSeriesBytes is ingest.max_series_bytes of a config that leaves it 0.
const DefaultSeriesBytes = 32 << 20

// New opens ClickHouse (creating the database), applies migrations, connects Redis and
// builds the API.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger, opt Options) (*App, error) {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	prefix := opt.RedisPrefix
	if prefix == "" {
		prefix = redisPrefix(cfg.Redis)
	}
	a := &App{Config: cfg, Log: log, Now: now}
	a.Cache = rediscache.New(cfg.Redis, prefix, log)
	if err := a.Cache.Ping(ctx); err != nil {
		log.Warn("redis unavailable at start; serving from ClickHouse until it answers", "addr", cfg.Redis.Addr, "err", err)
	}
	db, err := openMigrated(ctx, cfg, opt, a.Cache, log)
	if err != nil {
		a.Cache.Close()
		return nil, err
	}
	a.DB = db
	a.Accounts = accounts.NewStore(db, now)
	a.Accounts.RememberUnknownFor(cfg.Auth.UnknownKeyTTL)
	var cache docstore.Cache = a.Cache
	if opt.NoCache {
		cache = docstore.NoCache{}
	}
	docs := docstore.New(db, cache, now)
	clock := versionClock(a.Cache, now, log)
	docs.SetVersionClock(clock)
	a.Marks = writeMarks(cfg, a.Cache)
	docs.SetWriteMarks(a.Marks)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.Limits = limits.New(cfg.Limits, cfg.Metrics, a.Cache, log, reg)
	ic := cfg.Ingest
	a.Writer = ingest.NewWriter(db, writerConfig(ic, a.Marks))
	a.Ingest = ingest.NewService(a.Writer, docs, ingest.Config{MaxRecordsPerRequest: ic.MaxRecordsPerRequest,
		MaxFailedRecords: ic.MaxFailedRecords, MaxLineBytes: ic.MaxLineBytes, Charge: a.Limits.TakeRecords, Versions: clock}, now)
	a.Catalog = catalog.New(docs, a.Ingest)
	a.Tariffs = tariffs.NewService(db, docs, a.Catalog, now)
	a.Tariffs.SetEpochCache(a.Cache)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kwhouse_tariff_years_expanded_total",
		Help: "Calendar years of tariff rate periods computed from schedules and stored (once per scope, tariff and year)."},
		func() float64 { return float64(a.Tariffs.ExpandedYears()) }))
	a.Catalog.SetTariffView(a.Tariffs)
	a.Carbon = carbon.NewStore(db, docs, now)
	a.Pricer = query.NewPricer(db, a.Tariffs, a.Catalog, a.Carbon, now)
	a.Pricer.SetMaxRawItems(cfg.Costs.MaxRawItems)
	a.Pricer.UsePricedBuckets(cfg.Costs.PricedBuckets, clock)
	if cfg.Costs.AnswerCacheOn() {
		a.Pricer.UseAnswerCache(a.Cache, a.Marks, cfg.Costs.AnswerCacheTTL, cfg.Costs.AnswerCacheMaxBytes)
	}
	if cfg.Costs.PricedBuckets && cfg.Costs.Pricer {
		a.BucketPricer = query.NewBucketPricer(a.Pricer, a.Cache, log, cfg.Costs.PricerInterval, cfg.Costs.PricerDays)
	}
	registerBucketMetrics(reg, a.Pricer, a.BucketPricer)
	a.buildWebhooks(docs, opt)
	reviser := webhooks.NewReviser(a.Pricer, a.Catalog, db, cfg.Webhooks, log)
	a.Ingest.SetRevisions(reviser)
	a.Tariffs.SetRevisions(reviser)
	a.Ingest.SetCompletions(webhooks.NewBatchEvents(docs, cfg.Webhooks.EndpointCacheTTL, log))
	a.API = httpapi.New(httpapi.Deps{
		Accounts:     a.Accounts,
		Tokens:       accounts.NewTokens(cfg.Auth.JWTSecret, cfg.Auth.TokenTTL, now),
		Catalog:      a.Catalog,
		ClickHouse:   db,
		Redis:        a.Cache,
		Log:          log,
		Registry:     reg,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes,
		Now:          now,

		Ingest:             a.Ingest,
		IngestMaxBodyBytes: ic.MaxBodyBytes,
		IngestStreamFrom:   cmp.Or(ic.StreamFrom, ingest.DefaultStreamFrom),
		IngestStreamChunk:  ic.StreamChunkBytes,
		SeriesMaxBodyBytes: cmp.Or(ic.MaxSeriesBytes, min(ic.MaxBodyBytes, DefaultSeriesBytes)),
		UploadTimeout:      ic.BodyTimeout,
		WriteTimeout:       cfg.HTTP.WriteTimeout,
		Tariffs:            a.Tariffs,
		Pricer:             a.Pricer,
		Connect:            connect.New(a.Catalog, a.Tariffs, docs, cfg.Connect.TokenTTL, now),
		Schedules: schedules.New(a.Catalog, a.Pricer, docs, a.DB, schedules.Limits{Horizon: cfg.Schedules.Horizon,
			MaxDevices: cfg.Schedules.MaxDevices}, now),
		Carbon:              a.Carbon,
		Limits:              a.Limits,
		Webhooks:            a.Webhooks,
		LocationDeleteHooks: []catalog.LocationDeleteHook{a.Tariffs.OnLocationDelete},
	})
	return a, nil
}

// buildWebhooks makes the endpoints service and, when this process dispatches, the
// dispatcher (leases in Redis).
func (a *App) buildWebhooks(docs *docstore.Store, opt Options) {
	wc := a.Config.Webhooks
	store := webhooks.NewStore(a.DB)
	a.Webhooks = webhooks.NewService(docs, store, wc.AllowPrivate)
	if wc.Dispatch {
		wopt := opt.Webhooks
		if wopt.Now == nil {
			wopt.Now = a.Now
		}
		a.Dispatcher = webhooks.NewDispatcher(store, a.Webhooks, a.Cache, wc, a.Log, wopt)
	}
}

// openMigrated opens ClickHouse (opt.DB when set) and applies the schema's pending
// migrations under the deployment's migration lock in Redis (schema.ApplyLocked).
func openMigrated(ctx context.Context, cfg *config.Config, opt Options, cache *rediscache.Cache, log *slog.Logger) (*chstore.DB, error) {
	db, err := openDB(ctx, cfg, opt)
	if err != nil {
		return nil, err
	}
	if err := schema.ApplyLocked(ctx, db, log, migrationLock{cache}); err != nil {
		db.Close()
		return nil, fmt.Errorf("apply schema: %w", err)
	}
	return db, nil
}

// migrationLock is the schema's migration lock on Redis.
type migrationLock struct{ cache *rediscache.Cache }

func (l migrationLock) Hold(ctx context.Context, key string) (func(), bool, error) {
	release, ok, err := l.cache.Hold(ctx, key)
	if errors.Is(err, rediscache.ErrLocked) {
		return nil, false, schema.ErrHeld
	}
	return release, ok, err
}

func openDB(ctx context.Context, cfg *config.Config, opt Options) (*chstore.DB, error) {
	if opt.DB != nil {
		return opt.DB, nil
	}
	db, err := chstore.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return nil, fmt.Errorf("clickhouse at %s: %w", cfg.ClickHouse.Addr, err)
	}
	return db, nil
}

// Listen binds the HTTP address (":0" picks a free port) and returns the bound address.
func (a *App) Listen() (string, error) {
	ln, err := net.Listen("tcp", a.Config.HTTP.Addr)
	if err != nil {
		return "", fmt.Errorf("listen on %s: %w", a.Config.HTTP.Addr, err)
	}
	a.listener = ln
	h := a.Config.HTTP
	a.server = &http.Server{Handler: a.API.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: h.ReadTimeout, WriteTimeout: h.WriteTimeout, IdleTimeout: h.IdleTimeout}
	return ln.Addr().String(), nil
}

// Serve serves HTTP until ctx ends, then shuts down gracefully and runs background work
// (event retention) meanwhile.
func (a *App) Serve(ctx context.Context) error {
	bg, stop := context.WithCancel(ctx)
	a.stop = stop
	go a.retainEvents(bg)
	if a.BucketPricer != nil {
		go a.BucketPricer.Run(bg)
	}
	if a.Dispatcher != nil {
		go a.Dispatcher.Run(bg)
	}
	errc := make(chan error, 1)
	go func() { errc <- a.server.Serve(a.listener) }()
	select {
	case err := <-errc:
		stop()
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	a.Log.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), a.Config.HTTP.ShutdownTimeout)
	defer cancel()
	stop()
	err := a.server.Shutdown(sctx)
	a.Writer.Close() // every accepted record is flushed before the process ends
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down http: %w", err)
	}
	return nil
}

// retainEvents deletes events past their retention once an hour.
func (a *App) retainEvents(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if err := a.Catalog.PurgeEvents(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("purge old events", "err", err)
		}
		if err := a.Webhooks.Purge(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("purge old webhook deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close releases the stores.
func (a *App) Close() error {
	if a.stop != nil {
		a.stop()
	}
	a.Writer.Close()
	return errors.Join(a.Cache.Close(), a.DB.Close())
}

// versionClock is the row-version clock of the deployment: a counter in its Redis, under
// its key prefix (docs/operations.md, "Row versions").
func versionClock(cache *rediscache.Cache, now func() time.Time, log *slog.Logger) *versions.Clock {
	return versions.New(cache.Scripter(), cache.Key("row-version"), now, log)
}

// writeMarks are the deployment's write marks, in its Redis under its key prefix, while
// the answer cache is on (docs/costs.md, "Write marks"); nil when it is off: then no write
// needs Redis.
func writeMarks(cfg *config.Config, cache *rediscache.Cache) *writemarks.Marks {
	if !cfg.Costs.AnswerCacheOn() {
		return nil
	}
	return writemarks.New(cache.Scripter(), cache.Key(""), writemarks.Hold)
}

// Loader is what `kwhouse ingest` needs: the ingest service on its own stores.
type Loader struct {
	Ingest *ingest.Service
	DB     *chstore.DB
	writer *ingest.Writer
	cache  *rediscache.Cache
}

// OpenLoader opens ClickHouse (opt.DB when set) with the schema applied and an ingest
// service that checks ids straight against ClickHouse. Redis gives only the row versions
// the servers draw from too; without it the loader's own clock does.
func OpenLoader(ctx context.Context, cfg *config.Config, log *slog.Logger, opt Options) (*Loader, error) {
	cache := rediscache.New(cfg.Redis, cmp.Or(opt.RedisPrefix, redisPrefix(cfg.Redis)), log)
	db, err := openMigrated(ctx, cfg, opt, cache, log)
	if err != nil {
		cache.Close()
		return nil, err
	}
	ic := cfg.Ingest
	marks := writeMarks(cfg, cache)
	w := ingest.NewWriter(db, writerConfig(ic, marks))
	docs := docstore.New(db, docstore.NoCache{}, time.Now)
	docs.SetWriteMarks(marks)
	svc := ingest.NewService(w, docs, ingest.Config{MaxRecordsPerRequest: ic.MaxRecordsPerRequest,
		Versions: versionClock(cache, time.Now, log)}, time.Now)
	return &Loader{Ingest: svc, DB: db, writer: w, cache: cache}, nil
}

// Close flushes and closes.
func (l *Loader) Close() error {
	l.writer.Close()
	return errors.Join(l.cache.Close(), l.DB.Close())
}

// writerConfig is the meter writer of the ingest settings (the service's and the bulk
// loader's are the same).
func writerConfig(ic config.Ingest, marks *writemarks.Marks) ingest.WriterConfig {
	return ingest.WriterConfig{MaxRows: ic.FlushRows, MaxDelay: ic.FlushInterval,
		Flushers: ic.Flushers, QueueLength: ic.QueueLength, MaxHold: ic.FlushHold, Marks: marks}
}

// Importer is what `kwhouse import` needs: the catalog and tariffs on the service's own
// stores, Redis included, since reference-id locks and pricing epochs are shared with the
// running servers.
type Importer struct {
	Import *onboard.Importer
	DB     *chstore.DB
	Cache  *rediscache.Cache
}

// OpenImporter opens ClickHouse (opt.DB when set) with the schema applied, and Redis.
func OpenImporter(ctx context.Context, cfg *config.Config, log *slog.Logger, opt Options) (*Importer, error) {
	cache := rediscache.New(cfg.Redis, cmp.Or(opt.RedisPrefix, redisPrefix(cfg.Redis)), log)
	if err := cache.Ping(ctx); err != nil {
		log.Warn("redis unavailable: imported tariffs reach running servers' cached prices only when those expire",
			"addr", cfg.Redis.Addr, "err", err)
	}
	db, err := openMigrated(ctx, cfg, opt, cache, log)
	if err != nil {
		cache.Close()
		return nil, err
	}
	docs := docstore.New(db, cache, time.Now)
	docs.SetVersionClock(versionClock(cache, time.Now, log))
	docs.SetWriteMarks(writeMarks(cfg, cache))
	cat := catalog.New(docs, nil)
	trf := tariffs.NewService(db, docs, cat, time.Now)
	cat.SetTariffView(trf)
	return &Importer{Import: &onboard.Importer{Catalog: cat, Tariffs: trf}, DB: db, Cache: cache}, nil
}

// Close releases the stores.
func (im *Importer) Close() error { return errors.Join(im.Cache.Close(), im.DB.Close()) }

func redisPrefix(rc config.Redis) string {
	if rc.KeyPrefix == "" {
		return "kwh:"
	}
	return rc.KeyPrefix
}

// Migrate applies db's pending migrations for an operator's command (`kwhouse migrate`,
// `kwhouse accounts`): under the deployment's migration lock, so that it waits for a
// server migrating at the same moment; with Redis down it migrates without the lock, as
// asked, and says so.
func Migrate(ctx context.Context, cfg *config.Config, db *chstore.DB, log *slog.Logger) error {
	cache := rediscache.New(cfg.Redis, redisPrefix(cfg.Redis), log)
	defer cache.Close()
	if err := cache.Ping(ctx); err != nil {
		log.Warn("redis unavailable: migrating without the lock between processes; start no kwhouse serve until this ends", "err", err)
		return schema.Apply(ctx, db, log)
	}
	return schema.ApplyLocked(ctx, db, log, migrationLock{cache})
}
