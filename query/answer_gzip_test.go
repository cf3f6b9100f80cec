package query_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/query"
)

// rawAnswer is a fleet answer as its client received it: its status, headers and body as
// sent (not inflated).
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
}

// askRaw asks POST /costs/fleet with body, Accept accept (JSON when empty) and
// Accept-Encoding encoding, on a transport that inflates nothing.
func (w *pagedWalk) askRaw(t *testing.T, body map[string]any, accept, encoding string) rawAnswer {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", w.f.api.URL+"/costs/fleet", bytes.NewReader(b))
	req.Header.Set("Authorization", w.f.auth)
	req.Header.Set("Accept-Encoding", encoding)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("fleet %v: %d %s (%v)", body, res.StatusCode, out, err)
	}
	return rawAnswer{status: res.StatusCode, header: res.Header, body: out}
}

// decoded is the answer's body as its client reads it: inflated when it came gzipped;
// its headers must say how it came (gzip only when wanted: asked for and served from the
// cache) and that it varies by Accept-Encoding.
func (a rawAnswer) decoded(t *testing.T, what string, wantGzip bool) []byte {
	t.Helper()
	if v := a.header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") {
		t.Errorf("%s: Vary %q lacks Accept-Encoding", what, v)
	}
	enc := a.header.Get("Content-Encoding")
	if !wantGzip {
		if enc != "" {
			t.Errorf("%s: Content-Encoding %q, want none (not asked for, or computed)", what, enc)
		}
		return a.body
	}
	if enc != "gzip" {
		t.Fatalf("%s: Content-Encoding %q to a client that asked for gzip, served from the cache", what, enc)
	}
	r, err := gzip.NewReader(bytes.NewReader(a.body))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return plain
}

// TestFleetAnswerGzippedOnlyWhenAskedAndTheSameBytesDecoded: every page of a walk and the
// CSV (with and without charges), each asked by a client that accepts gzip and by one that
// does not, computed for either and then served from the answer cache to both: a client
// gets Content-Encoding gzip only when it asked for it and the answer was served from the
// cache (a computed answer is sent as encoded), Vary: Accept-Encoding always, and the
// same bytes once inflated as the other client, on every path.
func TestFleetAnswerGzippedOnlyWhenAskedAndTheSameBytesDecoded(t *testing.T) {
	w := newPagedWalk(t, 7)
	p := w.f.api.App.Pricer
	window := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z"}
	type ask struct {
		name   string
		body   map[string]any
		accept string
	}
	var asks []ask
	for i, c := range w.cursors {
		body := map[string]any{"aggregation": "DAY", "limit": 5}
		if c != "" {
			body["starting_after"] = c
		}
		asks = append(asks, ask{name: fmt.Sprintf("page from cursor %d, limit 5", i), body: body})
	}
	asks = append(asks, ask{"CSV by DAY", map[string]any{"aggregation": "DAY"}, "text/csv"},
		ask{"CSV by DAY with charges", map[string]any{"aggregation": "DAY", "include_charges": true}, "text/csv"},
		ask{"JSON by MONTH", map[string]any{"aggregation": "MONTH"}, ""})
	for i, a := range asks {
		for k, v := range window {
			a.body[k] = v
		}
		// Half of them computed for a client asking gzip first, half for one that does not.
		order := []bool{i%2 == 0, i%2 != 0, i%2 == 0, i%2 != 0}
		var first []byte
		for n, gz := range order {
			query.WaitAnswerStores(p)
			served := p.AnswerCounts().Served
			enc := "identity"
			if gz {
				enc = "gzip"
			}
			what := a.name + " asked with " + enc
			// Computed (the first ask): sent as encoded; served: as stored to gzip.
			got := w.askRaw(t, a.body, a.accept, enc).decoded(t, what, gz && n > 0)
			if n == 0 {
				first = got
				continue
			}
			if p.AnswerCounts().Served == served {
				t.Errorf("%s (ask %d): not served from the answer cache", what, n+1)
			}
			if !bytes.Equal(got, first) {
				t.Errorf("%s (ask %d): %d bytes decoded unlike the %d first sent:\n%.300s\n%.300s", what, n+1, len(got), len(first), got, first)
			}
		}
		if a.accept == "" && !json.Valid(first) {
			t.Errorf("%s: not JSON: %.300s", a.name, first)
		}
	}
}
