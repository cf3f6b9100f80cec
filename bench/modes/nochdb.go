//go:build !chdb

package main

import (
	"fmt"
	"os"
)

// main without chDB only says how to build the benchmark, so that `go build ./...`
// works on a machine that has not fetched chDB.
func main() {
	fmt.Fprintln(os.Stderr, "bench/modes needs chDB: run make bench-modes")
	os.Exit(2)
}
