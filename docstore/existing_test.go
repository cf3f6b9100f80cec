package docstore_test

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// TestExistingIDsAnswersForThousandsOfIDs: a fleet's first push names more ids than one
// query takes; every one is answered, the caller's and nobody else's.
func TestExistingIDsAnswersForThousandsOfIDs(t *testing.T) {
	db := testkit.ClickHouse(t)
	store := docstore.New(db, docstore.NoCache{}, time.Now)
	mine := kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}
	other := kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}
	var docs []docstore.Doc
	var ask []string
	owner := map[string]kwhouse.Scope{}
	for i := 0; i < 2500; i++ {
		id := kwhouse.NewID(kwhouse.PrefixLocation)
		scope := mine
		if i%5 == 0 {
			scope = other
		}
		owner[id] = scope
		docs = append(docs, docstore.Doc{Kind: "location", ID: id, Scope: scope, CreatedUS: time.Now().UnixMicro(), Body: []byte(`{}`)})
		ask = append(ask, id, id) // repeats are allowed
	}
	unknown := kwhouse.NewID(kwhouse.PrefixLocation)
	ask = append(ask, unknown)
	if err := store.Write(t.Context(), docs...); err != nil {
		t.Fatal(err)
	}
	ok, err := store.ExistingIDs(t.Context(), mine, "location", ask)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for id, scope := range owner {
		if ok(id) != (scope == mine) {
			wrong++
		}
	}
	if wrong > 0 || ok(unknown) {
		t.Errorf("%d of %d ids answered wrongly; unknown id exists: %v", wrong, len(owner), ok(unknown))
	}
}
