package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestAuthRequiresCredentialsOnEveryResourceRoute(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	for _, path := range []string{"/customers", "/locations", "/devices", "/events"} {
		for _, auth := range []string{"", "Bearer ", "Bearer sk_test_0000", "Bearer not.a.jwt", "Basic Zm9vOmJhcg=="} {
			r := api.Do(apitest.Request{Method: "GET", Path: path, Auth: auth})
			if r.Status != http.StatusForbidden {
				t.Errorf("GET %s with %q: status %d, want 403", path, auth, r.Status)
			}
		}
	}
}

func TestLoginIssuesTokenThatActsInTheKeysMode(t *testing.T) {
	clock := &testkit.Clock{}
	api := apitest.Start(t, apitest.Options{Now: clock.Now})
	acc := api.NewAccount("acme")

	for _, tc := range []struct {
		key  string
		live bool
	}{{acc.TestKey, false}, {acc.LiveKey, true}} {
		r := api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: basic(acc.ID, tc.key)})
		if r.Status != 200 {
			t.Fatalf("login: %d %s", r.Status, r.Body)
		}
		var tok struct {
			BearerToken string `json:"bearer_token"`
			ExpiresIn   int    `json:"expires_in"`
			LiveMode    bool   `json:"live_mode"`
		}
		r.JSON(t, &tok)
		if tok.LiveMode != tc.live || tok.ExpiresIn != 3600 || tok.BearerToken == "" {
			t.Fatalf("token %+v, want live_mode %v and expires_in 3600", tok, tc.live)
		}
		cu := api.Do(apitest.Request{Method: "POST", Path: "/customers", Auth: "Bearer " + tok.BearerToken, Body: map[string]any{}}).Map(t)
		if cu["live_mode"] != tc.live {
			t.Errorf("customer created with a token of the %v key has live_mode %v", tc.live, cu["live_mode"])
		}
	}

	r := api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: basic(acc.ID, acc.TestKey)})
	token := "Bearer " + r.Map(t)["bearer_token"].(string)
	clock.Advance(time.Hour + time.Second)
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: token}); r.Status != 403 {
		t.Errorf("expired token: status %d, want 403", r.Status)
	}
}

func TestLoginRefusesWrongPairs(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	a, b := api.NewAccount("a"), api.NewAccount("b")
	for name, auth := range map[string]string{
		"no credentials":          "",
		"key of another account":  basic(a.ID, b.TestKey),
		"unknown key":             basic(a.ID, "sk_test_"+"00000000000000000000000000000000"),
		"bearer instead of basic": a.Test(),
	} {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: auth}); r.Status != 403 {
			t.Errorf("%s: status %d, want 403", name, r.Status)
		}
	}
}

func TestAccountsAndModesNeverSeeEachOthersObjects(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	a, b := api.NewAccount("a"), api.NewAccount("b")
	cu := api.Do(apitest.Request{Method: "POST", Path: "/customers", Auth: a.Test(), Body: map[string]any{"reference_id": "shared-ref"}}).Map(t)
	id := cu["id"].(string)

	for name, auth := range map[string]string{"other account": b.Test(), "live mode of same account": a.Live()} {
		for _, req := range []apitest.Request{
			{Method: "GET", Path: "/customers/" + id},
			{Method: "PATCH", Path: "/customers/" + id, Body: map[string]any{"reference_id": "x"}},
			{Method: "DELETE", Path: "/customers/" + id},
		} {
			req.Auth = auth
			if r := api.Do(req); r.Status != 404 {
				t.Errorf("%s: %s %s status %d, want 404", name, req.Method, req.Path, r.Status)
			}
		}
		list := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: auth}).Map(t)
		if n := len(list["data"].([]any)); n != 0 {
			t.Errorf("%s lists %d customers, want 0", name, n)
		}
		events := api.Do(apitest.Request{Method: "GET", Path: "/events?object_id=" + id, Auth: auth}).Map(t)
		if n := len(events["data"].([]any)); n != 0 {
			t.Errorf("%s sees %d events of the customer, want 0", name, n)
		}
		// The same reference_id is free in another scope.
		if r := api.Do(apitest.Request{Method: "POST", Path: "/customers", Auth: auth, Body: map[string]any{"reference_id": "shared-ref"}}); r.Status != 201 {
			t.Errorf("%s: reference_id of another scope refused: %d %s", name, r.Status, r.Body)
		}
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers/" + id, Auth: a.Test()}); r.Status != 200 {
		t.Errorf("owner lost its customer: %d", r.Status)
	}
}

func basic(user, pass string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// A client generated from FlatPeak's document sends the scheme as "bearer" (its security
// scheme's spelling); RFC 7235 makes the scheme case-insensitive.
func TestBearerSchemeInAnyCase(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("acme")
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: scheme + " " + acc.TestKey})
		if r.Status != http.StatusOK {
			t.Errorf("GET /customers with scheme %q: status %d %s, want 200", scheme, r.Status, r.Body)
		}
	}
	for _, auth := range []string{"Bearer" + acc.TestKey, "Basic " + acc.TestKey, "bearer  "} {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: auth}); r.Status != http.StatusForbidden {
			t.Errorf("GET /customers with %q: status %d, want 403", auth, r.Status)
		}
	}
}
