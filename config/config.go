// Package config loads kwhouse's settings: defaults, an optional kwhouse.yaml, KWHOUSE_*
// environment variables and command-line flags, in rising order of precedence.
package config

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// Config is the whole settings tree. Every field has a default in SetDefaults.
type Config struct {
	HTTP       HTTP       `mapstructure:"http"`
	ClickHouse ClickHouse `mapstructure:"clickhouse"`
	Redis      Redis      `mapstructure:"redis"`
	Embedded   Embedded   `mapstructure:"embedded"`
	Auth       Auth       `mapstructure:"auth"`
	Ingest     Ingest     `mapstructure:"ingest"`
	Costs      Costs      `mapstructure:"costs"`
	Schedules  Schedules  `mapstructure:"schedules"`
	Connect    Connect    `mapstructure:"connect"`
	Limits     Limits     `mapstructure:"limits"`
	Metrics    Metrics    `mapstructure:"metrics"`
	Webhooks   Webhooks   `mapstructure:"webhooks"`
	Log        Log        `mapstructure:"log"`
}

// Metrics configures what GET /metrics (served without credentials) may reveal.
type Metrics struct {
	// AccountLabels adds the account id as a label of the per-account series
	// (kwhouse_requests_limited_total). Off by default: /metrics would name the tenants.
	AccountLabels bool `mapstructure:"account_labels"`
}

// Webhooks configures the push delivery of events to webhook endpoints (docs/webhooks.md).
type Webhooks struct {
	// Dispatch runs the dispatcher in this process; every process that dispatches shares
	// the work through leases in Redis.
	Dispatch bool `mapstructure:"dispatch"`
	// AllowPrivate lets live-mode endpoints reach private, loopback and link-local
	// addresses (refused by default: SSRF).
	AllowPrivate bool `mapstructure:"allow_private"`
	// RevisionAfter: a change to a local day that ended longer ago than this emits
	// cost.revised.
	RevisionAfter time.Duration `mapstructure:"revision_after"`
	// Timeout is how long an endpoint has to answer a delivery with a 2xx.
	Timeout      time.Duration `mapstructure:"timeout"`
	PollInterval time.Duration `mapstructure:"poll_interval"` // how often the outbox is read
	// Overlap: each read of the outbox goes back this far behind the newest event seen,
	// for events whose insert finished after a later one's.
	Overlap       time.Duration `mapstructure:"overlap"`
	SweepInterval time.Duration `mapstructure:"sweep_interval"` // how often stored due retries are looked for
	Batch         int           `mapstructure:"batch"`          // events read from the outbox at a time
	Concurrency   int           `mapstructure:"concurrency"`    // attempts in flight in a process
	// EndpointConcurrency bounds one endpoint's attempts in flight, so a slow or dead
	// endpoint cannot take every sender.
	EndpointConcurrency int           `mapstructure:"endpoint_concurrency"`
	EndpointCacheTTL    time.Duration `mapstructure:"endpoint_cache_ttl"` // how long a process reuses an account's endpoint list
	DisableAfter        time.Duration `mapstructure:"disable_after"`      // an endpoint failing this long is disabled
	// WriteInterval is the least time between two inserts of delivery states (new
	// deliveries and attempts' outcomes, written together): the states that come meanwhile
	// share the next insert.
	WriteInterval time.Duration `mapstructure:"write_interval"`
}

// Limits keep any one account from taking the service from the others: request and
// record rates per account and mode, shared by every process through Redis, and a
// bounded number of heavy cost queries per process. A rate of 0 is no limit.
type Limits struct {
	RequestsPerSecond int `mapstructure:"requests_per_second"` // API requests, meter pushes aside
	RequestBurst      int `mapstructure:"request_burst"`
	RecordsPerSecond  int `mapstructure:"records_per_second"` // meter records (and readings) ingested
	RecordBurst       int `mapstructure:"record_burst"`
	// Accounts override the rates above for single accounts, by account id.
	Accounts       map[string]AccountLimits `mapstructure:"accounts"`
	Queries        int                      `mapstructure:"queries"`         // heavy cost queries running at once in a process
	AccountQueries int                      `mapstructure:"account_queries"` // of them, one account's
	QueryQueue     int                      `mapstructure:"query_queue"`     // queries waiting for a turn; more: 503
	QueryWait      time.Duration            `mapstructure:"query_wait"`      // longest wait for a turn; then 503
	// AuthFailuresPerMinute and AuthFailureBurst bound the failed authentications with an
	// API key (unknown keys, GET /login pairs that do not match) per source address; past
	// them: 429. 0 is no limit.
	AuthFailuresPerMinute int `mapstructure:"auth_failures_per_minute"`
	AuthFailureBurst      int `mapstructure:"auth_failure_burst"`
	// AccountUploads bounds one account's uploads (meter records and readings, market
	// prices, carbon intensities) being read and stored at once in a process; as many more
	// wait up to UploadWait for a turn, beyond them: 429. 0 is no limit.
	AccountUploads int           `mapstructure:"account_uploads"`
	UploadWait     time.Duration `mapstructure:"upload_wait"`
	// RefusedUploadsPerMinute and RefusedUploadBurst bound one account's refused uploads
	// (400, 413 or 422 for the body, or a batch of which no record was stored); past them
	// its uploads are refused before their bodies are read until Retry-After (429).
	// 0 is no limit.
	RefusedUploadsPerMinute int `mapstructure:"refused_uploads_per_minute"`
	RefusedUploadBurst      int `mapstructure:"refused_upload_burst"`
}

// AccountLimits are one account's rates (0 keeps the global one).
type AccountLimits struct {
	RequestsPerSecond int `mapstructure:"requests_per_second"`
	RequestBurst      int `mapstructure:"request_burst"`
	RecordsPerSecond  int `mapstructure:"records_per_second"`
	RecordBurst       int `mapstructure:"record_burst"`
}

// HTTP configures the API server.
type HTTP struct {
	Addr            string        `mapstructure:"addr"`
	MaxBodyBytes    int64         `mapstructure:"max_body_bytes"`
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// ReadTimeout bounds reading a whole request, headers and body; WriteTimeout the time
	// from the end of its headers to the end of its answer (a client that stops reading
	// an answer loses its connection, and a cost query its turn, then); IdleTimeout a
	// kept-alive connection's wait for its next request. 0 is no limit. Meter, price and
	// intensity uploads have ingest.body_timeout instead of the first two.
	ReadTimeout  time.Duration `mapstructure:"read_timeout"`
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	IdleTimeout  time.Duration `mapstructure:"idle_timeout"`
	// PprofAddr, when set, serves net/http/pprof there (keep it on loopback).
	PprofAddr string `mapstructure:"pprof_addr"`
}

// ClickHouse configures the system of record.
type ClickHouse struct {
	// Addr is one node, or a comma-separated list of nodes used in turn when one does
	// not answer (cluster mode: any nodes of the cluster).
	Addr     string `mapstructure:"addr"`
	Database string `mapstructure:"database"`
	Username string `mapstructure:"username"`
	Password string `mapstructure:"password"`
	// Cluster, when set, makes migrations create the cluster form of the schema
	// (ON CLUSTER, Replicated engines, Distributed records table).
	Cluster          string        `mapstructure:"cluster"`
	DialTimeout      time.Duration `mapstructure:"dial_timeout"`
	MaxOpenConns     int           `mapstructure:"max_open_conns"`
	MaxExecutionTime time.Duration `mapstructure:"max_execution_time"`
	MaxMemoryUsage   int64         `mapstructure:"max_memory_usage"`
	// LogQueries asks ClickHouse to log every query kwhouse sends in system.query_log
	// (time, rows and memory per query: for benchmarks and investigations).
	LogQueries bool `mapstructure:"log_queries"`
	// Compression of the native protocol: lz4 (across a network), none (loopback, where
	// compressing costs both sides CPU and saves nothing) or auto (the default: none for
	// a loopback address, lz4 otherwise).
	Compression string `mapstructure:"compression"`
	// InsertQuorum (cluster mode) is how many replicas must have a metadata insert before
	// it is acknowledged; reads then wait for their replica to have it. 0 turns both off.
	InsertQuorum int `mapstructure:"insert_quorum"`
	// QuorumWait bounds a quorum insert (and its retries while another is in flight) and
	// a read's wait for its replica to catch up; past it the request is a 503.
	QuorumWait time.Duration `mapstructure:"quorum_wait"`
}

// Addrs returns the nodes of Addr in order.
func (c ClickHouse) Addrs() []string {
	var out []string
	for _, a := range strings.Split(c.Addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// WireCompression resolves Compression to what the connection uses: "lz4" or "none".
func (c ClickHouse) WireCompression() string {
	if c.Compression == "lz4" || c.Compression == "none" {
		return c.Compression
	}
	for _, addr := range c.Addrs() {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "lz4"
		}
	}
	return "none"
}

// Embedded selects embedded mode: ClickHouse (chDB) and Redis's roles inside the
// process, all data in Dir, which one process at a time may use. Empty (the default):
// server mode, on clickhouse.addr and redis.addr (docs/operations.md, "Embedded mode").
type Embedded struct {
	Dir string `mapstructure:"dir"`
}

// Redis configures the cache and coordination store.
type Redis struct {
	Addr     string        `mapstructure:"addr"`
	Password string        `mapstructure:"password"`
	DB       int           `mapstructure:"db"`
	Timeout  time.Duration `mapstructure:"timeout"`
	CacheTTL time.Duration `mapstructure:"cache_ttl"`
	// KeyPrefix starts every key kwhouse writes: the processes of one deployment (servers,
	// kwhouse import) share it; deployments sharing a Redis must not.
	KeyPrefix string `mapstructure:"key_prefix"`
}

// Auth configures bearer tokens.
type Auth struct {
	JWTSecret string        `mapstructure:"jwt_secret"`
	TokenTTL  time.Duration `mapstructure:"token_ttl"`
	// UnknownKeyTTL is how long a process remembers that an API key is unknown, so that
	// repeating it does not query ClickHouse again; 0 remembers nothing.
	UnknownKeyTTL time.Duration `mapstructure:"unknown_key_ttl"`
}

// Ingest configures the meter record write path.
type Ingest struct {
	MaxRecordsPerRequest int           `mapstructure:"max_records_per_request"`
	MaxBodyBytes         int64         `mapstructure:"max_body_bytes"`
	FlushRows            int           `mapstructure:"flush_rows"`
	FlushInterval        time.Duration `mapstructure:"flush_interval"`
	Flushers             int           `mapstructure:"flushers"`
	FlushHold            time.Duration `mapstructure:"flush_hold"`
	QueueLength          int           `mapstructure:"queue_length"`
	// StreamFrom: an NDJSON body larger than this (or of unknown length) is stored as it
	// arrives, StreamChunkBytes at a time, instead of being read whole (no size limit).
	StreamFrom       int64 `mapstructure:"stream_from"`
	StreamChunkBytes int   `mapstructure:"stream_chunk_bytes"`
	// MaxSeriesBytes bounds a body of market prices, carbon intensities or register
	// readings, counted after gzip as it is read.
	MaxSeriesBytes int64 `mapstructure:"max_series_bytes"`
	// BodyTimeout is how long an upload (meter records and readings, prices,
	// intensities) may take from its headers to its answer.
	BodyTimeout time.Duration `mapstructure:"body_timeout"`
	// MaxFailedRecords is how many failed records a batch lists (the first by record
	// number); failed_records_count counts them all.
	MaxFailedRecords int `mapstructure:"max_failed_records"`
	// MaxLineBytes bounds one NDJSON line.
	MaxLineBytes int `mapstructure:"max_line_bytes"`
}

// Costs configures cost queries.
type Costs struct {
	// PricedBuckets keeps priced fleet days in ClickHouse and serves them while their
	// records and prices are unchanged (docs/costs.md, "Priced buckets"); false prices
	// every fleet answer afresh.
	PricedBuckets bool `mapstructure:"priced_buckets"`
	// Pricer runs the background bucket pricer in `kwhouse serve`: every PricerInterval it
	// prices the stale buckets of the last PricerDays days of every scope with readings
	// there, one process per scope at a time (docs/costs.md, "Background pricer").
	Pricer         bool          `mapstructure:"pricer"`
	PricerInterval time.Duration `mapstructure:"pricer_interval"`
	PricerDays     int           `mapstructure:"pricer_days"`
	// MaxRawItems bounds the records of one unaggregated POST /costs/interval answer (and
	// of a POST /costs/session answer): more is refused (400) and the caller narrows the
	// window or aggregates.
	MaxRawItems int `mapstructure:"max_raw_items"`
	// AnswerCache serves a fleet answer asked again, by any process, from Redis while the
	// state token it was computed under is unchanged (docs/costs.md, "Answer cache"):
	// "on", "off" (also ""), or "auto", the default: on, on one server and on a cluster.
	// AnswerCacheTTL and AnswerCacheMaxBytes bound what one answer keeps there.
	AnswerCache         string        `mapstructure:"answer_cache"`
	AnswerCacheTTL      time.Duration `mapstructure:"answer_cache_ttl"`
	AnswerCacheMaxBytes int           `mapstructure:"answer_cache_max_bytes"`
}

// AnswerCacheOn reports whether the fleet answer cache is on.
func (c Costs) AnswerCacheOn() bool {
	return c.AnswerCache == "on" || c.AnswerCache == "auto"
}

// Schedules bounds POST /schedules (docs/schedules.md).
type Schedules struct {
	// Horizon: a device's window may end at most this long after now (at most 90 days,
	// the longest price timeline).
	Horizon    time.Duration `mapstructure:"horizon"`
	MaxDevices int           `mapstructure:"max_devices"` // devices in one request
}

// Connect configures the connect sessions (docs/connect.md).
type Connect struct {
	TokenTTL time.Duration `mapstructure:"token_ttl"` // how long a connect token can be completed and exchanged
}

// Log configures structured logging.
type Log struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// SetDefaults registers every default on v; it is the one place defaults live.
func SetDefaults(v *viper.Viper) {
	v.SetDefault("http.addr", ":8080")
	v.SetDefault("http.max_body_bytes", 1<<20)
	v.SetDefault("http.shutdown_timeout", 15*time.Second)
	v.SetDefault("http.read_timeout", 30*time.Second)
	v.SetDefault("http.write_timeout", 60*time.Second)
	v.SetDefault("http.idle_timeout", 2*time.Minute)
	v.SetDefault("http.pprof_addr", "")
	v.SetDefault("clickhouse.addr", "127.0.0.1:9000")
	v.SetDefault("clickhouse.database", "kwhouse")
	v.SetDefault("clickhouse.username", "default")
	v.SetDefault("clickhouse.password", "")
	v.SetDefault("clickhouse.cluster", "")
	v.SetDefault("clickhouse.dial_timeout", 2*time.Second)
	v.SetDefault("clickhouse.max_open_conns", 32)
	v.SetDefault("clickhouse.max_execution_time", 30*time.Second)
	v.SetDefault("clickhouse.max_memory_usage", int64(4)<<30)
	v.SetDefault("clickhouse.log_queries", false)
	v.SetDefault("clickhouse.compression", "auto")
	v.SetDefault("clickhouse.insert_quorum", 2)
	v.SetDefault("clickhouse.quorum_wait", 5*time.Second)
	v.SetDefault("embedded.dir", "")
	v.SetDefault("redis.addr", "127.0.0.1:6379")
	v.SetDefault("redis.password", "")
	v.SetDefault("redis.db", 0)
	v.SetDefault("redis.timeout", 200*time.Millisecond)
	v.SetDefault("redis.cache_ttl", 10*time.Minute)
	v.SetDefault("redis.key_prefix", "kwh:")
	v.SetDefault("auth.jwt_secret", "")
	v.SetDefault("auth.token_ttl", time.Hour)
	v.SetDefault("costs.max_raw_items", 10_000)
	v.SetDefault("schedules.horizon", 7*24*time.Hour)
	v.SetDefault("schedules.max_devices", 100)
	v.SetDefault("connect.token_ttl", time.Hour)
	v.SetDefault("costs.priced_buckets", true)
	v.SetDefault("costs.pricer", true)
	v.SetDefault("costs.pricer_interval", 30*time.Second)
	v.SetDefault("costs.pricer_days", 35)
	v.SetDefault("costs.answer_cache", "auto")
	v.SetDefault("costs.answer_cache_ttl", 10*time.Minute)
	v.SetDefault("costs.answer_cache_max_bytes", 16<<20)
	v.SetDefault("auth.unknown_key_ttl", 30*time.Second)
	v.SetDefault("ingest.max_records_per_request", 10000)
	v.SetDefault("ingest.max_body_bytes", int64(256)<<20)
	v.SetDefault("ingest.flush_rows", 100000)
	v.SetDefault("ingest.flush_interval", 5*time.Millisecond)
	v.SetDefault("ingest.flushers", 1)
	v.SetDefault("ingest.flush_hold", 20*time.Millisecond)
	v.SetDefault("ingest.queue_length", 64)
	v.SetDefault("ingest.stream_from", int64(16)<<20)
	v.SetDefault("ingest.stream_chunk_bytes", 8<<20)
	v.SetDefault("ingest.max_series_bytes", int64(32)<<20)
	v.SetDefault("ingest.body_timeout", 10*time.Minute)
	v.SetDefault("ingest.max_failed_records", 1000)
	v.SetDefault("ingest.max_line_bytes", 64<<10)
	// Generous: a fleet's daily upload and the project's benchmarks never meet them.
	v.SetDefault("limits.requests_per_second", 10000)
	v.SetDefault("limits.request_burst", 20000)
	v.SetDefault("limits.records_per_second", 2000000)
	v.SetDefault("limits.record_burst", 8000000)
	// As many cost queries as cores, one account half of them: ingest keeps its share of
	// the machine (make bench-load measures it).
	v.SetDefault("limits.queries", runtime.NumCPU())
	v.SetDefault("limits.account_queries", max(1, runtime.NumCPU()/2))
	v.SetDefault("limits.query_queue", 32)
	v.SetDefault("limits.query_wait", 5*time.Second)
	// A person mistyping a key never meets these; a script guessing keys is held to one
	// ClickHouse lookup every two seconds per address.
	v.SetDefault("limits.auth_failures_per_minute", 30)
	v.SetDefault("limits.auth_failure_burst", 30)
	// A fleet's uploads never wait for these (make bench-ingest sends 16 at once from one
	// account); an account whose uploads keep being refused is held to one every two
	// seconds, so its refused bodies cannot take the cores from the others (make bench-load).
	v.SetDefault("limits.account_uploads", 16)
	v.SetDefault("limits.upload_wait", 5*time.Second)
	v.SetDefault("limits.refused_uploads_per_minute", 30)
	v.SetDefault("limits.refused_upload_burst", 30)
	v.SetDefault("metrics.account_labels", false)
	v.SetDefault("webhooks.dispatch", true)
	v.SetDefault("webhooks.allow_private", false)
	v.SetDefault("webhooks.revision_after", 24*time.Hour)
	v.SetDefault("webhooks.timeout", 15*time.Second)
	v.SetDefault("webhooks.poll_interval", 200*time.Millisecond)
	v.SetDefault("webhooks.overlap", 5*time.Second)
	v.SetDefault("webhooks.sweep_interval", time.Minute)
	v.SetDefault("webhooks.batch", 5000)
	v.SetDefault("webhooks.concurrency", 64)
	v.SetDefault("webhooks.endpoint_concurrency", 16)
	v.SetDefault("webhooks.endpoint_cache_ttl", 5*time.Second)
	v.SetDefault("webhooks.disable_after", 5*24*time.Hour)
	v.SetDefault("webhooks.write_interval", 200*time.Millisecond)
	v.SetDefault("log.level", "info")
	v.SetDefault("log.format", "json")
}

// Defaults returns the settings of SetDefaults, for code that builds a Config without
// viper (tests, benchmarks).
func Defaults() Config {
	v := viper.New()
	SetDefaults(v)
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		panic("config: defaults do not decode: " + err.Error()) // a programming error
	}
	return c
}

// New returns a viper instance with defaults, the KWHOUSE_ environment prefix and
// kwhouse.yaml (current directory or /etc/kwhouse) as an optional file.
func New() *viper.Viper {
	v := viper.New()
	SetDefaults(v)
	v.SetEnvPrefix("KWHOUSE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	v.SetConfigType("yaml")
	return v
}

// DefaultFiles are where a config file is looked for when none is named, first found
// wins. Only these names: viper's own search would also take a file named just
// "kwhouse" — the binary itself, when it was built into the current directory.
var DefaultFiles = []string{"kwhouse.yaml", "kwhouse.yml", "/etc/kwhouse/kwhouse.yaml", "/etc/kwhouse/kwhouse.yml"}

// Load reads the optional config file (or the one named by file) and decodes v into a
// validated Config.
func Load(v *viper.Viper, file string) (*Config, error) {
	return load(v, file, (*Config).Validate)
}

// LoadTool is Load for a command that serves no HTTP: see Config.ValidateTool.
func LoadTool(v *viper.Viper, file string) (*Config, error) {
	return load(v, file, (*Config).ValidateTool)
}

// load reads the optional config file (or the one named by file) into a Config that
// validate accepts.
func load(v *viper.Viper, file string, validate func(*Config) error) (*Config, error) {
	if file == "" {
		for _, f := range DefaultFiles {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				file = f
				break
			}
		}
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read config %s: %w", file, err)
		}
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	if err := validate(&c); err != nil {
		return nil, err
	}
	return &c, nil
}
