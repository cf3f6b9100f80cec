package conformance

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// webhookSteps registers an endpoint on a loopback receiver and waits for the service's
// own dispatcher to deliver an event, a resend and a test event, so every webhook
// statement runs; then an endpoint taking cost.revised, for the price writes that follow.
func webhookSteps(r *run) {
	var calls atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(500) // the first attempt fails: the retry 5 s later reads its event again
			return
		}
		w.WriteHeader(204)
	}))
	r.t.Cleanup(rcv.Close)
	r.call("wh", "POST", "/webhooks", map[string]any{"url": rcv.URL + "/hook", "event_types": []string{"device.create"}})
	r.call("wh dev", "POST", "/devices", map[string]any{"reference_id": "hooked"})
	r.waitAttempts(2)
	r.call("wh attempts", "GET", "/webhooks/{wh}/deliveries", nil)
	first := r.attempts()[0].(map[string]any)
	r.names["wh_delivery"], r.names["wh_attempt"] = first["delivery_id"].(string), first["id"].(string)
	r.call("wh resend", "POST", "/webhooks/{wh}/deliveries/{wh_delivery}/resend", nil)
	r.waitAttempts(3) // one at a time: the attempts' order is then the same on both engines
	r.call("wh test", "POST", "/webhooks/{wh}/test", nil)
	r.waitAttempts(4)
	r.call("wh attempts page", "GET", "/webhooks/{wh}/deliveries?ending_before={wh_attempt}&limit=5", nil)
	r.call("wh patch", "PATCH", "/webhooks/{wh}", map[string]any{"disabled": true})
	r.call("wh rotate", "POST", "/webhooks/{wh}/rotate_secret", nil)
	r.call("wh list", "GET", "/webhooks", nil)
	// Subscribed to cost.revised, the tariff writes of the teardown look up the days with
	// readings they change (webhooks.reading_days).
	r.call("wh revised", "POST", "/webhooks", map[string]any{"url": rcv.URL + "/revised",
		"event_types": []string{"cost.revised", "meter.batch.completed"}})
}

func (r *run) attempts() []any {
	res := r.api.Do(apitest.Request{Method: "GET", Path: r.expand("/webhooks/{wh}/deliveries"), Auth: r.auth})
	return res.Map(r.t)["data"].([]any)
}

// waitAttempts waits (up to 20 s) until the endpoint has n delivered attempts.
func (r *run) waitAttempts(n int) {
	deadline := time.Now().Add(20 * time.Second)
	for len(r.attempts()) < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("webhook attempts: %d after 20 s, want %d", len(r.attempts()), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
