package httpapi_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// uploadLimits runs the API with the given upload turns per account and refused-upload
// rate (a minute's worth as the burst).
func uploadLimits(turns int, wait time.Duration, refusedPerMinute int) apitest.Options {
	return apitest.Options{Configure: func(c *config.Config) {
		c.Limits.AccountUploads, c.Limits.UploadWait = turns, wait
		c.Limits.RefusedUploadsPerMinute, c.Limits.RefusedUploadBurst = refusedPerMinute, refusedPerMinute
	}}
}

// onePush is one valid half-hour record of loc at hour h of 2024-01-01.
func onePush(loc string, h int) []any {
	return []any{map[string]any{"location_id": loc, "units": "WH", "value": 100,
		"start_time": fmt.Sprintf("2024-01-01T%02d:00:00Z", h), "end_time": fmt.Sprintf("2024-01-01T%02d:30:00Z", h)}}
}

// trickle starts a PUT /meters/interval of account auth announced at 100,000 bytes and
// sends a byte every 100 ms until the test ends: an upload that holds its turn.
func trickle(t *testing.T, api *apitest.API, auth string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(api.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	trickleBody(t, conn, "PUT /meters/interval", auth, "[")
}

// An account whose uploads hold all of its turns gets back-pressure for one more — 429
// too_many_uploads with Retry-After once limits.upload_wait has passed — while another
// account's upload is stored at once.
func TestAnAccountOverItsUploadTurnsWaitsAndOthersDoNot(t *testing.T) {
	api := apitest.Start(t, uploadLimits(2, 500*time.Millisecond, 0))
	busy, other := api.NewAccount("busy"), api.NewAccount("other")
	locOf := func(a apitest.Account) string {
		return api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: a.Test(),
			Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	}
	busyLoc, otherLoc := locOf(busy), locOf(other)
	trickle(t, api, busy.Test())
	trickle(t, api, busy.Test())
	time.Sleep(300 * time.Millisecond) // both uploads are in the server, holding the busy account's two turns

	start := time.Now()
	r := api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: busy.Test(), Body: onePush(busyLoc, 1)})
	if r.Status != 429 || r.Map(t)["code"] != "too_many_uploads" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a third upload of the busy account: %d %s (Retry-After %q), want 429 too_many_uploads", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Errorf("refused after %s: the upload should wait limits.upload_wait (500ms) for a turn first", waited)
	}
	start = time.Now()
	r = api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: other.Test(), Body: onePush(otherLoc, 1)})
	if r.Status != 200 || r.Map(t)["records_accepted"] != float64(1) {
		t.Fatalf("another account's upload beside the busy one: %d %s, want 200 with its record stored", r.Status, r.Body)
	}
	if waited := time.Since(start); waited > 400*time.Millisecond {
		t.Errorf("another account's upload took %s: it must not wait for the busy account's turns", waited)
	}
	// The busy account's other uploads (prices, intensities) share its turns.
	m := api.Do(apitest.Request{Method: "POST", Path: "/markets", Auth: busy.Test(), Body: map[string]any{"display_name": "m", "currency_code": "GBP"}}).Map(t)["id"].(string)
	r = api.Do(apitest.Request{Method: "PUT", Path: "/markets/" + m + "/prices", Auth: busy.Test(),
		Body: []any{map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-01-01T00:30:00Z", "price": 0.1}}})
	if r.Status != 429 || r.Map(t)["code"] != "too_many_uploads" {
		t.Fatalf("market prices of the busy account: %d %s, want 429 too_many_uploads", r.Status, r.Body)
	}
}

// An account whose uploads keep being refused (malformed bodies, batches of which no
// record is stored) is held back past limits.refused_uploads_per_minute: its next upload,
// even a valid one, is 429 too_many_refused_uploads before its body is read, and nothing
// of it is stored; another account's upload is stored meanwhile.
func TestAnAccountWhoseUploadsKeepFailingIsHeldBack(t *testing.T) {
	api := apitest.Start(t, uploadLimits(0, 0, 3))
	bad, good := api.NewAccount("careless"), api.NewAccount("other")
	locOf := func(a apitest.Account) string {
		return api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: a.Test(),
			Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	}
	badLoc, goodLoc := locOf(bad), locOf(good)
	put := func(a apitest.Account, body any, header map[string]string) apitest.Response {
		return api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: a.Test(), Body: body, Header: header})
	}
	refusals := []func() apitest.Response{
		func() apitest.Response { return put(bad, `[{"location_id":`, nil) }, // 400
		func() apitest.Response {
			return put(bad, "{}\n{}\n", map[string]string{"Content-Type": "application/x-ndjson"})
		}, // 200, none stored
		func() apitest.Response { return put(bad, `[{"location_id":`, nil) },
		func() apitest.Response {
			return put(bad, "{}\n", map[string]string{"Content-Type": "application/x-ndjson"})
		},
	}
	for i, refuse := range refusals {
		if r := refuse(); r.Status != 400 && r.Status != 200 {
			t.Fatalf("refused upload %d: %d %s, want 400 or 200 with no record stored", i, r.Status, r.Body)
		}
	}
	r := put(bad, onePush(badLoc, 2), nil)
	if r.Status != 429 || r.Map(t)["code"] != "too_many_refused_uploads" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a valid upload after four refused ones (rate 3 a minute): %d %s, want 429 too_many_refused_uploads with Retry-After", r.Status, r.Body)
	}
	r = put(good, onePush(goodLoc, 2), nil)
	if r.Status != 200 || r.Map(t)["records_accepted"] != float64(1) {
		t.Fatalf("another account's upload: %d %s, want 200 with its record stored", r.Status, r.Body)
	}
	var n uint64
	if err := api.App.DB.QueryRow(t.Context(), chstore.Tool("SELECT count() FROM meter_records WHERE account_id = ?"), bad.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the held-back account has %d records stored, want 0", n)
	}
}
