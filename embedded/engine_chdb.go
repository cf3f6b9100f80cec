//go:build chdb

package embedded

import (
	"github.com/kwhouse/kwhouse/chstore/chdb"
)

// WithChDB reports whether this binary can run embedded.
const WithChDB = true

func openEngine(path, database string) (engine, error) { return chdb.Open(path, database) }
