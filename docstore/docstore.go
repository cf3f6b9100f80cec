// Package docstore keeps kwhouse's metadata documents (customers, locations, devices,
// tariffs, markets) and events in ClickHouse, one row per version with the latest winning,
// behind a read-through Redis cache. Losing Redis loses nothing: reads fall back to
// ClickHouse.
package docstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/versions"
	"github.com/kwhouse/kwhouse/writemarks"
)

// Doc is one version of a document.
type Doc struct {
	Kind      string
	ID        string
	Scope     kwhouse.Scope
	Version   uint64 // set by Write from the version clock (nanoseconds since 1970), so later writes win
	Deleted   bool
	CreatedUS int64 // creation time in microseconds; lists are ordered by it, newest first
	Fields    Fields
	Body      []byte // the document's JSON
}

// Created returns the creation time.
func (d Doc) Created() time.Time { return time.UnixMicro(d.CreatedUS).UTC() }

// Fields are the columns lists filter on; empty when they do not apply to a kind.
type Fields struct {
	ReferenceID string `json:"reference_id,omitempty"`
	CustomerID  string `json:"customer_id,omitempty"`
	LocationID  string `json:"location_id,omitempty"`
	ObjectID    string `json:"object_id,omitempty"`
	EventType   string `json:"event_type,omitempty"`
	Direction   string `json:"direction,omitempty"`
	TariffType  string `json:"tariff_type,omitempty"`
}

// Column names a filterable column; only these constants reach SQL.
type Column string

// Filterable columns.
const (
	ColReferenceID Column = "reference_id"
	ColCustomerID  Column = "customer_id"
	ColLocationID  Column = "location_id"
	ColObjectID    Column = "object_id"
	ColEventType   Column = "event_type"
	ColDirection   Column = "direction"
	ColTariffType  Column = "tariff_type"
)

// Cache is what the store needs of a cache. Errors are the cache's own business: a failing
// cache behaves as an empty one.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool)
	Set(ctx context.Context, key string, value []byte)
	// SetMany stores values[i] under keys[i], in one round trip.
	SetMany(ctx context.Context, keys []string, values [][]byte)
	SetNX(ctx context.Context, key string, value []byte)
	Del(ctx context.Context, keys ...string)
	// Take deletes key and reports whether it was there: a one-time marker, which at most
	// one caller ever takes (false when the cache is down).
	Take(ctx context.Context, key string) bool
	// Lock takes a lock shared by every kwhouse process; ok is false when the cache is down.
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), ok bool, err error)
}

// Store reads and writes documents.
type Store struct {
	db    *chstore.DB
	cache Cache
	now   func() time.Time
	locks *keyedMutex
	known *knownIDs
	group groupCommit
	// onWrite is told of every successful Write (OnWrite).
	onWrite atomic.Pointer[func(docs []Doc)]
	// versions orders a document's versions: the clock every kwhouse process shares, so
	// the later of two changes wins whichever process made it.
	versions VersionClock
	// marks brackets every insert (SetWriteMarks); nil: none.
	marks *writemarks.Marks
}

// VersionClock hands out row versions: Next reserves n consecutive ones and returns the
// first, above every version drawn before (by any process sharing the clock).
type VersionClock interface {
	Next(ctx context.Context, n int) (uint64, error)
}

// New returns a Store on db and cache (use NoCache{} for none).
func New(db *chstore.DB, cache Cache, now func() time.Time) *Store {
	return &Store{db: db, cache: cache, now: now, locks: newKeyedMutex(), known: newKnownIDs(time.Minute),
		versions: versions.Local(now)}
}

// SetVersionClock makes the store draw document versions from c (the clock the
// deployment's processes share) instead of its own clock.
func (s *Store) SetVersionClock(c VersionClock) { s.versions = c }

// SetWriteMarks makes every document insert marked in m (the answer cache's write marks,
// docs/costs.md "Write marks"): set before the store is used.
func (s *Store) SetWriteMarks(m *writemarks.Marks) { s.marks = m }

// WriteMarks are the marks of the store's writes (nil: none), for the rows written
// beside documents that a fleet answer's token counts (price changes).
func (s *Store) WriteMarks() *writemarks.Marks { return s.marks }

// Versions is the store's version clock, for the rows kept beside documents (market
// prices, carbon intensities) that a later write must replace whichever process makes it.
func (s *Store) Versions() VersionClock { return s.versions }

// Now returns the store's clock reading.
func (s *Store) Now() time.Time { return s.now() }

// Cache returns the cache the store reads through (NoCache{} when there is none).
func (s *Store) Cache() Cache { return s.cache }

// WithBody returns d with its body set to v's JSON.
func WithBody(d Doc, v any) (Doc, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return d, fmt.Errorf("encode %s %s: %w", d.Kind, d.ID, err)
	}
	d.Body = b
	return d, nil
}

// DecodeBody reads the document's JSON body into v.
func (d Doc) DecodeBody(v any) error {
	if err := json.Unmarshal(d.Body, v); err != nil {
		return fmt.Errorf("decode %s %s: %w", d.Kind, d.ID, err)
	}
	return nil
}
