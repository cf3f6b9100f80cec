// Package chstore opens kwhouse's ClickHouse connection, creates its database, attaches the
// settings every query needs on the server version it talks to, and classifies errors.
package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kwhouse/kwhouse/config"
)

// DB is a ClickHouse connection pool plus the settings kwhouse sends with its queries.
type DB struct {
	Conn     driver.Conn
	Database string
	Cluster  string
	version  driver.ServerVersion
	read     clickhouse.Settings
	write    clickhouse.Settings
}

// Open connects to ClickHouse, creating the configured database when it is missing.
func Open(ctx context.Context, cfg config.ClickHouse) (*DB, error) {
	if err := createDatabase(ctx, cfg); err != nil {
		return nil, err
	}
	conn, err := dial(cfg, cfg.Database)
	if err != nil {
		return nil, err
	}
	v, err := conn.ServerVersion()
	if err != nil {
		conn.Close()
		return nil, Classify(fmt.Errorf("clickhouse server version: %w", err))
	}
	db := &DB{Conn: conn, Database: cfg.Database, Cluster: cfg.Cluster, version: *v}
	db.read, db.write = settingsFor(*v, cfg)
	return db, nil
}

func dial(cfg config.ClickHouse, database string) (driver.Conn, error) {
	var compression *clickhouse.Compression
	if cfg.Compression != "none" {
		compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:             []string{cfg.Addr},
		Auth:             clickhouse.Auth{Database: database, Username: cfg.Username, Password: cfg.Password},
		DialTimeout:      cfg.DialTimeout,
		MaxOpenConns:     cfg.MaxOpenConns,
		MaxIdleConns:     cfg.MaxOpenConns,
		ConnMaxLifetime:  time.Hour,
		Compression:      compression,
		ReadTimeout:      cfg.MaxExecutionTime + 10*time.Second,
		ConnOpenStrategy: clickhouse.ConnOpenInOrder,
	})
	if err != nil {
		return nil, fmt.Errorf("open clickhouse %s: %w", cfg.Addr, err)
	}
	return conn, nil
}

// createDatabase connects to the always-present "default" database to create the
// configured one: a connection naming a missing database is refused at the handshake.
func createDatabase(ctx context.Context, cfg config.ClickHouse) error {
	conn, err := dial(cfg, "default")
	if err != nil {
		return err
	}
	defer conn.Close()
	q := "CREATE DATABASE IF NOT EXISTS " + cfg.Database // identifier from validated config
	if cfg.Cluster != "" {
		q += " ON CLUSTER " + cfg.Cluster
	}
	if err := conn.Exec(ctx, q); err != nil {
		return Classify(fmt.Errorf("create database %s: %w", cfg.Database, err))
	}
	return nil
}

// settingsFor returns the settings of serving reads and acknowledged writes. Settings the
// server does not know are left out: 18.16 rejects a query carrying an unknown setting.
func settingsFor(v driver.ServerVersion, cfg config.ClickHouse) (read, write clickhouse.Settings) {
	read = clickhouse.Settings{
		"max_execution_time": int(cfg.MaxExecutionTime.Seconds()),
		"max_memory_usage":   int(cfg.MaxMemoryUsage),
		// JOINs are written with explicit ALL/ANY strictness; this keeps any missing one an error
		// on old servers and the same meaning on new ones.
		"join_use_nulls": 0,
	}
	write = clickhouse.Settings{
		"max_execution_time": int(cfg.MaxExecutionTime.Seconds()),
		"max_memory_usage":   int(cfg.MaxMemoryUsage),
	}
	if AtLeast(v, 21, 11) {
		// Current releases may default async inserts on; an acknowledged write must be stored.
		write["async_insert"] = 0
	}
	return read, write
}

// AtLeast reports whether v is major.minor or newer.
func AtLeast(v driver.ServerVersion, major, minor uint64) bool {
	return v.Version.Major > major || (v.Version.Major == major && v.Version.Minor >= minor)
}

// Version returns the server version seen at connect.
func (db *DB) Version() driver.ServerVersion { return db.version }

// ReadContext returns ctx carrying the resource caps of serving-path queries.
func (db *DB) ReadContext(ctx context.Context) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithSettings(db.read))
}

// WriteContext returns ctx carrying the settings of synchronous, acknowledged inserts.
func (db *DB) WriteContext(ctx context.Context) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithSettings(db.write))
}

// Ping checks that ClickHouse answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.Conn.Ping(ctx); err != nil {
		return Classify(fmt.Errorf("ping clickhouse: %w", err))
	}
	return nil
}

// Close closes the pool.
func (db *DB) Close() error { return db.Conn.Close() }

// OnCluster returns "ON CLUSTER name" in cluster mode, else "".
func (db *DB) OnCluster() string {
	if db.Cluster == "" {
		return ""
	}
	return "ON CLUSTER " + db.Cluster
}

// Set binds values as a tuple for `col IN ?` (a plain slice binds as an array literal,
// which IN does not take).
func Set(values []string) clickhouse.GroupSet {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return clickhouse.GroupSet{Value: vs}
}
