// Package testkit gives integration tests real backing stores: a fresh ClickHouse database
// with every migration applied and a Redis key namespace, one of each per test. Addresses
// come from KWHOUSE_TEST_CLICKHOUSE_ADDR / KWHOUSE_TEST_REDIS_ADDR (make test sets them);
// without them, and where a Docker engine runs, testcontainers starts the servers. With
// KWHOUSE_TEST_EMBEDDED=1 the stores are embedded ones instead (embedded.go).
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/schema"
)

// Logger returns a logger that discards, unless KWHOUSE_TEST_LOG=1.
func Logger() *slog.Logger {
	if os.Getenv("KWHOUSE_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// RandomName returns prefix followed by 12 random hex characters.
func RandomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// ClickHouseConfig returns the config of a new, uniquely named test database.
func ClickHouseConfig(t testing.TB) config.ClickHouse {
	t.Helper()
	return config.ClickHouse{
		Addr:             clickhouseAddr(t),
		Cluster:          os.Getenv("KWHOUSE_TEST_CLICKHOUSE_CLUSTER"), // make test-cluster sets it
		Database:         RandomName("kwtest_"),
		Username:         "default",
		DialTimeout:      2 * time.Second,
		MaxOpenConns:     16,
		MaxExecutionTime: 60 * time.Second,
		MaxMemoryUsage:   4 << 30,
		InsertQuorum:     2, // the defaults of clickhouse.insert_quorum and quorum_wait
		QuorumWait:       5 * time.Second,
	}
}

// ClickHouse opens a new database with every migration applied; it is dropped when the
// test ends (set KWHOUSE_TEST_KEEP_DB=1 to keep it for a look).
func ClickHouse(t testing.TB) *chstore.DB {
	t.Helper()
	return OpenClickHouse(t, ClickHouseConfig(t))
}

// OpenClickHouse opens and migrates the database of cfg, dropping it when the test ends.
func OpenClickHouse(t testing.TB, cfg config.ClickHouse) *chstore.DB {
	t.Helper()
	if Embedded() {
		return openEmbedded(t, cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := chstore.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open clickhouse %s: %v", cfg.Addr, err)
	}
	if err := schema.Apply(ctx, db, Logger()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		if os.Getenv("KWHOUSE_TEST_KEEP_DB") != "1" {
			_ = db.Exec(context.Background(), chstore.Tool(chstore.DropDatabaseSQL(cfg)))
		}
		db.Close()
	})
	return db
}

// RedisConfig returns the address of the test Redis.
func RedisConfig(t testing.TB) config.Redis {
	t.Helper()
	return config.Redis{Addr: redisAddr(t), Timeout: 500 * time.Millisecond, CacheTTL: time.Minute}
}

// Redis returns a client of the test Redis and a key prefix of this test's own.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	cfg := RedisConfig(t)
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr})
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis %s: %v", cfg.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c, RandomName("kwtest:") + ":"
}

var (
	containersOnce sync.Once
	containerCH    string
	containerRedis string
	containerErr   error
)

func clickhouseAddr(t testing.TB) string {
	if Embedded() {
		return embeddedAddr
	}
	if a := firstEnv("KWHOUSE_TEST_CLICKHOUSE_ADDR", "KWHOUSE_CLICKHOUSE_ADDR"); a != "" {
		return a
	}
	startContainers(t)
	return containerCH
}

func redisAddr(t testing.TB) string {
	if Embedded() {
		return embeddedRedisAddr(t)
	}
	if a := firstEnv("KWHOUSE_TEST_REDIS_ADDR", "KWHOUSE_REDIS_ADDR"); a != "" {
		return a
	}
	startContainers(t)
	return containerRedis
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
