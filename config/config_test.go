package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
)

const secret = "0123456789abcdef0123456789abcdef"

func TestEnvOverridesFileOverridesDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kwhouse.yaml")
	yaml := "clickhouse:\n  database: fromfile\nredis:\n  addr: 10.0.0.1:6379\nauth:\n  jwt_secret: " + secret + "\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KWHOUSE_REDIS_ADDR", "127.0.0.1:6380")
	t.Setenv("KWHOUSE_HTTP_ADDR", "127.0.0.1:9999")
	cfg, err := config.Load(config.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClickHouse.Database != "fromfile" || cfg.Redis.Addr != "127.0.0.1:6380" || cfg.HTTP.Addr != "127.0.0.1:9999" {
		t.Errorf("got database %q redis %q http %q", cfg.ClickHouse.Database, cfg.Redis.Addr, cfg.HTTP.Addr)
	}
	if cfg.ClickHouse.Addr != "127.0.0.1:9000" || cfg.Ingest.MaxRecordsPerRequest != 10000 {
		t.Errorf("defaults lost: %+v", cfg.ClickHouse)
	}
}

func TestBadValuesFailNamingTheKey(t *testing.T) {
	for env, key := range map[string]string{
		"KWHOUSE_CLICKHOUSE_ADDR":        "clickhouse.addr",
		"KWHOUSE_CLICKHOUSE_DATABASE":    "clickhouse.database",
		"KWHOUSE_REDIS_ADDR":             "redis.addr",
		"KWHOUSE_HTTP_ADDR":              "http.addr",
		"KWHOUSE_LOG_LEVEL":              "log.level",
		"KWHOUSE_CLICKHOUSE_COMPRESSION": "clickhouse.compression",
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
			t.Setenv(env, "not valid; drop table")
			_, err := config.Load(config.New(), "")
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), env) {
				t.Fatalf("error %v, want one naming %s and %s", err, key, env)
			}
		})
	}
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", "short")
	if _, err := config.Load(config.New(), ""); err == nil || !strings.Contains(err.Error(), "auth.jwt_secret") {
		t.Fatalf("short secret: %v", err)
	}
}

func TestMissingNamedFileIsAnError(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	if _, err := config.Load(config.New(), "/nonexistent/kwhouse.yaml"); err == nil {
		t.Fatal("a config file named on the command line must exist")
	}
}

func TestAutoCompressionIsOffOnlyOnLoopback(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:9000": "none", "localhost:9000": "none", "[::1]:9000": "none",
		"10.0.0.7:9000": "lz4", "clickhouse.internal:9000": "lz4",
	} {
		if got := (config.ClickHouse{Addr: addr, Compression: "auto"}).WireCompression(); got != want {
			t.Errorf("auto for %s: %s, want %s", addr, got, want)
		}
	}
	if got := (config.ClickHouse{Addr: "127.0.0.1:9000", Compression: "lz4"}).WireCompression(); got != "lz4" {
		t.Errorf("lz4 asked for on loopback: got %s", got)
	}
}

// Commands that serve no HTTP do not ask for the serving settings; every other bad value
// still stops them.
func TestToolsDoNotAskForServingSettings(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", "")
	t.Setenv("KWHOUSE_HTTP_ADDR", "nonsense")
	if _, err := config.LoadTool(config.New(), ""); err != nil {
		t.Fatalf("a tool's config without a JWT secret and with a bad http.addr: %v", err)
	}
	if _, err := config.Load(config.New(), ""); err == nil || !strings.Contains(err.Error(), "auth.jwt_secret") {
		t.Fatalf("serve's config without a JWT secret: %v, want an error naming auth.jwt_secret", err)
	}
	t.Setenv("KWHOUSE_CLICKHOUSE_ADDR", "not an address")
	if _, err := config.LoadTool(config.New(), ""); err == nil || !strings.Contains(err.Error(), "clickhouse.addr") {
		t.Fatalf("a tool's bad clickhouse.addr: %v, want an error naming it", err)
	}
}

func TestTheFileInTheWorkingDirectoryIsKwhouseYAMLOnly(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	// A binary named kwhouse beside the config (go build ./cmd/kwhouse in the checkout).
	if err := os.WriteFile("kwhouse", []byte("\x7fELF\x02\x01\x01\x00binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	cfg, err := config.Load(config.New(), "")
	if err != nil {
		t.Fatalf("a binary named kwhouse was read as the config: %v", err)
	}
	if cfg.ClickHouse.Database != "kwhouse" {
		t.Errorf("database %q, want the default", cfg.ClickHouse.Database)
	}
	if err := os.WriteFile("kwhouse.yaml", []byte("clickhouse:\n  database: here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = config.Load(config.New(), ""); err != nil || cfg.ClickHouse.Database != "here" {
		t.Errorf("./kwhouse.yaml not read: %v, %+v", err, cfg)
	}
}

// The timeouts and request bounds load with their defaults and refuse values out of range.
func TestTimeoutsAndBodyBounds(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	c, err := config.Load(config.New(), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.ReadTimeout != 30*time.Second || c.HTTP.WriteTimeout != time.Minute || c.HTTP.IdleTimeout != 2*time.Minute ||
		c.Ingest.MaxSeriesBytes != 32<<20 || c.Ingest.BodyTimeout != 10*time.Minute || c.Ingest.MaxFailedRecords != 1000 ||
		c.Ingest.MaxLineBytes != 64<<10 {
		t.Errorf("defaults: %+v %+v", c.HTTP, c.Ingest)
	}
	for env, value := range map[string]string{
		"KWHOUSE_HTTP_WRITE_TIMEOUT":        "-1s",
		"KWHOUSE_INGEST_MAX_FAILED_RECORDS": "20000",
		"KWHOUSE_INGEST_MAX_LINE_BYTES":     "100",
		"KWHOUSE_INGEST_MAX_SERIES_BYTES":   "1073741824", // over ingest.max_body_bytes
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, value)
			key := strings.ToLower(strings.Replace(strings.TrimPrefix(env, "KWHOUSE_"), "_", ".", 1))
			if _, err := config.Load(config.New(), ""); err == nil || !strings.Contains(err.Error(), key) {
				t.Fatalf("%s=%s: %v, want an error naming %s", env, value, err, key)
			}
		})
	}
}

// The upload limits default to what docs/operations.md states, and a negative turn count
// is refused naming its key.
func TestUploadLimits(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	cfg, err := config.Load(config.New(), "")
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	if l.AccountUploads != 16 || l.UploadWait != 5*time.Second || l.RefusedUploadsPerMinute != 30 || l.RefusedUploadBurst != 30 {
		t.Errorf("upload limits %d, %s, %d, %d; want 16, 5s, 30, 30", l.AccountUploads, l.UploadWait, l.RefusedUploadsPerMinute, l.RefusedUploadBurst)
	}
	t.Setenv("KWHOUSE_LIMITS_ACCOUNT_UPLOADS", "-1")
	if _, err := config.Load(config.New(), ""); err == nil || !strings.Contains(err.Error(), "limits.account_uploads") {
		t.Fatalf("account_uploads -1: %v, want an error naming limits.account_uploads", err)
	}
}

// The fleet answer cache is on by default, on one server and on a cluster; off turns it off.
func TestAnswerCacheIsOnByDefaultAlsoOnACluster(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	for _, tc := range []struct {
		cluster, setting string
		want             bool
	}{{"", "", true}, {"kw", "", true}, {"kw", "off", false}, {"", "off", false}} {
		t.Setenv("KWHOUSE_CLICKHOUSE_CLUSTER", tc.cluster)
		t.Setenv("KWHOUSE_COSTS_ANSWER_CACHE", tc.setting)
		if tc.setting == "" {
			os.Unsetenv("KWHOUSE_COSTS_ANSWER_CACHE")
		}
		cfg, err := config.Load(config.New(), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Costs.AnswerCacheOn(); got != tc.want {
			t.Errorf("cluster %q, answer_cache %q: on %t, want %t", tc.cluster, tc.setting, got, tc.want)
		}
	}
}
