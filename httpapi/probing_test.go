package httpapi_test

import (
	"sync/atomic"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// statementCounter counts the statements of one name the service runs.
type statementCounter struct {
	name string
	n    atomic.Int64
}

func (c *statementCounter) observe(st chstore.Statement) {
	if st.Name == c.name {
		c.n.Add(1)
	}
}

// A 404 for another tenant's id, cached in Redis, does the same work as one for an id
// nobody has: the cached document of another scope is not an answer, the caller's own
// lookup runs. (Timing is not asserted; the path is.)
func TestAnotherTenantsCachedIDLooksUpAsAnUnknownOne(t *testing.T) {
	gets := &statementCounter{name: "docstore.get"}
	api := apitest.Start(t, apitest.Options{Observe: gets.observe})
	owner, prober := api.NewAccount("owner"), api.NewAccount("prober")
	id := api.As(owner.Test())("POST", "/customers", map[string]any{"reference_id": "c1"}).Map(t)["id"].(string)
	if r := api.As(owner.Test())("GET", "/customers/"+id, nil); r.Status != 200 {
		t.Fatalf("owner's read: %d %s", r.Status, r.Body)
	}
	// The owner's document is in the cache now: its next read runs no statement.
	before := gets.n.Load()
	api.As(owner.Test())("GET", "/customers/"+id, nil)
	if n := gets.n.Load() - before; n != 0 {
		t.Fatalf("owner's cached read ran %d lookups, want 0 (the document should be cached)", n)
	}

	lookups := func(path string) int64 {
		t.Helper()
		before := gets.n.Load()
		r := api.As(prober.Test())("GET", path, nil)
		if m := r.Map(t); r.Status != 404 || m["code"] != "resource_missing" {
			t.Fatalf("GET %s by another account: %d %s, want 404 resource_missing", path, r.Status, r.Body)
		}
		return gets.n.Load() - before
	}
	unknown := lookups("/customers/cus_000000000000000000000000")
	foreign := lookups("/customers/" + id)
	if unknown != 1 || foreign != unknown {
		t.Errorf("lookups: %d for another tenant's cached id, %d for an unknown id; want 1 and 1", foreign, unknown)
	}
	// The owner's cached copy is untouched by the prober's reads.
	if r := api.As(owner.Test())("GET", "/customers/"+id, nil); r.Status != 200 || r.Map(t)["reference_id"] != "c1" {
		t.Errorf("owner's read after probing: %d %s", r.Status, r.Body)
	}
}
