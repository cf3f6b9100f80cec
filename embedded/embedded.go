// Package embedded runs kwhouse without servers: ClickHouse inside the process (chDB, in a
// binary built with the chdb tag) and Redis's roles inside the process (an in-memory
// Redis on a loopback port, so the go-redis code paths are the same), every byte of data
// in one directory that one process at a time may use (docs/operations.md, "Embedded
// mode").
package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/alicebob/miniredis/v2"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
)

// ErrNoChDB is returned by Open in a binary built without the chdb tag.
var ErrNoChDB = errors.New("this kwhouse binary was built without chDB, so it cannot run embedded: " +
	"build it with `make build-embedded` (go build -tags chdb, cgo), or run it against servers " +
	"(clickhouse.addr and redis.addr, no embedded.dir)")

// engine is a chstore.Engine that knows its ClickHouse version.
type engine interface {
	chstore.Engine
	Version() driver.ServerVersion
}

// Store is an embedded deployment open in this process.
type Store struct {
	Dir string
	// DB is ClickHouse in the process, the database of the config given to Open.
	DB *chstore.DB
	// RedisAddr is the loopback address of the in-process Redis (redis.addr).
	RedisAddr string

	redis *miniredis.Miniredis
	lock  *os.File
}

// ClickHousePath is where the ClickHouse data of the embedded directory dir lives.
func ClickHousePath(dir string) string { return filepath.Join(dir, "clickhouse") }

// Open takes dir (created when missing) for this process, starts ClickHouse on its data
// there and an empty in-memory Redis. A directory another process holds is refused
// (ErrInUse): chDB's data must have one writer.
func Open(dir string, cfg config.ClickHouse) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("embedded directory: %w", err)
	}
	lock, err := Lock(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{Dir: dir, lock: lock}
	engine, err := openEngine(ClickHousePath(dir), cfg.Database)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("embedded clickhouse in %s: %w", dir, err)
	}
	s.DB = chstore.NewDB(engine, cfg, engine.Version())
	if s.redis, err = StartRedis(); err != nil {
		s.Close()
		return nil, err
	}
	s.RedisAddr = s.redis.Addr()
	return s, nil
}

// Close stops the in-process stores and releases the directory. Closing DB before is
// allowed (the app closes its stores itself).
func (s *Store) Close() error {
	var err error
	if s.DB != nil {
		err = s.DB.Close()
	}
	if s.redis != nil {
		s.redis.Close()
	}
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close()) // closing the file releases the flock
	}
	return err
}

// StartRedis starts an empty in-memory Redis on a free loopback port. Its keys expire
// with the wall clock, as a Redis server's do.
func StartRedis() (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("embedded redis: %w", err)
	}
	return m, nil
}
