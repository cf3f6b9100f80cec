package webhooks_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kwhouse/kwhouse/config"
)

// A delivery is the event exactly as GET /events/{id} returns it, signed so that the
// Standard Webhooks libraries (Go, and npm under node) verify it unchanged; only the
// subscribed types are sent.
func TestDeliveriesVerifyWithStandardWebhooksLibraries(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, always(204))
	d := h.dispatcher()
	id, secret := h.endpoint(rcv.url(), "device.create")
	h.do("POST", "/customers", map[string]any{}) // not subscribed
	dev := h.device()
	drive(t, d, func() bool { return len(rcv.requests()) >= 1 })

	got := rcv.requests()[0]
	events := h.do("GET", "/events?object_id="+dev, nil).Map(t)["data"].([]any)
	eventID := events[0].(map[string]any)["id"].(string)
	want := h.do("GET", "/events/"+eventID, nil)
	if !bytes.Equal(got.body, want.Body) {
		t.Errorf("delivered body\n%s\nwant GET /events/%s\n%s", got.body, eventID, want.Body)
	}
	if got.header.Get("webhook-id") != eventID {
		t.Errorf("webhook-id %q, want the event id %s", got.header.Get("webhook-id"), eventID)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(got.body, got.header); err != nil {
		t.Errorf("the Go Standard Webhooks library refuses the delivery: %v (headers %v)", err, got.header)
	}
	if verify := nodeVerifier(t); verify != nil {
		if err := verify(secret, got.header, got.body); err != nil {
			t.Errorf("the npm standardwebhooks package refuses the delivery: %v", err)
		}
		tampered := append([]byte{}, got.body...)
		tampered[len(tampered)-2] ^= 1
		if verify(secret, got.header, tampered) == nil {
			t.Error("node accepts a tampered body: the check checks nothing")
		}
	}
	for range 5 {
		turn(t, d)
	}
	if n := len(rcv.requests()); n != 1 {
		t.Errorf("%d deliveries, want 1 (customer.create is not subscribed)", n)
	}

	attempts := h.do("GET", "/webhooks/"+id+"/deliveries", nil).Map(t)["data"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("attempts: %v", attempts)
	}
	a := attempts[0].(map[string]any)
	if a["status"] != "delivered" || a["response_status"] != float64(204) || a["event_id"] != eventID || a["attempt"] != float64(1) {
		t.Errorf("attempt %v", a)
	}

	// Resend: the same event again, same webhook-id; test: a webhook.test to this endpoint.
	r := h.do("POST", "/webhooks/"+id+"/deliveries/"+a["delivery_id"].(string)+"/resend", nil)
	if r.Status != 202 || r.Map(t)["delivery_id"] != nil && r.Map(t)["event_id"] != eventID {
		t.Fatalf("resend: %d %s", r.Status, r.Body)
	}
	drive(t, d, func() bool { return len(rcv.requests()) >= 2 })
	if again := rcv.requests()[1]; again.header.Get("webhook-id") != eventID || !bytes.Equal(again.body, want.Body) {
		t.Errorf("resend sent %s %s", again.header.Get("webhook-id"), again.body)
	}
	if r := h.do("POST", "/webhooks/"+id+"/test", nil); r.Status != 202 || r.Map(t)["event_type"] != "webhook.test" {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	drive(t, d, func() bool { return len(rcv.requests()) >= 3 })
	test := rcv.requests()[2]
	if !strings.Contains(string(test.body), `"type":"webhook.test"`) || wh.Verify(test.body, test.header) != nil {
		t.Errorf("test delivery %s does not verify or is not a webhook.test", test.body)
	}
}

// An endpoint answering 500 twice and then 200 gets three attempts with one webhook-id,
// the second 5 s after the first and the third 5 min after the second, never earlier.
func TestFailedAttemptsAreRetriedOnTheSchedule(t *testing.T) {
	h := start(t, nil)
	rcv := newReceiver(t, func(n int) int { return map[bool]int{true: 500, false: 200}[n < 2] })
	d := h.dispatcher()
	id, secret := h.endpoint(rcv.url())
	h.device()
	drive(t, d, func() bool { return len(rcv.requests()) == 1 })

	h.clock.Advance(4 * time.Second)
	turn(t, d)
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("%d attempts 4 s after the first failure, want 1 (the retry is due after 5 s)", n)
	}
	h.clock.Advance(time.Second)
	drive(t, d, func() bool { return len(rcv.requests()) == 2 })

	h.clock.Advance(5*time.Minute - time.Second)
	turn(t, d)
	if n := len(rcv.requests()); n != 2 {
		t.Fatalf("%d attempts 4m59s after the second failure, want 2", n)
	}
	h.clock.Advance(time.Second + h.cfg.SweepInterval)
	drive(t, d, func() bool { return len(rcv.requests()) == 3 })
	for range 3 {
		turn(t, d)
	}

	got := rcv.requests()
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3", len(got))
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	for i, g := range got {
		if g.header.Get("webhook-id") != got[0].header.Get("webhook-id") {
			t.Errorf("attempt %d has webhook-id %s, attempt 1 %s", i+1, g.header.Get("webhook-id"), got[0].header.Get("webhook-id"))
		}
		if err := wh.VerifyIgnoringTimestamp(g.body, g.header); err != nil {
			t.Errorf("attempt %d does not verify: %v", i+1, err)
		}
	}
	ts := func(i int) time.Time { return unix(t, got[i].header.Get("webhook-timestamp")) }
	if gap := ts(1).Sub(ts(0)); gap < 5*time.Second || gap > 7*time.Second {
		t.Errorf("second attempt %v after the first, want 5 s", gap)
	}
	if gap := ts(2).Sub(ts(1)); gap < 5*time.Minute || gap > 5*time.Minute+h.cfg.SweepInterval+2*time.Second {
		t.Errorf("third attempt %v after the second, want 5 min (within a sweep interval)", gap)
	}
	attempts := h.do("GET", "/webhooks/"+id+"/deliveries", nil).Map(t)["data"].([]any)
	var states []string
	for _, a := range attempts {
		m := a.(map[string]any)
		states = append(states, m["status"].(string)+"/"+fmtNum(m["response_status"]))
	}
	if strings.Join(states, " ") != "delivered/200 pending/500 pending/500" {
		t.Errorf("attempts newest first: %v", states)
	}
}

// An endpoint that does not answer within webhooks.timeout fails the attempt; the retry
// comes 5 s later.
func TestHangingEndpointTimesOutAndIsRetried(t *testing.T) {
	h := start(t, func(w *config.Webhooks) { w.Timeout = 300 * time.Millisecond })
	rcv := newReceiver(t, always(200))
	rcv.hang = func(n int) bool { return n == 0 }
	d := h.dispatcher()
	id, _ := h.endpoint(rcv.url())
	h.device()
	began := time.Now()
	drive(t, d, func() bool { return len(rcv.requests()) == 1 })
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the hanging attempt took %v", took)
	}
	h.clock.Advance(5 * time.Second)
	drive(t, d, func() bool { return len(rcv.requests()) == 2 })
	attempts := h.do("GET", "/webhooks/"+id+"/deliveries", nil).Map(t)["data"].([]any)
	if len(attempts) != 2 {
		t.Fatalf("attempts %v", attempts)
	}
	first, second := attempts[1].(map[string]any), attempts[0].(map[string]any)
	if first["status"] != "pending" || !strings.Contains(first["error"].(string), "Timeout") || first["response_status"] != nil {
		t.Errorf("timed-out attempt: %v", first)
	}
	if second["status"] != "delivered" {
		t.Errorf("retry: %v", second)
	}
}
