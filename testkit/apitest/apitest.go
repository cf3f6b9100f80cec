// Package apitest starts a real kwhouse for API tests: its own database, its own Redis
// key prefix, its stores behind proxies a test can take down, and every response checked
// against the OpenAPI document.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/httpapi"
	"github.com/kwhouse/kwhouse/testkit"
)

// API is a running kwhouse on a free port with its own database and Redis prefix, its
// stores reached through proxies the test can take down.
type API struct {
	t          testing.TB
	URL        string
	App        *app.App
	ClickHouse testkit.Proxies // one per node
	Redis      *testkit.Proxy
	router     routers.Router
	client     *http.Client
	database   string
	prefix     string
}

// RedisPrefix is the service's Redis key prefix (redis.key_prefix): a tool run beside it,
// such as kwhouse import, must share it.
func (a *API) RedisPrefix() string { return a.prefix }

// Database is the service's ClickHouse database.
func (a *API) Database() string { return a.database }

// Options adjust Start.
type Options struct {
	Now       func() time.Time
	Configure func(*config.Config)
	// DB and NoCache are passed to app.Options (the conformance suite runs on chDB; in
	// embedded mode, testkit.Embedded, DB is the test's database of the chDB session).
	DB      *chstore.DB
	NoCache bool
	// ShareWith, when set, runs this service on the other's ClickHouse database and Redis
	// key prefix: two kwhouse processes of one deployment. The other drops the database.
	ShareWith *API
	// ClickHouse, when set, adjusts the test database's connection before the service
	// starts (the cluster suite points one service at a single node).
	ClickHouse func(*config.ClickHouse)
	// Observe, when set, sees every statement the service runs (chstore.DB.Observe), from
	// before the service's first query.
	Observe func(chstore.Statement)
}

// Start starts the service as `kwhouse serve` would and stops it when the test ends.
func Start(t testing.TB, opt Options) *API {
	t.Helper()
	ch := testkit.ClickHouseConfig(t)
	rc := testkit.RedisConfig(t)
	prefix := testkit.RandomName("kwtest:") + ":"
	if opt.ShareWith != nil {
		ch.Database, prefix = opt.ShareWith.database, opt.ShareWith.prefix
	}
	if opt.ClickHouse != nil {
		opt.ClickHouse(&ch)
	}
	if testkit.Embedded() && opt.DB == nil {
		// The app migrates it; the ClickHouse proxies below then lead nowhere.
		opt.DB = testkit.EmbeddedDB(t, ch)
	}
	clickhouseAddr := ch.Addr
	chProxy, redisProxy := testkit.NewProxies(t, ch.Addr), testkit.NewProxy(t, rc.Addr)
	ch.Addr, rc.Addr = chProxy.Addr(), redisProxy.Addr()
	ch.DialTimeout = time.Second
	cfg := &config.Config{
		HTTP:       config.HTTP{Addr: "127.0.0.1:0", MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second},
		ClickHouse: ch,
		Redis:      rc,
		Auth: config.Auth{JWTSecret: "test-secret-0123456789abcdef0123456789", TokenTTL: time.Hour,
			UnknownKeyTTL: 30 * time.Second},
		Ingest: config.Ingest{MaxRecordsPerRequest: 10000, MaxBodyBytes: 64 << 20, FlushRows: 100000,
			FlushInterval: 5 * time.Millisecond, Flushers: 2, QueueLength: 64},
		Log:       config.Log{Level: "info", Format: "text"},
		Costs:     config.Costs{PricedBuckets: true, MaxRawItems: 10_000},
		Schedules: config.Schedules{Horizon: 7 * 24 * time.Hour, MaxDevices: 100},
		Connect:   config.Connect{TokenTTL: time.Hour},
		// No rates (0: no limit) unless a test sets them; the query admission of production.
		Limits:   config.Limits{Queries: 8, AccountQueries: 4, QueryQueue: 32, QueryWait: 5 * time.Second},
		Webhooks: config.Defaults().Webhooks,
	}
	// The webhook dispatcher runs only where a test turns it on (its outbox reads and
	// endpoint look-ups would show in the statement counts of the other tests).
	cfg.Webhooks.Dispatch = false
	if opt.Configure != nil {
		opt.Configure(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, testkit.Logger(), app.Options{Now: opt.Now,
		RedisPrefix: prefix, DB: opt.DB, NoCache: opt.NoCache})
	if err != nil {
		cancel()
		t.Fatalf("start app: %v", err)
	}
	if opt.Observe != nil {
		a.DB.Observe = opt.Observe
	}
	// Runs after the service has stopped (cleanups run last-registered first), on a
	// connection of its own: the service's is closed by then and its proxy may be down.
	direct := cfg.ClickHouse
	direct.Addr = clickhouseAddr
	t.Cleanup(func() {
		if opt.ShareWith != nil {
			return
		}
		if opt.DB != nil {
			_ = a.DB.Exec(context.Background(), chstore.Tool(chstore.DropDatabaseSQL(cfg.ClickHouse)))
			return
		}
		DropDatabase(direct)
	})
	addr, err := a.Listen()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = a.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; a.Close() })
	return &API{t: t, URL: "http://" + addr, App: a, ClickHouse: chProxy, Redis: redisProxy,
		router: openAPIRouter(t), client: &http.Client{Timeout: 30 * time.Second}, database: ch.Database, prefix: prefix}
}

// The dashboard's page and files are text the document describes as strings.
func init() {
	for _, ct := range []string{"text/html", "text/javascript", "text/css"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

func openAPIRouter(t testing.TB) routers.Router {
	doc, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil // match any host
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("openapi router: %v", err)
	}
	return r
}

// Response is a finished call.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d body %q: %v", r.Status, r.Body, err)
	}
}

// Map decodes the body into a map.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Request describes a call. Body may be a string (sent as is) or any value (sent as JSON).
type Request struct {
	Method string
	Path   string
	Body   any
	Auth   string // the whole Authorization header value; "" sends none
	Header map[string]string
}

// Do sends req and checks the response against the OpenAPI document.
func (a *API) Do(req Request) Response {
	a.t.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		body = bytes.NewReader(buf)
	}
	hr, err := http.NewRequest(req.Method, a.URL+req.Path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if req.Body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Auth != "" {
		hr.Header.Set("Authorization", req.Auth)
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	res, err := a.client.Do(hr)
	if err != nil {
		a.t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	r := Response{Status: res.StatusCode, Header: res.Header, Body: out}
	a.checkContract(hr, r)
	return r
}

// checkContract fails the test when a response does not match the OpenAPI document.
// Routes the document does not know (unknown paths, wrong methods) must be JSON errors.
func (a *API) checkContract(hr *http.Request, r Response) {
	a.t.Helper()
	route, params, err := a.router.FindRoute(hr)
	if err != nil {
		var e map[string]any
		if json.Unmarshal(r.Body, &e) != nil || e["object"] != "error" {
			a.t.Errorf("%s %s: not in the OpenAPI document and not a JSON error: %d %s", hr.Method, hr.URL.Path, r.Status, r.Body)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		a.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", hr.Method, hr.URL.Path, r.Status, err, r.Body)
	}
	if finding := checkFlatPeak(hr, r); finding != "" {
		a.t.Errorf("%s %s → %d does not match FlatPeak's OpenAPI document: %s\nbody: %s", hr.Method, hr.URL.Path, r.Status, finding, r.Body)
	}
}

// Account is a created account with its keys.
type Account struct {
	ID      string
	TestKey string
	LiveKey string
}

// Test is the Authorization header of the test key.
func (a Account) Test() string { return "Bearer " + a.TestKey }

// Live is the Authorization header of the live key.
func (a Account) Live() string { return "Bearer " + a.LiveKey }

// NewAccount creates an account as `kwhouse accounts create` does.
func (a *API) NewAccount(name string) Account {
	a.t.Helper()
	c, err := a.App.Accounts.Create(context.Background(), name)
	if err != nil {
		a.t.Fatalf("create account: %v", err)
	}
	return Account{ID: c.AccountID, TestKey: c.TestKey, LiveKey: c.LiveKey}
}

// As returns a caller that sends every request with the Authorization header auth.
func (a *API) As(auth string) func(method, path string, body any) Response {
	return func(method, path string, body any) Response {
		a.t.Helper()
		return a.Do(Request{Method: method, Path: path, Body: body, Auth: auth})
	}
}

// DropDatabase drops a test database unless KWHOUSE_TEST_KEEP_DB=1.
func DropDatabase(cfg config.ClickHouse) {
	if os.Getenv("KWHOUSE_TEST_KEEP_DB") == "1" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := chstore.Open(ctx, cfg)
	if err != nil {
		return
	}
	defer db.Close()
	_ = db.Exec(ctx, chstore.Tool(chstore.DropDatabaseSQL(cfg)))
}
