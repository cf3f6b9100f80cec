package webhooks_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
	"github.com/kwhouse/kwhouse/webhooks"
)

// receiver is a webhook endpoint on loopback that records what it gets.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int // the status of the n-th request (0-based)
	hang   func(n int) bool
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	r := &receiver{t: t, status: status, hang: func(int) bool { return false }}
	stop := make(chan struct{})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, received{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		if r.hang(n) {
			select {
			case <-req.Context().Done():
			case <-stop:
			}
			return
		}
		w.WriteHeader(r.status(n))
	}))
	t.Cleanup(func() { close(stop); r.srv.Close() })
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/hook" }

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func always(code int) func(int) int { return func(int) int { return code } }

// harness is a kwhouse whose dispatchers the test drives, on a test clock.
type harness struct {
	t     *testing.T
	api   *apitest.API
	clock *testkit.Clock
	cfg   config.Webhooks
	do    func(method, path string, body any) apitest.Response
	auth  string // the Authorization of do
	n     int
}

func start(t *testing.T, configure func(*config.Webhooks)) *harness {
	return startConfig(t, func(c *config.Config) {
		if configure != nil {
			configure(&c.Webhooks)
		}
	})
}

// startConfig is start with the whole configuration at hand.
func startConfig(t *testing.T, configure func(*config.Config)) *harness {
	h := &harness{t: t, clock: &testkit.Clock{}}
	h.api = apitest.Start(t, apitest.Options{Now: h.clock.Now, Configure: func(c *config.Config) {
		c.Webhooks.Dispatch = false // the test makes and drives its own
		configure(c)
		h.cfg = c.Webhooks
	}})
	h.auth = h.api.NewAccount("hooks").Test()
	h.do = h.api.As(h.auth)
	return h
}

// dispatcher returns a dispatcher of the service, as another kwhouse process would run.
func (h *harness) dispatcher() *webhooks.Dispatcher {
	d := webhooks.NewDispatcher(webhooks.NewStore(h.api.App.DB), h.api.App.Webhooks, h.api.App.Cache, h.cfg,
		testkit.Logger(), webhooks.DispatcherOptions{Now: h.clock.Now, Dial: loopbackOnly(h.t)})
	if err := d.RunOnce(context.Background()); err != nil {
		h.t.Fatalf("first dispatch: %v", err)
	}
	return d
}

// endpoint registers url for types and returns its id and secret.
func (h *harness) endpoint(url string, types ...string) (string, string) {
	body := map[string]any{"url": url}
	if len(types) > 0 {
		body["event_types"] = types
	}
	r := h.do("POST", "/webhooks", body)
	if r.Status != 201 {
		h.t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	m := r.Map(h.t)
	return m["id"].(string), m["secret"].(string)
}

// must makes a request that has to succeed and returns its body.
func (h *harness) must(method, path string, body any) map[string]any {
	h.t.Helper()
	r := h.do(method, path, body)
	if r.Status >= 300 {
		h.t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.Map(h.t)
}

// revised returns the data of the cost.revised events, newest first.
func (h *harness) revised() []map[string]any {
	h.t.Helper()
	var out []map[string]any
	for _, e := range h.must("GET", "/events?event_type=cost.revised", nil)["data"].([]any) {
		out = append(out, e.(map[string]any)["data"].(map[string]any))
	}
	return out
}

// device creates a device: one device.create event.
func (h *harness) device() string {
	h.n++
	r := h.do("POST", "/devices", map[string]any{"reference_id": "dev-" + strconv.Itoa(h.n)})
	if r.Status != 201 {
		h.t.Fatalf("create device: %d %s", r.Status, r.Body)
	}
	return r.Map(h.t)["id"].(string)
}

// drive runs d (each turn waiting for its attempts) until done or 15 s have passed.
func drive(t *testing.T, d *webhooks.Dispatcher, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("dispatcher did not get there in 15 s")
		}
		if err := d.RunOnce(context.Background()); err != nil {
			t.Fatalf("dispatch: %v", err)
		}
		d.Wait()
		time.Sleep(10 * time.Millisecond)
	}
}

// turn runs d once and waits for its attempts.
func turn(t *testing.T, d *webhooks.Dispatcher) {
	t.Helper()
	if err := d.RunOnce(context.Background()); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	d.Wait()
}

// loopbackOnly is the dialer of every test: it fails the test instead of connecting to
// any address outside 127.0.0.0/8.
func loopbackOnly(t *testing.T) webhooks.DialFunc {
	var d net.Dialer
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(address)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || ip.To4() == nil {
			t.Errorf("a delivery dialled %s: tests connect to 127.0.0.0/8 only", address)
			return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError("refused by the test")}
		}
		return d.DialContext(ctx, network, address)
	}
}

func unix(t *testing.T, s string) time.Time {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q: %v", s, err)
	}
	return time.Unix(n, 0)
}

func fmtNum(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return "none"
}
