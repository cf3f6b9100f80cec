package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"time"
)

// FieldError names the config key that holds a bad value.
type FieldError struct {
	Key    string
	Reason string
}

func (e *FieldError) Error() string {
	env := "KWHOUSE_" + strings.ToUpper(strings.ReplaceAll(e.Key, ".", "_"))
	return fmt.Sprintf("config %s (%s): %s", e.Key, env, e.Reason)
}

// Validate reports every bad value, each naming its key.
func (c *Config) Validate() error { return errors.Join(c.problems()...) }

// ValidateTool is Validate for the commands that serve no HTTP (migrate, accounts, ingest):
// the http.* and auth.* keys they never use are not asked for.
func (c *Config) ValidateTool() error {
	var kept []error
	for _, err := range c.problems() {
		var fe *FieldError
		if errors.As(err, &fe) && (strings.HasPrefix(fe.Key, "http.") || strings.HasPrefix(fe.Key, "auth.")) {
			continue
		}
		kept = append(kept, err)
	}
	return errors.Join(kept...)
}

func (c *Config) problems() []error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)})
	}
	checkAddr("http.addr", c.HTTP.Addr, add)
	if c.HTTP.MaxBodyBytes < 1024 {
		add("http.max_body_bytes", "must be at least 1024, got %d", c.HTTP.MaxBodyBytes)
	}
	c.ClickHouse.validate(add)
	if c.ClickHouse.Cluster != "" && c.Embedded.Dir != "" {
		add("embedded.dir", "embedded mode runs one ClickHouse in the process; it cannot be used with clickhouse.cluster")
	}
	c.Limits.validate(add)
	c.Webhooks.validate(add)
	checkAddr("redis.addr", c.Redis.Addr, add)
	if c.Redis.Timeout <= 0 {
		add("redis.timeout", "must be positive")
	}
	c.Auth.validate(add)
	c.Ingest.validate(add)
	if c.Ingest.MaxBodyBytes < c.HTTP.MaxBodyBytes {
		add("ingest.max_body_bytes", "must be at least http.max_body_bytes")
	}
	c.checkBounds(add)
	c.Costs.validate(add)
	c.Schedules.validate(add)
	if c.Connect.TokenTTL < time.Minute || c.Connect.TokenTTL > 7*24*time.Hour {
		add("connect.token_ttl", "must be within [1m, 168h]")
	}
	c.Log.validate(add)
	return errs
}

// adder records a problem with the value of key.
type adder = func(key, format string, args ...any)

func checkAddr(key, addr string, add adder) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		add(key, "want host:port, got %q", addr)
	}
}

func (ch ClickHouse) validate(add adder) {
	if len(ch.Addrs()) == 0 {
		add("clickhouse.addr", "want host:port or a comma-separated list of them, got %q", ch.Addr)
	}
	for _, a := range ch.Addrs() {
		checkAddr("clickhouse.addr", a, add)
	}
	if !validIdentifier(ch.Database) {
		add("clickhouse.database", "must be letters, digits and underscores, got %q", ch.Database)
	}
	if ch.Cluster != "" && !validIdentifier(ch.Cluster) {
		add("clickhouse.cluster", "must be letters, digits and underscores, got %q", ch.Cluster)
	}
	if !slices.Contains([]string{"auto", "lz4", "none", ""}, ch.Compression) {
		add("clickhouse.compression", "want auto, lz4 or none, got %q", ch.Compression)
	}
	if ch.DialTimeout <= 0 {
		add("clickhouse.dial_timeout", "must be positive")
	}
	if ch.MaxOpenConns < 1 {
		add("clickhouse.max_open_conns", "must be at least 1")
	}
	if ch.InsertQuorum < 0 {
		add("clickhouse.insert_quorum", "must be 0 (off) or more")
	}
	if ch.InsertQuorum > 0 && ch.QuorumWait < 1e6 {
		add("clickhouse.quorum_wait", "must be at least 1ms while clickhouse.insert_quorum is on")
	}
	if ch.MaxExecutionTime < 1e9 {
		add("clickhouse.max_execution_time", "must be at least 1s")
	}
}

func (a Auth) validate(add adder) {
	if len(a.JWTSecret) < 32 {
		add("auth.jwt_secret", "must be at least 32 characters (make run generates one)")
	}
	if a.UnknownKeyTTL < 0 {
		add("auth.unknown_key_ttl", "must not be negative")
	}
	if a.TokenTTL < 60e9 {
		add("auth.token_ttl", "must be at least 1m")
	}
}

func (in Ingest) validate(add adder) {
	if n := in.MaxRecordsPerRequest; n < 1 || n > 1_000_000 {
		add("ingest.max_records_per_request", "must be 1..1000000, got %d", n)
	}
	if in.FlushRows < 1 {
		add("ingest.flush_rows", "must be at least 1")
	}
	if in.FlushInterval <= 0 || in.FlushInterval > 10e9 {
		add("ingest.flush_interval", "must be within (0, 10s]")
	}
	if in.FlushHold < 0 || in.FlushHold > 10e9 {
		add("ingest.flush_hold", "must be within [0, 10s]")
	}
	if in.Flushers < 1 || in.Flushers > 64 {
		add("ingest.flushers", "must be 1..64")
	}
	if in.QueueLength < 1 {
		add("ingest.queue_length", "must be at least 1")
	}
}

func (co Costs) validate(add adder) {
	if co.MaxRawItems < 1 {
		add("costs.max_raw_items", "must be at least 1")
	}
	if a := co.AnswerCache; a != "" && a != "on" && a != "off" && a != "auto" {
		add("costs.answer_cache", "must be on, off or auto")
	}
	if co.AnswerCacheOn() && co.AnswerCacheTTL < time.Second {
		add("costs.answer_cache_ttl", "must be at least 1s")
	}
	if co.Pricer && co.PricerInterval < time.Second {
		add("costs.pricer_interval", "must be at least 1s")
	}
	if co.Pricer && (co.PricerDays < 1 || co.PricerDays > 366) {
		add("costs.pricer_days", "must be 1..366")
	}
}

func (s Schedules) validate(add adder) {
	if s.Horizon <= 0 || s.Horizon > 90*24*time.Hour {
		add("schedules.horizon", "must be within (0, 2160h]")
	}
	if s.MaxDevices < 1 || s.MaxDevices > 1000 {
		add("schedules.max_devices", "must be 1..1000")
	}
}

func (l Log) validate(add adder) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.Level)); err != nil {
		add("log.level", "want debug, info, warn or error, got %q", l.Level)
	}
	if l.Format != "json" && l.Format != "text" {
		add("log.format", "want json or text, got %q", l.Format)
	}
}

func validIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func (l Limits) validate(add func(key, format string, args ...any)) {
	rates := map[string]int{"limits.requests_per_second": l.RequestsPerSecond, "limits.request_burst": l.RequestBurst,
		"limits.records_per_second": l.RecordsPerSecond, "limits.record_burst": l.RecordBurst,
		"limits.auth_failures_per_minute": l.AuthFailuresPerMinute, "limits.auth_failure_burst": l.AuthFailureBurst,
		"limits.account_uploads": l.AccountUploads, "limits.refused_uploads_per_minute": l.RefusedUploadsPerMinute,
		"limits.refused_upload_burst": l.RefusedUploadBurst}
	for id, a := range l.Accounts {
		p := "limits.accounts." + id + "."
		rates[p+"requests_per_second"], rates[p+"request_burst"] = a.RequestsPerSecond, a.RequestBurst
		rates[p+"records_per_second"], rates[p+"record_burst"] = a.RecordsPerSecond, a.RecordBurst
	}
	for key, v := range rates {
		if v < 0 {
			add(key, "must not be negative, got %d", v)
		}
	}
	if l.Queries < 1 || l.AccountQueries < 1 || l.AccountQueries > l.Queries {
		add("limits.account_queries", "want 1 ≤ account_queries ≤ queries, got %d and %d", l.AccountQueries, l.Queries)
	}
	if l.QueryQueue < 0 {
		add("limits.query_queue", "must not be negative, got %d", l.QueryQueue)
	}
	if l.QueryWait < 0 {
		add("limits.query_wait", "must not be negative")
	}
	if l.UploadWait < 0 {
		add("limits.upload_wait", "must not be negative")
	}
}

// checkBounds checks the timeouts and the request-size bounds (0 keeps a size's built-in
// default, a timeout of 0 is none).
func (c *Config) checkBounds(add func(key, format string, args ...any)) {
	for key, d := range map[string]time.Duration{"http.read_timeout": c.HTTP.ReadTimeout, "http.write_timeout": c.HTTP.WriteTimeout,
		"http.idle_timeout": c.HTTP.IdleTimeout, "ingest.body_timeout": c.Ingest.BodyTimeout} {
		if d < 0 {
			add(key, "must not be negative")
		}
	}
	if n := c.Ingest.MaxFailedRecords; n < 0 || n > 10_000 {
		add("ingest.max_failed_records", "must be 1..10000 (0: the default), got %d", n)
	}
	if n := c.Ingest.MaxLineBytes; n != 0 && (n < 1024 || n > c.Ingest.StreamChunkBytes && c.Ingest.StreamChunkBytes > 0) {
		add("ingest.max_line_bytes", "must be at least 1024 and at most ingest.stream_chunk_bytes, got %d", n)
	}
	if n := c.Ingest.MaxSeriesBytes; n < 0 || n > c.Ingest.MaxBodyBytes {
		add("ingest.max_series_bytes", "must be at most ingest.max_body_bytes (0: the default), got %d", n)
	}
}

func (w Webhooks) validate(add func(key, format string, args ...any)) {
	positive := map[string]time.Duration{"webhooks.timeout": w.Timeout, "webhooks.poll_interval": w.PollInterval,
		"webhooks.sweep_interval": w.SweepInterval, "webhooks.disable_after": w.DisableAfter}
	for _, key := range slices.Sorted(maps.Keys(positive)) {
		if positive[key] <= 0 {
			add(key, "must be positive")
		}
	}
	notNegative := map[string]time.Duration{"webhooks.overlap": w.Overlap, "webhooks.revision_after": w.RevisionAfter,
		"webhooks.endpoint_cache_ttl": w.EndpointCacheTTL, "webhooks.write_interval": w.WriteInterval}
	for _, key := range slices.Sorted(maps.Keys(notNegative)) {
		if notNegative[key] < 0 {
			add(key, "must not be negative")
		}
	}
	if w.Batch < 1 {
		add("webhooks.batch", "must be at least 1")
	}
	if w.Concurrency < 1 {
		add("webhooks.concurrency", "must be at least 1")
	}
	if w.EndpointConcurrency < 1 || w.EndpointConcurrency > w.Concurrency {
		add("webhooks.endpoint_concurrency", "must be 1..webhooks.concurrency")
	}
}
