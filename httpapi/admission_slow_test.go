package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// admissionOf runs the API with queries turns at once, one per account, and the given
// server timeouts.
func admissionOf(queries int, wait, read, write time.Duration) apitest.Options {
	return apitest.Options{Configure: func(c *config.Config) {
		c.Limits = config.Limits{Queries: queries, AccountQueries: 1, QueryQueue: 32, QueryWait: wait}
		c.HTTP.ReadTimeout, c.HTTP.WriteTimeout = read, write
	}}
}

// trickleBody sends request line req of account auth with a JSON body announced at 100,000
// bytes that opens with open, then a byte every 100 ms until the test ends: a body that
// never completes.
func trickleBody(t *testing.T, conn net.Conn, req, auth, open string) {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	fmt.Fprintf(conn, "%s HTTP/1.1\r\nHost: kwhouse\r\nAuthorization: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n%s", req, auth, open)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
}

// dialSmall connects to the API with a 4 KiB receive buffer: a client that stops reading
// stalls the server's writes after a few megabytes at most.
func dialSmall(t *testing.T, api *apitest.API) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(api.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Two accounts' clients send fleet-cost bodies at a trickle; a third account's cost
// request is still served: a turn is taken only once a body has arrived. (The turns of a
// 2-core box: two at once, one per account.)
func TestSlowBodiesHoldNoCostTurn(t *testing.T) {
	api := apitest.Start(t, admissionOf(2, 3*time.Second, 30*time.Second, time.Minute))
	for _, name := range []string{"slow-a", "slow-b"} {
		trickleBody(t, dialSmall(t, api), "POST /costs/fleet", api.NewAccount(name).Test(), "{")
	}
	time.Sleep(500 * time.Millisecond) // both requests are in the server, their handlers running
	c := api.NewAccount("prompt")
	for i := 0; i < 3; i++ {
		r := api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: c.Test(),
			Body: map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-02T00:00:00Z"}})
		if r.Status != 200 {
			t.Fatalf("cost request %d of a third account beside two slow bodies: %d %s, want 200", i, r.Status, r.Body)
		}
	}
}

// A client that asks for a large answer and stops reading it loses its turn when the
// write times out: another account's query, waiting for the only turn, is served.
func TestStalledReaderLosesItsTurn(t *testing.T) {
	api := apitest.Start(t, admissionOf(1, 90*time.Second, 30*time.Second, 20*time.Second))
	a, b := api.NewAccount("stalled"), api.NewAccount("waiting")
	// Several MB of CSV: 100 priced locations × 366 days, one reading a day each.
	var lines strings.Builder
	for l := 0; l < 100; l++ {
		loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: a.Test(),
			Body: map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}}).Map(t)["id"].(string)
		if r := api.Do(apitest.Request{Method: "POST", Path: "/tariffs/elements", Auth: a.Test(), Body: map[string]any{
			"location_id": loc, "direction": "IMPORT", "type": "COMMODITY", "contract_start_date": "2020-01-01T00:00:00Z",
			"contract_end_date": "2030-01-01T00:00:00Z", "schedule": flat(map[string]any{"fixed": 0.25})}}); r.Status != 200 {
			t.Fatalf("tariff: %d %s", r.Status, r.Body)
		}
		for d := 0; d < 366; d++ {
			s := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, d)
			fmt.Fprintf(&lines, `{"location_id":%q,"units":"WH","value":%d,"start_time":%q,"end_time":%q}`+"\n",
				loc, 100+d, s.Format(time.RFC3339), s.Add(time.Hour).Format(time.RFC3339))
		}
	}
	if r := api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: a.Test(), Body: lines.String(),
		Header: map[string]string{"Content-Type": "application/x-ndjson"}}); r.Status != 200 {
		t.Fatalf("readings: %d %.300s", r.Status, r.Body)
	}
	body := `{"start_time":"2024-01-01T00:00:00Z","end_time":"2025-01-01T00:00:00Z","aggregation":"DAY","group_by":"location"}`
	// Read whole first: the fleet cache then answers the stalled request well within its
	// turn's 20 s. On a loaded machine the first (cold) answer may miss its own 20 s: then
	// once more. (Without a write deadline, the stalled request below holds the turn for
	// good and the other account gets 503 too_busy.)
	patient := &http.Client{Timeout: 3 * time.Minute}
	for attempt := 0; ; attempt++ {
		size, err := fleetCSV(patient, api.URL, a.Test(), body)
		if err == nil && size >= 3<<20 {
			break
		}
		if attempt == 2 {
			t.Fatalf("fleet CSV read whole: %d bytes, %v; want a few MB", size, err)
		}
	}
	conn := dialSmall(t, api)
	fmt.Fprintf(conn, "POST /costs/fleet HTTP/1.1\r\nHost: kwhouse\r\nAuthorization: %s\r\nAccept: text/csv\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", a.Test(), len(body), body)
	// Read the status line (the query ran, its answer is being written), then nothing.
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("stalled client: %q %v", status, err)
	}
	start := time.Now()
	req, _ := http.NewRequest("POST", api.URL+"/costs/fleet", strings.NewReader(`{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-02T00:00:00Z"}`))
	req.Header.Set("Authorization", b.Test())
	res, err := patient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("query of another account while a client stalls: %d %s after %s, want 200", res.StatusCode, answer, time.Since(start))
	}
}

// fleetCSV asks for body's fleet costs as CSV and returns the answer's size.
func fleetCSV(client *http.Client, url, auth, body string) (int, error) {
	req, _ := http.NewRequest("POST", url+"/costs/fleet", strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "text/csv")
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return len(answer), fmt.Errorf("status %d: %.200s", res.StatusCode, answer)
	}
	return len(answer), err
}
