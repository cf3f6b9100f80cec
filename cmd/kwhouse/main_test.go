package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/chstore"
)

func TestAccountsCreateJSONPrintsWorkingKeys(t *testing.T) {
	db := useTestDB(t)
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"accounts", "create", "--name", "acme", "--json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		AccountID string `json:"account_id"`
		TestKey   string `json:"test_key"`
		LiveKey   string `json:"live_key"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if !strings.HasPrefix(got.AccountID, "acc_") || !strings.HasPrefix(got.TestKey, "sk_test_") || !strings.HasPrefix(got.LiveKey, "sk_live_") {
		t.Fatalf("output %+v", got)
	}
	store := accounts.NewStore(db, nil)
	sc, err := store.Login(context.Background(), got.AccountID, got.LiveKey)
	if err != nil || !sc.LiveMode || sc.AccountID != got.AccountID {
		t.Fatalf("live key does not log in: %+v %v", sc, err)
	}
	var n uint64
	if err := db.QueryRow(context.Background(), chstore.Tool("SELECT count() FROM api_keys WHERE key_hash = ?"), got.TestKey).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a key is stored in clear (%d rows, %v)", n, err)
	}

	out.Reset()
	root = newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"accounts", "list"})
	if err := root.ExecuteContext(context.Background()); err != nil || !strings.Contains(out.String(), got.AccountID) {
		t.Fatalf("accounts list: %v\n%s", err, out.String())
	}
}
