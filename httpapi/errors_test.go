package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestErrorsHaveOneShapeEverywhere(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	big := `{"reference_id":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, tc := range []struct {
		name   string
		req    apitest.Request
		status int
		code   string
		param  string
	}{
		{"unknown route", apitest.Request{Method: "GET", Path: "/nope", Auth: acc.Test()}, 404, "route_not_found", ""},
		{"unknown route without auth", apitest.Request{Method: "GET", Path: "/nope"}, 404, "route_not_found", ""},
		{"wrong method", apitest.Request{Method: "PUT", Path: "/customers", Auth: acc.Test()}, 405, "method_not_allowed", ""},
		{"malformed JSON", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `{"reference_id":`}, 400, "invalid_json", ""},
		{"not an object", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `[1,2]`}, 400, "invalid_type", ""},
		{"empty body", apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: ``}, 400, "invalid_json", ""},
		{"null body", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `null`}, 400, "invalid_json", ""},
		{"trailing data", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `{} {}`}, 400, "invalid_json", ""},
		{"wrong field type", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `{"reference_id":5}`}, 400, "invalid_type", "reference_id"},
		{"wrong nested type", apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(), Body: `{"geo_location":{"lat":"north"}}`}, 400, "invalid_type", "geo_location.lat"},
		{"unknown field", apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: `{"reference_id":"a","colour":"red"}`}, 400, "unknown_field", "colour"},
		{"unknown nested field", apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(), Body: `{"postal_address":{"zip":"1"}}`}, 400, "unknown_field", "postal_address.zip"},
		{"duplicate field", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: `{"reference_id":"a","reference_id":"b"}`}, 400, "invalid_json", ""},
		{"body too large", apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test(), Body: big}, 413, "body_too_large", ""},
		{"id of another kind", apitest.Request{Method: "GET", Path: "/customers/loc_000000000000000000000000", Auth: acc.Test()}, 404, "resource_missing", "id"},
		{"malformed id", apitest.Request{Method: "GET", Path: "/devices/dev_x", Auth: acc.Test()}, 404, "resource_missing", "id"},
	} {
		r := api.Do(tc.req)
		var e map[string]any
		r.JSON(t, &e)
		if r.Status != tc.status || e["code"] != tc.code || (tc.param != "" && e["param"] != tc.param) {
			t.Errorf("%s: %d %v param=%v, want %d %s param=%q", tc.name, r.Status, e["code"], e["param"], tc.status, tc.code, tc.param)
		}
		if e["object"] != "error" || e["type"] != "invalid_request" || e["request_id"] == "" || e["message"] == "" {
			t.Errorf("%s: error body %v", tc.name, e)
		}
		if r.Header.Get("X-Request-Id") != e["request_id"] {
			t.Errorf("%s: X-Request-Id %q differs from body %v", tc.name, r.Header.Get("X-Request-Id"), e["request_id"])
		}
	}
	if list := api.Do(apitest.Request{Method: "GET", Path: "/customers", Auth: acc.Test()}).Map(t); len(list["data"].([]any)) != 0 {
		t.Errorf("refused requests stored customers: %v", list["data"])
	}
}
