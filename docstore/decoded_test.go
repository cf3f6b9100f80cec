package docstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/testkit"
)

type named struct {
	Name string `json:"name"`
}

// A Decoded list sees every write another process makes (a new document, a changed one, a
// deleted one) on its next read, and reads the body of no document it already decoded at
// its latest version.
func TestDecodedReadsOnlyWhatChangedAndSeesEveryWrite(t *testing.T) {
	db := testkit.ClickHouse(t)
	var bodies atomic.Int64
	db.Observe = func(st chstore.Statement) {
		if st.Name == "docstore.bodies" || st.Name == "docstore.list" {
			bodies.Add(1)
		}
	}
	mine := docstore.New(db, docstore.NoCache{}, time.Now)
	other := docstore.New(db, docstore.NoCache{}, time.Now) // another kwhouse process
	decoded := docstore.NewDecoded(mine, "location", func(d docstore.Doc) (named, error) {
		var n named
		err := json.Unmarshal(d.Body, &n)
		return n, err
	})
	scope := kwhouse.Scope{AccountID: "acc_decoded"}
	write := func(id, name string, deleted bool) {
		t.Helper()
		b, _ := json.Marshal(named{name})
		d := docstore.Doc{Kind: "location", ID: id, Scope: scope, CreatedUS: time.Now().UnixMicro(), Body: b, Deleted: deleted}
		if err := other.Write(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	names := func(wantBodyReads int64) []string {
		t.Helper()
		before := bodies.Load()
		all, err := decoded.All(t.Context(), scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := bodies.Load() - before; got != wantBodyReads {
			t.Errorf("%d reads of bodies, want %d", got, wantBodyReads)
		}
		var out []string
		for _, n := range all {
			out = append(out, n.Name)
		}
		return out
	}
	a, b := kwhouse.NewID(kwhouse.PrefixLocation), kwhouse.NewID(kwhouse.PrefixLocation)
	write(a, "a1", false)
	write(b, "b1", false)
	if got := names(1); !slices.Equal(got, []string{"b1", "a1"}) { // newest first
		t.Fatalf("first read %v", got)
	}
	if got := names(0); !slices.Equal(got, []string{"b1", "a1"}) {
		t.Errorf("read again %v", got)
	}
	write(a, "a2", false)
	if got := names(1); !slices.Equal(got, []string{"b1", "a2"}) {
		t.Errorf("after a change elsewhere %v", got)
	}
	write(b, "b1", true)
	if got := names(0); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("after a delete elsewhere %v", got)
	}
}

// A process's first read of many documents (decoded side by side) gives each document its
// own value, newest first, and a document that does not decode fails the read.
func TestDecodedFirstReadOfManyDocuments(t *testing.T) {
	db := testkit.ClickHouse(t)
	store := docstore.New(db, docstore.NoCache{}, time.Now)
	scope := kwhouse.Scope{AccountID: "acc_decoded_many"}
	const n = 1000
	docs := make([]docstore.Doc, n)
	start := time.Now().UnixMicro()
	for i := range docs {
		b, _ := json.Marshal(named{fmt.Sprint(i)})
		docs[i] = docstore.Doc{Kind: "location", ID: kwhouse.NewID(kwhouse.PrefixLocation), Scope: scope, CreatedUS: start + int64(i), Body: b}
	}
	if err := store.Write(t.Context(), docs...); err != nil {
		t.Fatal(err)
	}
	decode := func(d docstore.Doc) (named, error) {
		var v named
		err := json.Unmarshal(d.Body, &v)
		return v, err
	}
	all, err := docstore.NewDecoded(store, "location", decode).AllVersioned(t.Context(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("%d documents, want %d", len(all), n)
	}
	for i, v := range all {
		want := docs[n-1-i] // newest first
		if v.ID != want.ID || v.Value.Name != fmt.Sprint(n-1-i) {
			t.Fatalf("document %d: %s %q, want %s %q", i, v.ID, v.Value.Name, want.ID, fmt.Sprint(n-1-i))
		}
	}
	bad := docs[n/2]
	failing := func(d docstore.Doc) (named, error) {
		if d.ID == bad.ID {
			return named{}, fmt.Errorf("not a location")
		}
		return decode(d)
	}
	if _, err := docstore.NewDecoded(store, "location", failing).All(t.Context(), scope); err == nil {
		t.Error("a document that does not decode was left out without an error")
	}
}
