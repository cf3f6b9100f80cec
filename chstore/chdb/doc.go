// Package chdb runs kwhouse's statements on chDB, the current ClickHouse engine as an
// in-process library, for the conformance suite (`make test-modern`). Everything but this
// comment is behind the `chdb` build tag: the service and `make test` never need cgo or
// the library.
package chdb
