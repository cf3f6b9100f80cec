// Package chstore opens kwhouse's ClickHouse connection, creates its database, attaches the
// settings every query needs on the server version it talks to, and classifies errors.
package chstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kwhouse/kwhouse/config"
)

// DB runs kwhouse's statements on an Engine with the settings they need.
type DB struct {
	Database string
	Cluster  string
	// Observe, when set, sees every statement before it runs (the conformance suite
	// records which statements a run covered).
	Observe    func(Statement)
	cfg        config.ClickHouse // MutateShards dials one replica of each shard with it
	engine     Engine
	bulk       Engine // InsertBulk's pool: the same as engine unless Open made one
	version    driver.ServerVersion
	read       Settings
	write      Settings
	background Settings // reads of Background contexts
	// backgroundWrite is write at the background priority: the inserts of Background
	// contexts (a background pricer's write-backs).
	backgroundWrite Settings
	// quorum is the settings of metadata inserts on a cluster (nil: none), quorumWait how
	// long a quorum insert or a read of a lagging replica is retried (quorum.go).
	quorum     Settings
	quorumWait time.Duration
}

// NewDB returns a DB that runs on engine, a server of version v.
func NewDB(engine Engine, cfg config.ClickHouse, v driver.ServerVersion) *DB {
	db := &DB{Database: cfg.Database, Cluster: cfg.Cluster, cfg: cfg, engine: engine, bulk: engine, version: v}
	db.read, db.write, db.background = settingsFor(v, cfg)
	db.backgroundWrite = Settings{"priority": db.background["priority"]}
	for k, v := range db.write {
		if k != "priority" {
			db.backgroundWrite[k] = v
		}
	}
	if cfg.Cluster != "" && cfg.InsertQuorum > 0 {
		db.quorum = Settings{"insert_quorum": cfg.InsertQuorum, "insert_quorum_timeout": int(cfg.QuorumWait.Milliseconds())}
		for k, v := range db.write {
			db.quorum[k] = v
		}
		db.quorumWait = cfg.QuorumWait
	}
	return db
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
	bulk, err := dial(cfg, cfg.Database)
	if err != nil {
		conn.Close()
		return nil, err
	}
	db := NewDB(native{conn}, cfg, *v)
	db.bulk = native{bulk}
	return db, nil
}

// checkInOrder refuses a cluster whose profile does not read each shard from its first
// healthy replica (load_balancing in_order): with prefer_localhost_replica 0 (settingsFor)
// that is what makes a read see the writes acknowledged before it, and what keeps the
// answer cache's token and answer on one replica of each shard (docs/operations.md, "One
// service on any node"). 18.16's protocol sends only numeric settings, so kwhouse cannot
// set it per query.
func checkInOrder(ctx context.Context, conn driver.Conn) error {
	var lb string
	if err := conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'load_balancing'").Scan(&lb); err != nil {
		return Classify(fmt.Errorf("clickhouse load_balancing: %w", err))
	}
	if lb != "in_order" {
		return fmt.Errorf("clickhouse.cluster: the profile's load_balancing is %s; kwhouse needs in_order (docs/operations.md, \"Running on a ClickHouse cluster\")", lb)
	}
	return nil
}

func dial(cfg config.ClickHouse, database string) (driver.Conn, error) {
	var compression *clickhouse.Compression
	if cfg.WireCompression() == "lz4" {
		compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:             cfg.Addrs(), // the next node when one does not answer
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
// configured one: a connection naming a missing database is refused at the handshake. On
// a cluster it first checks the profile (checkInOrder).
func createDatabase(ctx context.Context, cfg config.ClickHouse) error {
	conn, err := dial(cfg, "default")
	if err != nil {
		return err
	}
	defer conn.Close()
	q := "CREATE DATABASE IF NOT EXISTS " + cfg.Database // identifier from validated config
	if cfg.Cluster != "" {
		if err := checkInOrder(ctx, conn); err != nil {
			return err
		}
		q += " ON CLUSTER " + cfg.Cluster
	}
	if err := conn.Exec(ctx, q); err != nil {
		return Classify(fmt.Errorf("create database %s: %w", cfg.Database, err))
	}
	return nil
}

// settingsFor returns the settings of serving reads, acknowledged writes and Background
// reads (the serving reads at a lower priority). Settings the server does not know are
// left out: 18.16 rejects a query carrying an unknown setting.
func settingsFor(v driver.ServerVersion, cfg config.ClickHouse) (read, write, background Settings) {
	read = Settings{
		"max_execution_time": int(cfg.MaxExecutionTime.Seconds()),
		"max_memory_usage":   int(cfg.MaxMemoryUsage),
		// JOINs are written with explicit ALL/ANY strictness; this keeps any missing one an error
		// on old servers and the same meaning on new ones.
		"join_use_nulls": 0,
		// A fleet cost query names its locations and their tariff sources (about 150 bytes a
		// location): more than the 256 KiB default takes for a thousand locations.
		"max_query_size": MaxQuerySize,
	}
	write = Settings{
		"max_execution_time": int(cfg.MaxExecutionTime.Seconds()),
		"max_memory_usage":   int(cfg.MaxMemoryUsage),
	}
	if AtLeast(v, 21, 11) {
		// Current releases may default async inserts on; an acknowledged write must be stored.
		write["async_insert"] = 0
	}
	if cfg.Cluster != "" {
		// An insert through a Distributed table returns once the shard has the rows, not
		// when they are queued on this node's disk (current releases still take the name).
		write["insert_distributed_sync"] = 1
		// Read your writes: whichever node kwhouse is connected to, a shard's rows are
		// written to and read from the same replica (with the profile's load_balancing
		// in_order: its first healthy one), not the connected node's own copy, which may
		// still be fetching them. (18.16's protocol takes only numeric query settings.)
		read["prefer_localhost_replica"], write["prefer_localhost_replica"] = 0, 0
		if cfg.InsertQuorum > 0 {
			// Metadata read on any node sees every acknowledged quorum insert (quorum.go).
			read["select_sequential_consistency"] = 1
		}
	}
	if cfg.LogQueries {
		read["log_queries"], write["log_queries"] = 1, 1
		// A fleet's untiered pricing statement carries its rates as literals (about 214 KB
		// for 900 locations): logged whole, so that the account id near its end still
		// finds it (the default cut is 100,000 characters).
		read["log_queries_cut_to_length"], write["log_queries_cut_to_length"] = 4<<20, 4<<20
	}
	// Priorities: a query with a larger value is paused while one with a smaller value runs
	// (0 would take a query out of the scheme); Background reads and inserts take 2. An
	// insert counts as running from the moment its statement is sent, while the client
	// still builds its block: at 1, a background pricer's write-backs would pause the
	// pass's own later reads (docs/costs.md, "Background pricer").
	read["priority"], write["priority"] = 1, 1
	background = Settings{"priority": 2}
	for k, v := range read {
		if k != "priority" {
			background[k] = v
		}
	}
	return read, write, background
}

// MaxQuerySize is the largest query text a serving read may send.
const MaxQuerySize = 8 << 20

// AtLeast reports whether v is major.minor or newer.
func AtLeast(v driver.ServerVersion, major, minor uint64) bool {
	return v.Version.Major > major || (v.Version.Major == major && v.Version.Minor >= minor)
}

// Version returns the server version seen at connect.
func (db *DB) Version() driver.ServerVersion { return db.version }

// Ping checks that ClickHouse answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.engine.Ping(ctx); err != nil {
		return Classify(fmt.Errorf("ping clickhouse: %w", err))
	}
	return nil
}

// Close closes the pools.
func (db *DB) Close() error {
	err := db.engine.Close()
	if db.bulk != db.engine {
		err = errors.Join(err, db.bulk.Close())
	}
	return err
}

// DropDatabaseSQL is the statement that drops cfg's database, on every node of its cluster.
func DropDatabaseSQL(cfg config.ClickHouse) string {
	q := "DROP DATABASE IF EXISTS " + cfg.Database // identifier from validated config
	if cfg.Cluster != "" {
		q += " ON CLUSTER " + cfg.Cluster
	}
	return q
}
