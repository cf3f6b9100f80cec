package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// ListQuery is a page request of a list endpoint.
type ListQuery struct {
	Limit         int
	StartingAfter string
	EndingBefore  string
	Filters       map[string]string // by filter name: FilterReferenceID, FilterCustomerID, …
}

// List filter names, as the API's query parameters spell them.
const (
	FilterReferenceID = "reference_id"
	FilterCustomerID  = "customer_id"
	FilterEventType   = "event_type"
	FilterObjectID    = "object_id"
)

// filterColumns are the document columns the filters compare.
var filterColumns = map[string]docstore.Column{FilterReferenceID: docstore.ColReferenceID,
	FilterCustomerID: docstore.ColCustomerID, FilterEventType: docstore.ColEventType, FilterObjectID: docstore.ColObjectID}

// docQuery keeps only the filters a kind allows.
func (q ListQuery) docQuery(allowed ...string) docstore.ListQuery {
	f := map[docstore.Column]string{}
	for _, name := range allowed {
		if v, ok := q.Filters[name]; ok {
			f[filterColumns[name]] = v
		}
	}
	return docstore.ListQuery{Filters: f, Limit: q.Limit, StartingAfter: q.StartingAfter, EndingBefore: q.EndingBefore}
}

// claimReference makes sure no other object of kind in scope has reference ref, and holds
// a lock until the returned func is called so that a concurrent create cannot take it.
func (c *Catalog) claimReference(ctx context.Context, scope kwhouse.Scope, kind, id, ref string) (func(), error) {
	if ref == "" {
		return func() {}, nil
	}
	key := fmt.Sprintf("ref:%s:%t:%s:%s", scope.AccountID, scope.LiveMode, kind, ref)
	unlock, err := c.docs.Lock(ctx, key)
	if err != nil {
		return nil, kwhouse.Unavailable("the reference lock", err)
	}
	docs, _, err := c.docs.List(ctx, scope, kind, docstore.ListQuery{
		Filters: map[docstore.Column]string{docstore.ColReferenceID: ref}, Limit: 2})
	if err != nil {
		unlock()
		return nil, err
	}
	for _, d := range docs {
		if d.ID != id {
			unlock()
			return nil, kwhouse.Conflict("duplicate_reference_id", "reference_id",
				"%s %s already has reference_id %q", kind, d.ID, ref)
		}
	}
	return unlock, nil
}

// missingRef turns a NotFound of a referenced object into a 400 on the field naming it.
func missingRef(err error, param, id string) error {
	if kwhouse.KindOf(err) == kwhouse.KindNotFound {
		return kwhouse.Invalid("resource_missing", param, "no such object: %s", id)
	}
	return errors.Join(err)
}
