//go:build !chdb

package embedded

// WithChDB reports whether this binary can run embedded.
const WithChDB = false

func openEngine(string, string) (engine, error) { return nil, ErrNoChDB }
