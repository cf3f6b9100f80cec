package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func withLimits(l config.Limits) apitest.Options {
	return apitest.Options{Configure: func(c *config.Config) {
		l.Queries, l.AccountQueries, l.QueryWait = max(l.Queries, 8), max(l.AccountQueries, 4), max(l.QueryWait, time.Second)
		c.Limits = l
	}}
}

func metric(t *testing.T, api *apitest.API, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(string(api.Do(apitest.Request{Method: "GET", Path: "/metrics"}).Body), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// An account over its request rate gets 429 with Retry-After and the error body; another
// account is not affected.
func TestRequestRateGives429WithRetryAfter(t *testing.T) {
	api := apitest.Start(t, withLimits(config.Limits{RequestsPerSecond: 1, RequestBurst: 3}))
	a, b := api.NewAccount("busy"), api.NewAccount("quiet")
	for i := 0; i < 3; i++ {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: a.Test()}); r.Status != 200 {
			t.Fatalf("request %d within the burst: %d %s", i, r.Status, r.Body)
		}
	}
	r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: a.Test()})
	m := r.Map(t)
	retry, _ := strconv.Atoi(r.Header.Get("Retry-After"))
	if r.Status != 429 || m["type"] != "rate_limit" || m["code"] != "rate_limited" || retry < 1 {
		t.Fatalf("over the rate: %d Retry-After %q %s, want 429 rate_limit with Retry-After ≥ 1", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: b.Test()}); r.Status != 200 {
		t.Errorf("another account: %d, want 200", r.Status)
	}
	// The live mode of the same account has a bucket of its own.
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: a.Live()}); r.Status != 200 {
		t.Errorf("the account's live mode: %d, want 200", r.Status)
	}
	want := `kwhouse_requests_limited_total{reason="rate_limit",route="/customers"} 1`
	if got := metric(t, api, `kwhouse_requests_limited_total{`); got != want {
		t.Errorf("metric %q, want %q", got, want)
	}
	// After the wait it is served again.
	time.Sleep(time.Duration(retry) * time.Second)
	if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: a.Test()}); r.Status != 200 {
		t.Errorf("after Retry-After: %d", r.Status)
	}
}

// Meter pushes are charged by records: over the rate the whole push is refused (429) and
// nothing of it is stored.
func TestRecordRateRefusesWholePush(t *testing.T) {
	api := apitest.Start(t, withLimits(config.Limits{RecordsPerSecond: 1, RecordBurst: 10}))
	e := &meterEnv{api: api, acc: api.NewAccount("fleet")}
	e.loc = api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: e.acc.Test(),
		Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	push := func(n int, day string) apitest.Response {
		var recs []any
		for i := 0; i < n; i++ {
			s := mustTime(day + "T00:00:00Z").Add(time.Duration(i) * 30 * time.Minute)
			recs = append(recs, rec(e.loc, s.Format(rfc), s.Add(30*time.Minute).Format(rfc), "WH", 1, nil))
		}
		return e.put(t, recs, nil)
	}
	if r := push(8, "2024-01-01"); r.Status != 200 {
		t.Fatalf("8 of a burst of 10: %d %s", r.Status, r.Body)
	}
	r := push(8, "2024-01-02")
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("8 more: %d %s, want 429 with Retry-After", r.Status, r.Body)
	}
	if n, _ := e.stored(t); n != 8 {
		t.Errorf("stored %d records, want the first push's 8 only", n)
	}
	if got := metric(t, api, `kwhouse_requests_limited_total{reason="records_limit"`); got == "" {
		t.Error("no records_limit series in /metrics")
	}
}

// GET /metrics needs no credentials, so it names no account unless the operator turns
// metrics.account_labels on.
func TestMetricsNameAccountsOnlyWhenTurnedOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		opt := withLimits(config.Limits{RequestsPerSecond: 1, RequestBurst: 1})
		limitsOnly := opt.Configure
		opt.Configure = func(c *config.Config) { limitsOnly(c); c.Metrics.AccountLabels = on }
		api := apitest.Start(t, opt)
		acc := api.NewAccount("tenant")
		for i := 0; i < 2; i++ {
			api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()})
		}
		body := string(api.Do(apitest.Request{Method: "GET", Path: "/metrics"}).Body)
		series := `kwhouse_requests_limited_total{reason="rate_limit",route="/customers"} 1`
		if on {
			series = `kwhouse_requests_limited_total{account="` + acc.ID + `",reason="rate_limit",route="/customers"} 1`
		}
		if !strings.Contains(body, series) {
			t.Errorf("account_labels %v: /metrics lacks %s", on, series)
		}
		if named := strings.Contains(body, acc.ID) || strings.Contains(body, `account="`); named != on {
			t.Errorf("account_labels %v: /metrics names the account: %v", on, named)
		}
	}
}

// Two processes share one bucket through Redis.
func TestLimitsAreSharedByProcesses(t *testing.T) {
	opt := withLimits(config.Limits{RequestsPerSecond: 1, RequestBurst: 3})
	a := apitest.Start(t, opt)
	opt.ShareWith = a
	b := apitest.Start(t, opt)
	acc := a.NewAccount("shared")
	for i, api := range []*apitest.API{a, a, b} {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	if r := b.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 429 {
		t.Errorf("the 4th request, through the other process: %d, want 429", r.Status)
	}
}

// Redis down: limits let everything through (counted), nothing else breaks.
func TestLimitsFailOpenWithoutRedis(t *testing.T) {
	api := apitest.Start(t, withLimits(config.Limits{RequestsPerSecond: 1, RequestBurst: 1}))
	acc := api.NewAccount("a")
	api.Redis.Down()
	for i := 0; i < 5; i++ {
		if r := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}); r.Status != 200 {
			t.Fatalf("request %d with Redis down: %d %s", i, r.Status, r.Body)
		}
	}
	if got := metric(t, api, "kwhouse_rate_limit_errors_total"); got == "" || strings.HasSuffix(got, " 0") {
		t.Errorf("metric %q: want the unchecked requests counted", got)
	}
}

// Heavy cost queries: with the process's one turn taken and no queue, a cost query is
// shed (503, Retry-After); once the turn is free it is served.
func TestCostQueriesAreShedWhenFullServedWhenFreed(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) {
		c.Limits = config.Limits{Queries: 1, AccountQueries: 1, QueryQueue: 0, QueryWait: time.Second}
	}})
	acc := api.NewAccount("dashboards")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	cost := func() apitest.Response {
		return api.Do(apitest.Request{Method: "POST", Path: "/costs/interval/" + loc, Auth: acc.Test(),
			Body: map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-02T00:00:00Z"}})
	}
	release, err := api.App.Limits.EnterQuery(context.Background(), "acc_other")
	if err != nil {
		t.Fatal(err)
	}
	r := cost()
	if r.Status != 503 || r.Map(t)["code"] != "too_busy" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("cost with the only turn taken: %d %s, want 503 too_busy with Retry-After", r.Status, r.Body)
	}
	// Ingest and other requests keep their own capacity.
	if r := api.Do(apitest.Request{Method: "GET", Path: "/locations/" + loc, Auth: acc.Test()}); r.Status != 200 {
		t.Errorf("a read beside a full query queue: %d", r.Status)
	}
	release()
	if r := cost(); r.Status != 200 {
		t.Errorf("cost after the turn was freed: %d %s", r.Status, r.Body)
	}
	if got := metric(t, api, `kwhouse_requests_limited_total{reason="shed",route="/costs/interval/:id"} 1`); got == "" {
		t.Error("no shed series in /metrics")
	}
}
