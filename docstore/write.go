package docstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

const insertSQL = `INSERT INTO documents (account_id, live_mode, kind, id, version, deleted, created_us,
	reference_id, customer_id, location_id, object_id, event_type, direction, tariff_type, body) VALUES`

var (
	insertStmt   = chstore.Register("docstore.insert", insertSQL)
	countOldStmt = chstore.Register("docstore.count_old", "SELECT count() FROM documents WHERE kind = ? AND created_us < ?")
	purgeStmt    = chstore.Register("docstore.purge", "ALTER TABLE documents DELETE WHERE kind = ? AND created_us < ?")
)

// Write stores docs as one insert block: ClickHouse writes a block to an unpartitioned
// table as one part, so the documents (a change and its event) are stored together or not
// at all. Versions are assigned at the insert, increasing within it.
//
// Writes that arrive while an insert runs share the next one (group commit: a fleet's
// concurrent creates become a few inserts, not one each); they are then stored together or
// not at all, and every caller gets the insert's result. A lone write goes at once.
func (s *Store) Write(ctx context.Context, docs ...Doc) error {
	if len(docs) == 0 {
		return nil
	}
	if err := s.group.write(context.WithoutCancel(ctx), docs, s.insert); err != nil {
		return err
	}
	if fn := s.onWrite.Load(); fn != nil {
		(*fn)(docs)
	}
	return nil
}

// OnWrite makes every successful Write call fn with the documents it stored (the webhook
// dispatcher's way to new events without waiting for its next read); fn must not block.
// A later call replaces fn.
func (s *Store) OnWrite(fn func(docs []Doc)) { s.onWrite.Store(&fn) }

// groupCommit gathers the writes that arrive while an insert runs into the next one.
type groupCommit struct {
	mu      sync.Mutex
	pending []*pendingWrite
	leading bool // a caller is inserting; the others wait for it
}

type pendingWrite struct {
	docs []Doc
	done chan error
}

// write queues docs and waits for the insert that stores them. With no insert running, the
// caller starts a flusher that inserts whatever is pending, again until nothing is.
func (g *groupCommit) write(ctx context.Context, docs []Doc, insert func(context.Context, []Doc) error) error {
	w := &pendingWrite{docs: docs, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, w)
	if !g.leading {
		g.leading = true
		go g.flush(ctx, insert)
	}
	g.mu.Unlock()
	return <-w.done
}

func (g *groupCommit) flush(ctx context.Context, insert func(context.Context, []Doc) error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.pending) > 0 {
		group := g.pending
		g.pending = nil
		g.mu.Unlock()
		var all []Doc
		for _, p := range group {
			all = append(all, p.docs...)
		}
		err := insert(ctx, all)
		for _, p := range group {
			n := copy(p.docs, all) // with the versions the insert assigned
			all = all[n:]
			p.done <- err
		}
		g.mu.Lock()
	}
	g.leading = false
}

// insert stores docs as one block, between the write marks of their scopes.
func (s *Store) insert(ctx context.Context, docs []Doc) error {
	base, err := s.versions.Next(ctx, len(docs))
	if err != nil {
		return fmt.Errorf("document versions: %w", err)
	}
	scopes := make([]kwhouse.Scope, len(docs))
	for i := range docs {
		scopes[i] = docs[i].Scope
	}
	return s.marks.Around(ctx, scopes, func() error { return s.send(ctx, docs, base) })
}

// send inserts docs with versions from base on.
func (s *Store) send(ctx context.Context, docs []Doc, base uint64) error {
	batch, err := s.db.Insert(ctx, insertStmt)
	if err != nil {
		return fmt.Errorf("write documents: %w", err)
	}
	for i := range docs {
		d := &docs[i]
		d.Version = base + uint64(i)
		f := d.Fields
		if err := batch.Append(d.Scope.AccountID, d.Scope.LiveByte(), d.Kind, d.ID, d.Version,
			boolByte(d.Deleted), uint64(d.CreatedUS), f.ReferenceID, f.CustomerID, f.LocationID,
			f.ObjectID, f.EventType, f.Direction, f.TariffType, string(d.Body)); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("write document %s: %w", d.ID, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("write documents: %w", err)
	}
	s.refreshCache(ctx, docs)
	return nil
}

// refreshCache puts the new versions in the cache (write-through), a deleted document's
// too: its tombstone keeps a reader that read the document before the delete (on any
// replica) from caching it again with SetNX, for the cache's TTL. Set, not SetNX: a reader
// that raced this write with an older version is overwritten.
func (s *Store) refreshCache(ctx context.Context, docs []Doc) {
	var keys []string
	var values [][]byte
	for _, d := range docs {
		if d.Kind == KindEvent {
			continue // events are read through lists, never cached one by one
		}
		if d.Deleted {
			s.known.forget(d.Scope, d.ID)
			s.cache.Del(ctx, deletionKey(d.Scope)) // other processes drop the ids they know
		}
		if b, err := encodeCached(d); err == nil {
			keys, values = append(keys, s.cacheKey(d.ID)), append(values, b)
		}
	}
	if len(keys) > 0 {
		s.cache.SetMany(ctx, keys, values)
	}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Purge deletes every document of kind created before createdBeforeUS (a background
// mutation: ClickHouse applies it asynchronously).
func (s *Store) Purge(ctx context.Context, kind string, createdBeforeUS int64) error {
	var n uint64
	if err := s.db.QueryRow(ctx, countOldStmt, kind, uint64(createdBeforeUS)).Scan(&n); err != nil {
		return fmt.Errorf("count old %s documents: %w", kind, err)
	}
	if n == 0 {
		return nil // no mutation when there is nothing to delete: mutations rewrite parts
	}
	if err := s.db.Exec(ctx, purgeStmt, kind, uint64(createdBeforeUS)); err != nil {
		return fmt.Errorf("purge %s documents: %w", kind, err)
	}
	return nil
}

// deletionEpoch names the scope's deletions so far, shared by every kwhouse process through
// the cache: a delete ends it. "" when it cannot be known (the cache is down).
func (s *Store) deletionEpoch(ctx context.Context, scope kwhouse.Scope) string {
	key := deletionKey(scope)
	if b, ok := s.cache.Get(ctx, key); ok {
		return string(b)
	}
	s.cache.SetNX(ctx, key, []byte(kwhouse.NewID("del_")))
	if b, ok := s.cache.Get(ctx, key); ok {
		return string(b)
	}
	return ""
}

func deletionKey(scope kwhouse.Scope) string {
	return fmt.Sprintf("deletion-epoch:%s:%t", scope.AccountID, scope.LiveMode)
}
