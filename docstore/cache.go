package docstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kwhouse/kwhouse"
)

// cached is the cache's form of a Doc.
type cached struct {
	Kind      string          `json:"k"`
	ID        string          `json:"i"`
	Account   string          `json:"a"`
	Live      bool            `json:"l"`
	Version   uint64          `json:"v"`
	Deleted   bool            `json:"d,omitempty"`
	CreatedUS int64           `json:"c"`
	Fields    Fields          `json:"f"`
	Body      json.RawMessage `json:"b"`
}

func encodeCached(d Doc) ([]byte, error) {
	return json.Marshal(cached{Kind: d.Kind, ID: d.ID, Account: d.Scope.AccountID, Live: d.Scope.LiveMode,
		Version: d.Version, Deleted: d.Deleted, CreatedUS: d.CreatedUS, Fields: d.Fields, Body: d.Body})
}

func decodeCached(b []byte) (Doc, error) {
	var c cached
	if err := json.Unmarshal(b, &c); err != nil {
		return Doc{}, err
	}
	return Doc{Kind: c.Kind, ID: c.ID, Scope: kwhouse.Scope{AccountID: c.Account, LiveMode: c.Live},
		Version: c.Version, Deleted: c.Deleted, CreatedUS: c.CreatedUS, Fields: c.Fields, Body: c.Body}, nil
}

func (s *Store) cacheKey(id string) string { return "doc:" + id }

// NoCache is a Cache that holds nothing; locks are then only in-process.
type NoCache struct{}

// Get implements Cache.
func (NoCache) Get(context.Context, string) ([]byte, bool) { return nil, false }

// Set implements Cache.
func (NoCache) Set(context.Context, string, []byte) {}

// SetMany does nothing.
func (NoCache) SetMany(context.Context, []string, [][]byte) {}

// SetNX implements Cache.
func (NoCache) SetNX(context.Context, string, []byte) {}

// Del implements Cache.
func (NoCache) Del(context.Context, ...string) {}

// Take implements Cache: nothing is ever there.
func (NoCache) Take(context.Context, string) bool { return false }

// Lock implements Cache.
func (NoCache) Lock(context.Context, string, time.Duration) (func(), bool, error) {
	return func() {}, false, nil
}
