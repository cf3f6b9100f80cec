package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// gzipped is prefix, then item repeated until the whole is size bytes, then suffix, gzip
// compressed: a small body that inflates to size.
func gzipped(t *testing.T, prefix, item, suffix string, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(prefix))
	block := []byte(strings.Repeat(item, (1<<20)/len(item)))
	for n := len(prefix) + len(suffix); n+len(block) <= size; n += len(block) {
		zw.Write(block)
	}
	zw.Write([]byte(suffix))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocated runs f and returns the bytes the whole process allocated meanwhile (the
// service runs in this process).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const price = `{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z","price":0.1},`

// A 200 MiB body of prices in under a megabyte of gzip: to a market that is not the
// caller's, 404 before the body is read; to the caller's own, 413 at the first price over
// the count, and to either only a few MiB allocated — never the body.
func TestHugeGzipPriceBodiesAreRefusedBeforeTheyAreRead(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) { c.Ingest.MaxSeriesBytes = 4 << 20 }})
	owner, other := api.NewAccount("owner"), api.NewAccount("other")
	market := api.Do(apitest.Request{Method: "POST", Path: "/markets", Auth: owner.Test(),
		Body: map[string]any{"display_name": "day-ahead", "currency_code": "GBP"}}).Map(t)["id"].(string)
	body := gzipped(t, "[", price, `{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z","price":0.1}]`, 200<<20)
	put := func(auth, path string, body []byte) apitest.Response {
		return api.Do(apitest.Request{Method: "PUT", Path: path, Auth: auth, Body: body,
			Header: map[string]string{"Content-Encoding": "gzip"}})
	}
	cases := []struct {
		name, auth, path string
		body             []byte
		status           int
		code             string
	}{
		{"a missing market", owner.Test(), "/markets/" + kwhouse.NewID(kwhouse.PrefixMarket) + "/prices", body, 404, "resource_missing"},
		{"another account's market", other.Test(), "/markets/" + market + "/prices", body, 404, "resource_missing"},
		{"the caller's market, 40,001 prices in", owner.Test(), "/markets/" + market + "/prices", body, 413, "too_many_prices"},
		{"one price of 200 MiB", owner.Test(), "/markets/" + market + "/prices",
			gzipped(t, `[{"price":0.1,"start_time":"`, "x", `"}]`, 200<<20), 413, "body_too_large"},
	}
	for _, tc := range cases {
		var r apitest.Response
		n := allocated(func() { r = put(tc.auth, tc.path, tc.body) })
		if r.Status != tc.status || r.Map(t)["code"] != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
		t.Logf("%s: %d KiB of gzip, %d: %.1f MiB allocated", tc.name, len(tc.body)>>10, r.Status, float64(n)/(1<<20))
		if n > 50<<20 {
			t.Errorf("%s: %d MiB allocated for a %d KiB body, want < 50 MiB", tc.name, n>>20, len(tc.body)>>10)
		}
	}
	if r := api.Do(apitest.Request{Method: "GET", Path: "/markets/" + market, Auth: owner.Test()}); r.Status != 200 {
		t.Fatalf("the market after refused bodies: %d", r.Status)
	}
}

// Carbon intensities and register readings are read the same way.
func TestHugeGzipSeriesBodiesAreBounded(t *testing.T) {
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) { c.Ingest.MaxSeriesBytes = 4 << 20 }})
	acc := api.NewAccount("series")
	series := api.Do(apitest.Request{Method: "POST", Path: "/carbon/series", Auth: acc.Test(),
		Body: map[string]any{"display_name": "grid", "country_code": "GB"}}).Map(t)["id"].(string)
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"postal_address": map[string]any{"country_code": "GB"}}}).Map(t)["id"].(string)
	iv := `{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z","intensity":100},`
	ivs := gzipped(t, "[", iv, strings.TrimSuffix(iv, ",")+"]", 200<<20)
	reading := `{"time":1704067200,"value":1},`
	readings := gzipped(t, `{"location_id":"`+loc+`","units":"WH","data":[`, reading, `{"time":1704067200,"value":1}]}`, 200<<20)
	cases := []struct {
		name, path string
		body       []byte
		status     int
		code       string
	}{
		{"intensities of a missing series", "/carbon/series/" + kwhouse.NewID(kwhouse.PrefixCarbon) + "/intensities", ivs, 404, "resource_missing"},
		{"intensities of the caller's series", "/carbon/series/" + series + "/intensities", ivs, 413, "too_many_intensities"},
		{"register readings", "/meters/cumulative/epoch", readings, 413, "too_many_records"},
	}
	for _, tc := range cases {
		var r apitest.Response
		n := allocated(func() {
			r = api.Do(apitest.Request{Method: "PUT", Path: tc.path, Auth: acc.Test(), Body: tc.body,
				Header: map[string]string{"Content-Encoding": "gzip"}})
		})
		if r.Status != tc.status || r.Map(t)["code"] != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
		t.Logf("%s: %d KiB of gzip, %d: %.1f MiB allocated", tc.name, len(tc.body)>>10, r.Status, float64(n)/(1<<20))
		if n > 50<<20 {
			t.Errorf("%s: %d MiB allocated for a %d KiB body, want < 50 MiB", tc.name, n>>20, len(tc.body)>>10)
		}
	}
}
