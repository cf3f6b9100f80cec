package httpapi_test

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
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

func randomKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "sk_test_" + hex.EncodeToString(b[:])
}

// fromSource sends a request from another loopback address (the whole of 127.0.0.0/8 is
// this machine's), as a second client would.
func fromSource(t *testing.T, api *apitest.API, ip, method, path, auth string) int {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	req, err := http.NewRequest(method, api.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s from %s: %v", method, path, ip, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// A script guessing keys from one address: past limits.auth_failure_burst failures it gets
// 429 with Retry-After and its guesses stop reaching ClickHouse; other addresses, and keys
// the process already knows, are served as before.
func TestFailedAuthenticationsAreLimitedPerSource(t *testing.T) {
	lookups := &statementCounter{name: "accounts.scope_of_key"}
	opt := withLimits(config.Limits{AuthFailuresPerMinute: 60, AuthFailureBurst: 20})
	opt.Observe = lookups.observe
	api := apitest.Start(t, opt)
	acc := api.NewAccount("victim")
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 200 {
		t.Fatalf("the account's own request: %d", r.Status)
	}

	before := lookups.n.Load()
	refused, limited := 0, 0
	var last apitest.Response
	for i := 0; i < 500; i++ {
		last = api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: basic(acc.ID, randomKey())})
		switch last.Status {
		case 403:
			if limited > 0 {
				t.Fatalf("attempt %d: 403 after %d answers of 429", i, limited)
			}
			refused++
		case 429:
			limited++
		default:
			t.Fatalf("attempt %d: %d %s", i, last.Status, last.Body)
		}
	}
	m := last.Map(t)
	retry, _ := strconv.Atoi(last.Header.Get("Retry-After"))
	if refused < 20 || refused > 25 || m["type"] != "rate_limit" || m["code"] != "rate_limited" || retry < 1 {
		t.Errorf("%d answered 403 before 429 (want the burst of 20); last: %d Retry-After %q %s", refused, last.Status, last.Header.Get("Retry-After"), last.Body)
	}
	if n := lookups.n.Load() - before; n > int64(refused)+1 {
		t.Errorf("500 guesses ran %d key lookups in ClickHouse, want at most %d", n, refused+1)
	}
	// Unknown bearer keys from the same address are refused the same way, without lookups.
	before = lookups.n.Load()
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: "Bearer " + randomKey()}); r.Status != 429 {
		t.Errorf("an unknown key from the limited address: %d, want 429", r.Status)
	}
	if n := lookups.n.Load() - before; n != 0 {
		t.Errorf("a limited address's guess ran %d lookups", n)
	}
	// The account's key, known to the process, still works from there.
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 200 {
		t.Errorf("the account's key from the limited address: %d, want 200", r.Status)
	}
	// Another address is not limited: a wrong key is 403, the right pair logs in.
	if st := fromSource(t, api, "127.0.0.2", "GET", "/login", basic(acc.ID, randomKey())); st != 403 {
		t.Errorf("a wrong key from another address: %d, want 403", st)
	}
	if st := fromSource(t, api, "127.0.0.2", "GET", "/login", basic(acc.ID, acc.LiveKey)); st != 200 {
		t.Errorf("login from another address: %d, want 200", st)
	}
	if got := metric(t, api, `kwhouse_requests_limited_total{reason="auth_failures",route="/login"}`); got == "" {
		t.Error("no auth_failures series in /metrics")
	}
}

// An unknown key is looked up in ClickHouse once; repeating it is answered from memory
// (auth.unknown_key_ttl).
func TestUnknownKeyIsLookedUpOnce(t *testing.T) {
	lookups := &statementCounter{name: "accounts.scope_of_key"}
	api := apitest.Start(t, apitest.Options{Observe: lookups.observe})
	key := randomKey()
	before := lookups.n.Load()
	for i := 0; i < 3; i++ {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: "Bearer " + key}); r.Status != 403 {
			t.Fatalf("unknown key, attempt %d: %d %s", i, r.Status, r.Body)
		}
	}
	if n := lookups.n.Load() - before; n != 1 {
		t.Errorf("3 attempts with one unknown key ran %d lookups, want 1", n)
	}
	// A key created afterwards is found at once: it was never looked up before.
	acc := api.NewAccount("new")
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 200 {
		t.Errorf("a new account's key: %d", r.Status)
	}
}

// Redis down: the failed-authentication limit lets attempts through (fail open, counted),
// as every rate does; nothing answers 5xx.
func TestAuthFailureLimitFailsOpenWithoutRedis(t *testing.T) {
	api := apitest.Start(t, withLimits(config.Limits{AuthFailuresPerMinute: 1, AuthFailureBurst: 1}))
	acc := api.NewAccount("a")
	api.Redis.Down()
	for i := 0; i < 5; i++ {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: basic(acc.ID, randomKey())}); r.Status != 403 {
			t.Fatalf("wrong key %d with Redis down: %d %s, want 403", i, r.Status, r.Body)
		}
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/login", Auth: basic(acc.ID, acc.TestKey)}); r.Status != 200 {
		t.Errorf("login with Redis down: %d %s", r.Status, r.Body)
	}
	if got := metric(t, api, "kwhouse_rate_limit_errors_total"); got == "" || strings.HasSuffix(got, " 0") {
		t.Errorf("metric %q: want the unchecked failures counted", got)
	}
}
