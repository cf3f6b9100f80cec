package httpapi_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/httpapi"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestOpenAPIDocumentCoversEveryRoute(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	r := api.Do(apitest.Request{Method: "GET", Path: "/openapi.json"})
	if r.Status != 200 {
		t.Fatalf("GET /openapi.json: %d", r.Status)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	param := regexp.MustCompile(`:(\w+)`)
	routed := map[string]bool{}
	for _, route := range api.App.API.Routes() {
		path := param.ReplaceAllString(route.Path, "{$1}")
		routed[strings.ToLower(route.Method)+" "+path] = true
		if _, ok := doc.Paths[path][strings.ToLower(route.Method)]; !ok {
			t.Errorf("route %s %s is not in the OpenAPI document", route.Method, path)
		}
	}
	// And the other way: every documented operation is served.
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "patch", "delete":
				if !routed[method+" "+path] {
					t.Errorf("the OpenAPI document has %s %s, which no route serves", strings.ToUpper(method), path)
				}
			}
		}
	}
	if _, err := httpapi.OpenAPI(); err != nil {
		t.Fatalf("document does not validate: %v", err)
	}
}

func TestMetricsCountRequestsByRouteAndStatus(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()})
	api.Do(apitest.Request{Method: "GET", Path: "/customers/cus_000000000000000000000000", Auth: acc.Test()})
	r := api.Do(apitest.Request{Method: "GET", Path: "/metrics"})
	body := string(r.Body)
	for _, want := range []string{
		`kwhouse_http_requests_total{method="GET",route="/customers",status="200"} 1`,
		`kwhouse_http_requests_total{method="GET",route="/customers/:id",status="404"} 1`,
		`kwhouse_http_request_duration_seconds_bucket{method="GET",route="/customers"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestHealthAndReadiness(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	if r := api.Do(apitest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
		t.Errorf("healthz %d", r.Status)
	}
	r := api.Do(apitest.Request{Method: "GET", Path: "/readyz"})
	if m := r.Map(t); r.Status != 200 || m["status"] != "ok" {
		t.Errorf("readyz %d %v", r.Status, m)
	}
}
