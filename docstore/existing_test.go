package docstore_test

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// fleet writes n location documents, every fifth of another account, and returns each
// id's owner.
func fleet(t *testing.T, store *docstore.Store, mine, other kwhouse.Scope, n int) map[string]kwhouse.Scope {
	t.Helper()
	owner := map[string]kwhouse.Scope{}
	var docs []docstore.Doc
	for i := 0; i < n; i++ {
		id := kwhouse.NewID(kwhouse.PrefixLocation)
		scope := mine
		if i%5 == 0 {
			scope = other
		}
		owner[id] = scope
		docs = append(docs, docstore.Doc{Kind: "location", ID: id, Scope: scope, CreatedUS: time.Now().UnixMicro(), Body: []byte(`{}`)})
	}
	if err := store.Write(t.Context(), docs...); err != nil {
		t.Fatal(err)
	}
	return owner
}

// checkAnswers asks about ask (with repeats and an unknown id) and checks every answer:
// the caller's ids exist, nobody else's do.
func checkAnswers(t *testing.T, store *docstore.Store, mine kwhouse.Scope, owner map[string]kwhouse.Scope, ask []string) {
	t.Helper()
	unknown := kwhouse.NewID(kwhouse.PrefixLocation)
	ok, err := store.ExistingIDs(t.Context(), mine, "location", append(append(ask, ask...), unknown))
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for _, id := range ask {
		if ok(id) != (owner[id] == mine) {
			wrong++
		}
	}
	if wrong > 0 || ok(unknown) {
		t.Errorf("%d of %d ids answered wrongly; unknown id exists: %v", wrong, len(ask), ok(unknown))
	}
}

// TestExistingIDsOfAFleetsFirstPush: a push naming most of a scope's locations is
// answered from one read of them all.
func TestExistingIDsOfAFleetsFirstPush(t *testing.T) {
	store := docstore.New(testkit.ClickHouse(t), docstore.NoCache{}, time.Now)
	mine, other := kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}, kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}
	owner := fleet(t, store, mine, other, 2500)
	var ask []string
	for id := range owner {
		ask = append(ask, id)
	}
	checkAnswers(t, store, mine, owner, ask)
}

// TestExistingIDsOfAFewInALargeScope: a push naming a small share of a large scope's
// locations is answered by lists of ids, more than one query's worth.
func TestExistingIDsOfAFewInALargeScope(t *testing.T) {
	store := docstore.New(testkit.ClickHouse(t), docstore.NoCache{}, time.Now)
	mine, other := kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}, kwhouse.Scope{AccountID: kwhouse.NewID("acc_")}
	owner := fleet(t, store, mine, other, 14000) // 11,200 of mine: over 10 × the 1,100 asked
	var ask []string
	for id := range owner {
		if len(ask) == 1100 {
			break
		}
		ask = append(ask, id)
	}
	checkAnswers(t, store, mine, owner, ask)
}
