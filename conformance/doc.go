// Package conformance proves that every statement kwhouse sends runs on current
// ClickHouse (26.x, as the chDB library) as it does on the 18.16 server: `make
// test-modern` runs one scenario through the whole API on both engines and compares every
// response, then fails if a registered statement was never run. The tests are behind the
// `chdb` build tag.
package conformance
