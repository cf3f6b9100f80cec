// Package chdb runs kwhouse's statements on chDB, the current ClickHouse engine as an
// in-process library: the engine of embedded mode (package embedded) and of the
// conformance suite (`make test-modern`). Everything but this comment is behind the `chdb`
// build tag: the server-mode build never needs cgo or the library.
package chdb
