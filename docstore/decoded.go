package docstore

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// headsStmt reads the latest version of each document of a kind, without its body.
var headsStmt = chstore.Register("docstore.heads", `SELECT id,
	max(version)             AS cur_version,
	argMax(deleted, version) AS cur_deleted,
	min(created_us)          AS first_created
FROM documents
WHERE account_id = ? AND live_mode = ? AND kind = ?
GROUP BY id HAVING cur_deleted = 0`)

// bodiesStmt reads the latest version of some documents of a kind, bodies included.
var bodiesStmt = chstore.Register("docstore.bodies", latestSelect+" AND id IN ? GROUP BY id HAVING cur_deleted = 0")

// decodedScopes bounds the scopes a Decoded keeps (a 1,000-location fleet's decoded
// tariffs are about 1 MB).
const decodedScopes = 64

// bodiesByID is how many changed documents are read by id; more are read with the whole kind.
const bodiesByID = 200

// Decoded keeps every current document of one kind per scope decoded in memory, each
// under the version it was decoded from. All asks ClickHouse for each document's latest
// version only (no bodies), and reads and decodes just the documents whose latest version
// it has not decoded: every write, by any process, gives its document a new version from
// the shared clock, so the next All sees it, exactly, with nothing to invalidate.
type Decoded[T any] struct {
	store  *Store
	kind   string
	decode func(Doc) (T, error)
	scopes *lru.Cache[kwhouse.Scope, *decodedScope[T]]
}

type decodedScope[T any] struct {
	mu   sync.Mutex
	docs map[string]decodedDoc[T]
	// last is what current last returned: while the heads name exactly the documents
	// decoded, at their versions, it is the answer again (shared, never modified).
	last []Versioned[T]
}

type decodedDoc[T any] struct {
	id      string
	version uint64
	created int64
	value   T
}

// NewDecoded returns a Decoded of kind's documents, decoded by decode.
func NewDecoded[T any](s *Store, kind string, decode func(Doc) (T, error)) *Decoded[T] {
	c, err := lru.New[kwhouse.Scope, *decodedScope[T]](decodedScopes)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &Decoded[T]{store: s, kind: kind, decode: decode, scopes: c}
}

// head is one row of headsStmt.
type head struct {
	id      string
	version uint64
	created int64
}

// Versioned is a decoded document with its id and the version it was decoded from.
type Versioned[T any] struct {
	ID      string
	Version uint64
	Value   T
}

// All returns every current document of the kind in scope, decoded, newest first (as
// ListAll orders them).
func (d *Decoded[T]) All(ctx context.Context, scope kwhouse.Scope) ([]T, error) {
	all, err := d.AllVersioned(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(all))
	for i, v := range all {
		out[i] = v.Value
	}
	return out, nil
}

// AllVersioned is All with each document's id and version: a value computed from a
// document may be kept under them. The slice is shared with other callers: it must not
// be modified.
func (d *Decoded[T]) AllVersioned(ctx context.Context, scope kwhouse.Scope) ([]Versioned[T], error) {
	sc, _ := d.scopes.Get(scope)
	if sc == nil {
		// Nothing decoded yet (a process's first read of the scope): every document is
		// read at once, its versions with it.
		fresh, err := d.read(ctx, scope, nil)
		if err != nil {
			return nil, err
		}
		sc = &decodedScope[T]{docs: fresh}
		heads := make([]head, 0, len(fresh))
		for _, v := range fresh {
			heads = append(heads, head{id: v.id, version: v.version, created: v.created})
		}
		out := sc.current(heads, nil) // before others can see sc
		d.scopes.Add(scope, sc)
		return out, nil
	}
	heads, err := d.heads(ctx, scope)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	var missing []string
	for _, h := range heads {
		if have, ok := sc.docs[h.id]; !ok || have.version != h.version {
			missing = append(missing, h.id)
		}
	}
	if len(missing) == 0 && len(heads) == len(sc.docs) && sc.last != nil {
		// Nothing written or deleted since: the answer is the last one, not rebuilt and
		// sorted again (a fleet answer asks for 1,000 locations and 1,000 tariffs so).
		defer sc.mu.Unlock()
		return sc.last, nil
	}
	sc.mu.Unlock()
	var fresh map[string]decodedDoc[T]
	if len(missing) > 0 {
		if fresh, err = d.read(ctx, scope, missing); err != nil {
			return nil, err
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.current(heads, fresh), nil
}

// current adds the documents just read (fresh) to those decoded and returns the current
// ones (heads), newest first; the scope's lock is held.
func (sc *decodedScope[T]) current(heads []head, fresh map[string]decodedDoc[T]) []Versioned[T] {
	for id, v := range fresh {
		sc.docs[id] = v
	}
	keep := make(map[string]decodedDoc[T], len(heads))
	out := make([]decodedDoc[T], 0, len(heads))
	for _, h := range heads {
		// fresh may hold a later version than h (a write since); a document missing from
		// fresh, or older than h, was deleted since h was read: it is left out.
		if v, ok := sc.docs[h.id]; ok && v.version >= h.version {
			keep[h.id] = v
			out = append(out, v)
		}
	}
	sc.docs = keep // deleted documents go
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { // newest first, ties by id descending
		if c := cmp.Compare(out[b].created, out[a].created); c != 0 {
			return c
		}
		return strings.Compare(out[b].id, out[a].id)
	})
	values := make([]Versioned[T], len(out))
	for i, j := range order {
		values[i] = Versioned[T]{ID: out[j].id, Version: out[j].version, Value: out[j].value}
	}
	sc.last = values
	return values
}

func (d *Decoded[T]) heads(ctx context.Context, scope kwhouse.Scope) ([]head, error) {
	rows, err := d.store.db.Query(ctx, headsStmt, scope.AccountID, scope.LiveByte(), d.kind)
	if err != nil {
		return nil, fmt.Errorf("versions of %s documents: %w", d.kind, err)
	}
	defer rows.Close()
	var out []head
	for rows.Next() {
		var h head
		var deleted uint8
		var created uint64
		if err := rows.Scan(&h.id, &h.version, &deleted, &created); err != nil {
			return nil, fmt.Errorf("scan %s version: %w", d.kind, err)
		}
		h.created = int64(created)
		out = append(out, h)
	}
	return out, rows.Err()
}

// read reads and decodes the latest versions of documents ids (nil: all of the kind; all
// too when many).
func (d *Decoded[T]) read(ctx context.Context, scope kwhouse.Scope, ids []string) (map[string]decodedDoc[T], error) {
	var docs []Doc
	var err error
	if ids == nil || len(ids) > bodiesByID {
		docs, err = d.store.ListAll(ctx, scope, d.kind, ListQuery{})
	} else {
		docs, err = d.store.query(ctx, scope, d.kind, bodiesStmt, chstore.Set(ids))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s documents: %w", d.kind, err)
	}
	values, err := d.decodeAll(docs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]decodedDoc[T], len(docs))
	for i, doc := range docs {
		out[doc.ID] = decodedDoc[T]{id: doc.ID, version: doc.Version, created: doc.CreatedUS, value: values[i]}
	}
	return out, nil
}

// decodeChunk is how many documents one goroutine decodes at least: a process's first read
// of a fleet (every location and tariff at once) is decoded on every core.
const decodeChunk = 128

// decodeAll decodes docs in order, in runs of at least decodeChunk side by side.
func (d *Decoded[T]) decodeAll(docs []Doc) ([]T, error) {
	values := make([]T, len(docs))
	workers := min(runtime.GOMAXPROCS(0), (len(docs)+decodeChunk-1)/decodeChunk)
	if workers <= 1 {
		for i, doc := range docs {
			v, err := d.decode(doc)
			if err != nil {
				return nil, err
			}
			values[i] = v
		}
		return values, nil
	}
	per := (len(docs) + workers - 1) / workers
	var g errgroup.Group
	for lo := 0; lo < len(docs); lo += per {
		hi := min(lo+per, len(docs))
		g.Go(func() error {
			for i := lo; i < hi; i++ {
				v, err := d.decode(docs[i])
				if err != nil {
					return err
				}
				values[i] = v
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return values, nil
}
