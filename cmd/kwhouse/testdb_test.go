package main

import (
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// useTestDB opens a fresh migrated database and points the CLI's environment at it.
func useTestDB(t *testing.T) *chstore.DB {
	t.Helper()
	testkit.SkipEmbedded(t, "the command opens a server connection of its own")
	db := testkit.ClickHouse(t)
	t.Setenv("KWHOUSE_CLICKHOUSE_ADDR", testkit.ClickHouseConfig(t).Addr)
	t.Setenv("KWHOUSE_CLICKHOUSE_DATABASE", db.Database)
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", "") // the tools (accounts, migrate, ingest) must not need it
	return db
}
