package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"

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
	taken, unlock, err := c.claimReferences(ctx, scope, kind, map[string]string{ref: id})
	if err == nil {
		err = taken[ref]
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// claimReferences claims many references at once (want: reference → the id that is to
// carry it): taken holds the conflict of each reference another object of kind in scope
// already carries. The locks of all of them are held until unlock is called, taken in
// sorted order so that two batches cannot wait for each other.
func (c *Catalog) claimReferences(ctx context.Context, scope kwhouse.Scope, kind string, want map[string]string) (
	taken map[string]error, unlock func(), err error) {
	refs := make([]string, 0, len(want))
	for ref := range want {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	var unlocks []func()
	unlock = func() {
		for _, u := range unlocks {
			u()
		}
	}
	for _, ref := range refs {
		u, err := c.docs.Lock(ctx, fmt.Sprintf("ref:%s:%t:%s:%s", scope.AccountID, scope.LiveMode, kind, ref))
		if err != nil {
			unlock()
			return nil, func() {}, kwhouse.Unavailable("the reference lock", err)
		}
		unlocks = append(unlocks, u)
	}
	owners, err := c.docs.ReferenceOwners(ctx, scope, kind, refs)
	if err != nil {
		unlock()
		return nil, func() {}, err
	}
	taken = map[string]error{}
	for ref, owner := range owners {
		if owner != want[ref] {
			taken[ref] = kwhouse.Conflict("duplicate_reference_id", "reference_id",
				"%s %s already has reference_id %q", kind, owner, ref)
		}
	}
	return taken, unlock, nil
}

// missingRef turns a NotFound of a referenced object into a 400 on the field naming it.
func missingRef(err error, param, id string) error {
	if kwhouse.KindOf(err) == kwhouse.KindNotFound {
		return kwhouse.Invalid("resource_missing", param, "no such object: %s", id)
	}
	return errors.Join(err)
}
