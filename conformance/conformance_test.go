//go:build chdb

package conformance

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// start runs the service on db (the 18.16 server when nil) with the document cache off,
// so every read reaches the engine.
func start(t *testing.T, db *chstore.DB) (*apitest.API, *testkit.Clock) {
	clock := &testkit.Clock{}
	opt := apitest.Options{Now: clock.Now, DB: db, NoCache: true,
		Configure: func(c *config.Config) { c.Webhooks.Dispatch = true }} // the webhook steps need it
	if db == nil {
		// Set before the service starts: its webhook dispatcher queries from the start.
		opt.Observe = observer("18.16")
	}
	return apitest.Start(t, opt), clock
}

// TestSameAnswersOnServer1816AndCurrentEngine runs the scenario on ClickHouse 18.16 and on
// chDB (26.x) and compares every response, then checks the scenario sent every statement.
func TestSameAnswersOnServer1816AndCurrentEngine(t *testing.T) {
	old, oldClock := start(t, nil)
	cur, curClock := start(t, chdbDB(t, testkit.RandomName("kwconf_")))
	t.Logf("engines: %s %d.%d vs %s %d.%d", old.App.DB.Version().DisplayName, old.App.DB.Version().Version.Major,
		old.App.DB.Version().Version.Minor, cur.App.DB.Version().Name, cur.App.DB.Version().Version.Major, cur.App.DB.Version().Version.Minor)
	want := scenario(t, old, oldClock)
	got := scenario(t, cur, curClock)
	if len(got) != len(want) {
		t.Fatalf("%d steps on chDB, %d on 18.16", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Status != g.Status || !sameBody(w.Body, g.Body) {
			t.Errorf("step %q differs:\n18.16: %d %s\nchDB:  %d %s", w.Name, w.Status, w.Body, g.Status, g.Body)
		}
		if w.Status >= 500 {
			t.Errorf("step %q answered %d on 18.16: %s", w.Name, w.Status, w.Body)
		}
	}
	t.Run("every registered statement ran on both", func(t *testing.T) {
		ran.Lock()
		defer ran.Unlock()
		for _, st := range chstore.Statements() {
			engines := ran.by[st.Name]
			if !engines["chdb"] {
				t.Errorf("statement %s never ran on chDB: add it to the scenario", st.Name)
			}
			if !engines["18.16"] && !strings.HasPrefix(st.Name, "schema.") {
				t.Errorf("statement %s never ran on 18.16", st.Name)
			}
		}
		t.Logf("%d statements covered", len(chstore.Statements()))
	})
}

// sameBody compares two answers as JSON, numbers allowed to differ by one unit of the
// sixth decimal: amounts are sums rounded to six decimals, and the engines add floats in
// different orders, so a sum that lies on a rounding tie (prices and energies with few
// decimals make exact ties) may round either way.
func sameBody(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return sameJSON(x, y)
}

func sameJSON(x, y any) bool {
	switch a := x.(type) {
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := y.(float64)
		return ok && math.Abs(a-b) <= 1.0000001e-6
	}
	return x == y
}
