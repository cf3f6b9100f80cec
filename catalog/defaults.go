package catalog

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// CountryDefault is an object that may be its country's default of its kind (a market, a
// carbon series): one default per country and mode, a newer one replacing the older.
type CountryDefault interface {
	// DefaultOf reports the object's country and whether it is that country's default.
	DefaultOf() (country string, isDefault bool)
	// ClearDefault makes it no longer the default.
	ClearDefault()
}

// Defaults returns the scope's documents of kind that are country's default, newest first.
// T is the documents' type; *T says whether one is a default.
func Defaults[T any, P interface {
	*T
	CountryDefault
}](ctx context.Context, docs *docstore.Store, scope kwhouse.Scope, kind, country string) ([]docstore.Doc, error) {
	all, err := docs.ListAll(ctx, scope, kind, docstore.ListQuery{})
	if err != nil {
		return nil, fmt.Errorf("list %s documents: %w", kind, err)
	}
	var out []docstore.Doc
	for _, d := range all {
		var v T
		if err := d.DecodeBody(&v); err != nil {
			return nil, err
		}
		if c, ok := P(&v).DefaultOf(); ok && c == country {
			out = append(out, d)
		}
	}
	return out, nil
}

// ReplaceDefault prepares a new default of kind for country: it takes a lock shared by every
// kwhouse process, held until unlock is called (after the commit), and returns the changes
// that demote the current defaults, each with its "<kind>.update" event, to commit in the
// same insert as the new default.
func ReplaceDefault[T any, P interface {
	*T
	CountryDefault
}](ctx context.Context, docs *docstore.Store, scope kwhouse.Scope, kind, country string) ([]Change, func(), error) {
	unlock, err := docs.Lock(ctx, fmt.Sprintf("default:%s:%s:%t:%s", kind, scope.AccountID, scope.LiveMode, country))
	if err != nil {
		return nil, nil, kwhouse.Unavailable("the "+kind+" default lock", err)
	}
	current, err := Defaults[T, P](ctx, docs, scope, kind, country)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	changes := make([]Change, 0, len(current))
	for _, d := range current {
		var v T
		if err := d.DecodeBody(&v); err != nil {
			unlock()
			return nil, nil, err
		}
		P(&v).ClearDefault()
		if d, err = docstore.WithBody(d, v); err != nil {
			unlock()
			return nil, nil, err
		}
		changes = append(changes, Change{Doc: d, EventType: kind + ".update", EventData: v})
	}
	return changes, unlock, nil
}
