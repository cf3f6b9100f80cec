//go:build !chdb

package testkit

import (
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
)

func embeddedDB(t testing.TB, _ config.ClickHouse) *chstore.DB {
	t.Helper()
	t.Fatal("KWHOUSE_TEST_EMBEDDED=1 needs a test binary built with -tags chdb (make test-embedded)")
	return nil
}
