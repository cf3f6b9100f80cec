package docstore_test

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/rediscache"
	"github.com/kwhouse/kwhouse/testkit"
)

// A reader that read a document just before it was deleted (or from a replica that had
// not seen the delete yet) caches what it read with SetNX after the delete: the deleted
// document must stay deleted.
func TestDeleteIsNotUndoneByALateCacheFill(t *testing.T) {
	prefix := testkit.RandomName("kwtest:") + ":"
	cache := rediscache.New(testkit.RedisConfig(t), prefix, testkit.Logger())
	t.Cleanup(func() { cache.Close() })
	store := docstore.New(testkit.ClickHouse(t), cache, time.Now)
	scope := kwhouse.Scope{AccountID: "acc_cache", LiveMode: false}
	d := docstore.Doc{Kind: "location", ID: kwhouse.NewID(kwhouse.PrefixLocation), Scope: scope,
		CreatedUS: time.Now().UnixMicro(), Body: []byte(`{}`)}
	if err := store.Write(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	before, ok := cache.Get(t.Context(), "doc:"+d.ID) // what the late reader read
	if !ok {
		t.Fatal("the written document is not cached")
	}
	d.Deleted = true
	if err := store.Write(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	cache.SetNX(t.Context(), "doc:"+d.ID, before) // the late reader's fill
	if _, err := store.Get(t.Context(), scope, "location", d.ID); kwhouse.KindOf(err) != kwhouse.KindNotFound {
		t.Errorf("get after the delete and a late fill: %v, want not found", err)
	}
}
