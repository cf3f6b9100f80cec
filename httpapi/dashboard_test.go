package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// The dashboard's files are served without credentials (they hold no data), from this
// server only; a name that is not one of them is a JSON 404.
func TestDashboardPageIsServedWithoutCredentials(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	for path, want := range map[string]string{"/dashboard": "text/html", "/dashboard/app.js": "text/javascript",
		"/dashboard/style.css": "text/css"} {
		r := api.Do(apitest.Request{Method: "GET", Path: path})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), want) || len(r.Body) == 0 {
			t.Errorf("GET %s: %d %q, want 200 %s", path, r.Status, r.Header.Get("Content-Type"), want)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("GET %s: policy %q lets the page call other origins", path, csp)
		}
	}
	for _, path := range []string{"/dashboard/nope.js", "/dashboard/..%2fdashboard.go"} {
		r := api.Do(apitest.Request{Method: "GET", Path: path})
		if r.Status != 404 || r.Map(t)["code"] != "route_not_found" {
			t.Errorf("GET %s: %d %s, want 404 route_not_found", path, r.Status, r.Body)
		}
	}
}
