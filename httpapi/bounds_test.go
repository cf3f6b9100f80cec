package httpapi_test

import (
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A value given out of range is refused, never read as if it had been left out: fleet
// limit 0, a body of null, a window bound in year 1.
func TestOutOfRangeValuesAreNotReadAsAbsent(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("bounds")
	do := api.As(acc.Test())
	loc := do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	window := map[string]any{"start_time": fleetFrom, "end_time": fleetTo}

	for _, tc := range []struct {
		name, method, path string
		body               any
		code, param        string
	}{
		{"fleet limit 0", "POST", "/costs/fleet", with(window, "limit", 0), "invalid_value", "limit"},
		{"fleet year-1 start", "POST", "/costs/fleet", with(window, "start_time", "0001-01-01T00:00:00Z"), "invalid_value", "start_time"},
		{"fleet year-1 end", "POST", "/costs/fleet", with(window, "end_time", "0001-01-01T00:00:00Z"), "invalid_value", "end_time"},
		{"interval year-1 start", "POST", "/costs/interval/" + loc, with(window, "start_time", "0001-01-01T00:00:00Z"), "invalid_value", "start_time"},
		{"interval year-1 noon", "POST", "/costs/interval/" + loc, with(window, "start_time", "0001-01-01T12:00:00Z"), "invalid_value", "start_time"},
		{"interval year 2200", "POST", "/costs/interval/" + loc, with(window, "end_time", "2200-01-01T00:00:00Z"), "invalid_value", "end_time"},
		{"rates year-1 start", "GET", "/tariffs/rates/" + loc + "?start_time=0001-01-01T00:00:00Z&end_time=2024-01-02T00:00:00Z", nil, "invalid_value", "start_time"},
		{"customer null body", "POST", "/customers", "null", "invalid_json", ""},
		{"customer null body, spaced", "POST", "/customers", " null\n", "invalid_json", ""},
		{"location null body", "POST", "/locations", "null", "invalid_json", ""},
	} {
		r := do(tc.method, tc.path, tc.body)
		m := r.Map(t)
		if r.Status != 400 || m["code"] != tc.code || (m["param"] != tc.param && !(tc.param == "" && m["param"] == nil)) {
			t.Errorf("%s: %d %s, want 400 %s param %q", tc.name, r.Status, r.Body, tc.code, tc.param)
		}
	}

	// Left out, the same fields take their defaults.
	if r := do("POST", "/costs/fleet", window); r.Status != 200 {
		t.Errorf("fleet without limit: %d %s", r.Status, r.Body)
	}
	// POST /customers has no required field: an empty body (no body at all) creates one.
	for _, body := range []any{"", map[string]any{}} {
		r := do("POST", "/customers", body)
		m := r.Map(t)
		if r.Status != 201 || m["object"] != "customer" || m["id"] == nil || m["reference_id"] != nil {
			t.Errorf("POST /customers with body %#v: %d %s, want 201 and a customer without fields", body, r.Status, r.Body)
		}
	}
	r := api.Do(apitest.Request{Method: "POST", Path: "/customers", Auth: acc.Test()})
	if r.Status != 201 {
		t.Errorf("POST /customers without any body: %d %s, want 201", r.Status, r.Body)
	}
	list := do("GET", "/customers", nil).Map(t)["data"].([]any)
	if len(list) != 3 {
		t.Errorf("%d customers, want the 3 created (nothing from the refused null bodies)", len(list))
	}
}

// with returns a copy of m with key set to v.
func with(m map[string]any, key string, v any) map[string]any {
	out := map[string]any{key: v}
	for k, x := range m {
		if k != key {
			out[k] = x
		}
	}
	return out
}
