package docstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// KindEvent is the kind of event documents.
const KindEvent = "event"

// latestSelect picks each document's latest version with argMax rather than FINAL: a
// WHERE on a column that changes between versions, evaluated before FINAL's merge (as
// PREWHERE may be), could surface an older version. Only the immutable key columns
// (account, mode, kind, id) are filtered in WHERE.
const latestSelect = `SELECT id,
	argMax(body, version)         AS cur_body,
	argMax(deleted, version)      AS cur_deleted,
	min(created_us)               AS first_created,
	max(version)                  AS cur_version,
	argMax(reference_id, version) AS cur_reference_id,
	argMax(customer_id, version)  AS cur_customer_id,
	argMax(location_id, version)  AS cur_location_id,
	argMax(object_id, version)    AS cur_object_id,
	argMax(event_type, version)   AS cur_event_type,
	argMax(direction, version)    AS cur_direction,
	argMax(tariff_type, version)  AS cur_tariff_type
FROM documents
WHERE account_id = ? AND live_mode = ? AND kind = ?`

var (
	getStmt  = chstore.Register("docstore.get", latestSelect+" AND id = ? GROUP BY id")
	listStmt = chstore.Register("docstore.list", latestSelect+" AND … GROUP BY id HAVING … ORDER BY … LIMIT ?")
)

// Get returns the current version of a document, or a NotFound error when it does not
// exist in scope or was deleted.
func (s *Store) Get(ctx context.Context, scope kwhouse.Scope, kind, id string) (Doc, error) {
	d, err := s.get(ctx, scope, kind, id)
	if err != nil {
		return Doc{}, err
	}
	if d.Deleted {
		return Doc{}, kwhouse.NotFound("id", id)
	}
	return d, nil
}

// get reads a document through the cache. A cached document of another scope or kind is
// treated as a miss: the caller's lookup goes to ClickHouse as an unknown id's does, so the
// 404 of another tenant's cached id takes as long as any other (no timing signal).
func (s *Store) get(ctx context.Context, scope kwhouse.Scope, kind, id string) (Doc, error) {
	if b, ok := s.cache.Get(ctx, s.cacheKey(id)); ok {
		if d, err := decodeCached(b); err == nil && d.ID == id && d.Kind == kind && d.Scope == scope {
			return d, nil
		}
	}
	docs, err := s.query(ctx, scope, kind, getStmt, id)
	if err != nil {
		return Doc{}, fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	if len(docs) == 0 {
		return Doc{}, kwhouse.NotFound("id", id)
	}
	d := docs[0]
	if !d.Deleted && kind != KindEvent {
		if b, err := encodeCached(d); err == nil {
			s.cache.SetNX(ctx, s.cacheKey(id), b) // NX: never overwrite a concurrent writer's newer version
		}
	}
	return d, nil
}

func (s *Store) query(ctx context.Context, scope kwhouse.Scope, kind string, st chstore.Statement, args ...any) ([]Doc, error) {
	all := append([]any{scope.AccountID, scope.LiveByte(), kind}, args...)
	rows, err := s.db.Query(ctx, st, all...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Doc
	for rows.Next() {
		d := Doc{Kind: kind, Scope: scope}
		var body string
		var deleted uint8
		var created uint64
		f := &d.Fields
		if err := rows.Scan(&d.ID, &body, &deleted, &created, &d.Version, &f.ReferenceID, &f.CustomerID,
			&f.LocationID, &f.ObjectID, &f.EventType, &f.Direction, &f.TariffType); err != nil {
			return nil, fmt.Errorf("scan document: %w", err)
		}
		d.Body, d.Deleted, d.CreatedUS = []byte(body), deleted == 1, int64(created)
		out = append(out, d)
	}
	return out, rows.Err()
}

// ListQuery selects and pages documents of one kind.
type ListQuery struct {
	Filters       map[Column]string // equality filters on current values
	Limit         int               // 1..100
	StartingAfter string            // id cursor: objects older than it
	EndingBefore  string            // id cursor: objects newer than it
	MinCreatedUS  int64             // leave out documents created before this (0: none)
	// Fixed are equality filters on columns a document never changes (a tariff's
	// location_id, an event's object_id): safe to apply before picking the latest version,
	// so only matching documents are aggregated.
	Fixed map[Column]string
}

// List returns current, undeleted documents newest first, and whether more follow in the
// paging direction.
func (s *Store) List(ctx context.Context, scope kwhouse.Scope, kind string, lq ListQuery) ([]Doc, bool, error) {
	var where, having []string
	var args, hargs []any
	if lq.MinCreatedUS > 0 {
		where = append(where, "created_us >= ?")
		args = append(args, uint64(lq.MinCreatedUS))
	}
	for _, col := range sortedColumns(lq.Fixed) {
		where = append(where, string(col)+" = ?")
		args = append(args, lq.Fixed[col])
	}
	having = append(having, "cur_deleted = 0")
	for _, col := range sortedColumns(lq.Filters) {
		having = append(having, "cur_"+string(col)+" = ?")
		hargs = append(hargs, lq.Filters[col])
	}
	order := "first_created DESC, id DESC"
	if cursor, forward := lq.cursor(); cursor != "" {
		c, err := s.get(ctx, scope, kind, cursor)
		if err != nil {
			param := "starting_after"
			if !forward {
				param = "ending_before"
			}
			if kwhouse.KindOf(err) == kwhouse.KindNotFound {
				return nil, false, kwhouse.Invalid("invalid_cursor", param, "no %s %s to page from", kind, cursor)
			}
			return nil, false, err
		}
		cmp := "<"
		if !forward {
			cmp, order = ">", "first_created ASC, id ASC"
		}
		having = append(having, fmt.Sprintf("(first_created %s ? OR (first_created = ? AND id %s ?))", cmp, cmp))
		hargs = append(hargs, uint64(c.CreatedUS), uint64(c.CreatedUS), c.ID)
	}
	q := latestSelect
	if len(where) > 0 {
		q += " AND " + strings.Join(where, " AND ")
	}
	q += " GROUP BY id HAVING " + strings.Join(having, " AND ") + " ORDER BY " + order + " LIMIT ?"
	docs, err := s.query(ctx, scope, kind, listStmt.With(q), append(append(args, hargs...), lq.Limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", kind, err)
	}
	more := len(docs) > lq.Limit
	if more {
		docs = docs[:lq.Limit]
	}
	if _, forward := lq.cursor(); !forward {
		for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
			docs[i], docs[j] = docs[j], docs[i]
		}
	}
	return docs, more, nil
}

// cursor returns the id to page from and whether paging goes to older objects.
func (lq ListQuery) cursor() (string, bool) {
	if lq.EndingBefore != "" {
		return lq.EndingBefore, false
	}
	return lq.StartingAfter, true
}

func sortedColumns(m map[Column]string) []Column {
	out := make([]Column, 0, len(m))
	for _, c := range []Column{ColReferenceID, ColCustomerID, ColLocationID, ColObjectID, ColEventType, ColDirection, ColTariffType} {
		if _, ok := m[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// ListAll returns every current document of a kind that matches lq's filters, newest
// first, in one read (lq's cursors and limit are its own).
func (s *Store) ListAll(ctx context.Context, scope kwhouse.Scope, kind string, lq ListQuery) ([]Doc, error) {
	lq.Limit, lq.StartingAfter, lq.EndingBefore = listAllLimit, "", ""
	docs, _, err := s.List(ctx, scope, kind, lq)
	return docs, err
}

// listAllLimit stands for "no limit" in ListAll's one read.
const listAllLimit = 1<<31 - 2
