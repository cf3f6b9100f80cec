package httpapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

type connectEnv struct {
	t     *testing.T
	api   *apitest.API
	acc   apitest.Account
	clock *testkit.Clock
}

func newConnectEnv(t *testing.T) *connectEnv {
	clock := &testkit.Clock{}
	api := apitest.Start(t, apitest.Options{Now: clock.Now})
	return &connectEnv{t: t, api: api, acc: api.NewAccount("connect"), clock: clock}
}

func (e *connectEnv) do(method, path string, body any) apitest.Response {
	e.t.Helper()
	return e.api.As(e.acc.Test())(method, path, body)
}

// token starts a session for a new location and returns the token and the page's path.
func (e *connectEnv) token(ref string) (string, string) {
	e.t.Helper()
	r := e.do("POST", "/connect/tariff/token", map[string]any{"callback_uri": "https://app.example/done?x=1",
		"location_reference_id": ref, "postal_address": map[string]any{"country_code": "GB", "city": "London"}})
	var out struct {
		ConnectToken string `json:"connect_token"`
		ExpiresIn    int    `json:"expires_in"`
		ConnectURL   string `json:"connect_url"`
	}
	r.JSON(e.t, &out)
	u, err := url.Parse(out.ConnectURL)
	if r.Status != 200 || err != nil || !strings.HasPrefix(out.ConnectURL, e.api.URL+"/connect/tariff/pages/") || out.ExpiresIn != 3600 {
		e.t.Fatalf("token: %d %s", r.Status, r.Body)
	}
	return out.ConnectToken, u.Path
}

// page sends the page request as a browser does (a form POST when form is not nil).
func (e *connectEnv) page(path string, form url.Values) apitest.Response {
	e.t.Helper()
	if form == nil {
		return e.api.Do(apitest.Request{Method: "GET", Path: path})
	}
	return e.api.Do(apitest.Request{Method: "POST", Path: path, Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

// twoRates is the page's form for a night rate 00:00–07:00 at 0.10 and a day rate
// 07:00–24:00 at 0.30.
func twoRates() url.Values {
	return url.Values{"from_0": {"00:00"}, "to_0": {"07:00"}, "price_0": {"0.10"},
		"from_1": {"07:00"}, "to_1": {"00:00"}, "price_1": {"0.30"},
		"display_name": {"Two rates"}, "contract_start": {"2024-01-01"}, "contract_end": {"2030-01-01"}}
}

func TestConnectPageSavesTheCustomersTariffAndTheTokenIsExchangedOnce(t *testing.T) {
	e := newConnectEnv(t)
	tok, path := e.token("HOME-1")
	if r := e.do("GET", "/connect/tariff/token?connect_token="+tok, nil); r.Status != 422 || r.Map(t)["code"] != "connect_incomplete" {
		t.Fatalf("exchange before the page: %d %s", r.Status, r.Body)
	}
	r := e.page(path, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `name="price_0"`) || strings.Contains(string(r.Body), "<script") {
		t.Fatalf("page: %d %s", r.Status, r.Body)
	}
	// A schedule that leaves 07:00–24:00 uncovered is refused as the API refuses it, and
	// changes nothing.
	bad := twoRates()
	bad.Del("price_1")
	r = e.page(path, bad)
	if r.Status != 400 || !strings.Contains(string(r.Body), `id="problem"`) || !strings.Contains(string(r.Body), "schedule") {
		t.Fatalf("incomplete schedule: %d %s", r.Status, r.Body)
	}
	if got := e.do("GET", "/locations?reference_id=HOME-1", nil).Map(t)["data"].([]any); len(got) != 0 {
		t.Fatalf("a refused form stored a location: %v", got)
	}
	r = e.page(path, twoRates())
	if r.Status != 200 || !strings.Contains(string(r.Body), "https://app.example/done?x=1&amp;connect_token="+tok) {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	ex := e.exchange(tok)
	if ex.LocationReferenceID != "HOME-1" {
		t.Fatalf("exchange: %+v", ex)
	}
	// The tariff equals one created through the API with the same schedule.
	e.requireSameAsAPI(ex.TariffID, ex.LocationID, "Two rates", twoRateHours())
	// Single use: a second exchange and the page again are refused.
	if r := e.do("GET", "/connect/tariff/token?connect_token="+tok, nil); r.Status != 404 || r.Map(t)["code"] != "token_used" {
		t.Errorf("second exchange: %d %s", r.Status, r.Body)
	}
	if r := e.page(path, nil); r.Status != 409 {
		t.Errorf("page after completion: %d", r.Status)
	}
}

func TestConnectTokenExpires(t *testing.T) {
	e := newConnectEnv(t)
	tok, path := e.token("HOME-1")
	e.clock.Advance(time.Hour + time.Second)
	if r := e.page(path, nil); r.Status != 404 || !strings.Contains(string(r.Body), "expired") {
		t.Errorf("expired page: %d %s", r.Status, r.Body)
	}
	if r := e.do("GET", "/connect/tariff/token?connect_token="+tok, nil); r.Status != 404 || r.Map(t)["code"] != "token_expired" {
		t.Errorf("expired exchange: %d %s", r.Status, r.Body)
	}
	// Another account's token is unknown here, and so is a made-up one.
	if r := e.api.Do(apitest.Request{Method: "GET", Path: strings.Replace(path, "/test/", "/live/", 1)}); r.Status != 404 {
		t.Errorf("token under the live mode: %d", r.Status)
	}
	if r := e.do("POST", "/connect/tariff/token", map[string]any{"callback_uri": "ftp://x"}); r.Status != 400 || r.Map(t)["param"] != "callback_uri" {
		t.Errorf("bad callback: %d %s", r.Status, r.Body)
	}
}

func TestConnectBatchImportsAsKwhouseImportDoes(t *testing.T) {
	e := newConnectEnv(t)
	body := map[string]any{"session": map[string]any{"direction": "IMPORT", "type": "COMMODITY", "location_reference_id": "B-1",
		"postal_address": map[string]any{"country_code": "GB"}},
		"tariff": map[string]any{"type": "FIXED", "name": "Flat", "contract": map[string]any{"start_date": "2024-01-01T00:00:00Z", "end_date": "2030-01-01T00:00:00Z"},
			"data": flat(map[string]any{"fixed": 0.25})}}
	r := e.do("POST", "/connect/tariff/batch", body)
	loc, _ := r.Map(t)["location_id"].(string)
	if r.Status != 200 || loc == "" {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	rates := e.do("GET", "/tariffs/rates/"+loc+"?start_time=2024-06-01T00:00:00Z&end_time=2024-06-01T01:00:00Z", nil).Map(t)
	if d := rates["data"].([]any); len(d) != 1 || d[0].(map[string]any)["tariff"].(map[string]any)["rate"] != 0.25 {
		t.Errorf("rates after batch: %v", rates["data"])
	}
	// The same reference again: the location exists, the export tariff joins it.
	body["session"].(map[string]any)["direction"] = "EXPORT"
	if r := e.do("POST", "/connect/tariff/batch", body); r.Status != 200 || r.Map(t)["location_id"] != loc {
		t.Errorf("second batch: %d %s", r.Status, r.Body)
	}
	body["tariff"].(map[string]any)["type"] = "SOMETHING"
	if r := e.do("POST", "/connect/tariff/batch", body); r.Status != 400 || r.Map(t)["param"] != "tariff.type" {
		t.Errorf("bad type: %d %s", r.Status, r.Body)
	}
}

// twoRateHours is the schedule's hours twoRates enters.
func twoRateHours() []any {
	return []any{map[string]any{"valid_from": "00:00:00", "valid_to": "07:00:00", "rate": []any{map[string]any{"fixed": 0.10}}},
		map[string]any{"valid_from": "07:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.30}}}}
}

// requireSameAsAPI requires the tariff the page created (at location loc) to equal one
// created through the API at another location with name, an every-day schedule of
// hours and twoRates' contract.
func (e *connectEnv) requireSameAsAPI(tariffID, loc, name string, hours []any) {
	e.t.Helper()
	other := e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(e.t)["id"].(string)
	viaAPI := e.do("POST", "/tariffs/elements", map[string]any{"location_id": other, "direction": "IMPORT", "type": "COMMODITY",
		"display_name": name, "contract_start_date": "2024-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z",
		"schedule": []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": hours}}}}}).Map(e.t)
	viaPage := e.do("GET", "/tariffs/elements/"+tariffID, nil).Map(e.t)
	for _, k := range []string{"schedule", "display_name", "contract_start_date", "contract_end_date", "direction", "type", "timezone"} {
		a, _ := json.Marshal(viaPage[k])
		b, _ := json.Marshal(viaAPI[k])
		if string(a) != string(b) || viaAPI[k] == nil {
			e.t.Errorf("%s: page %s, API %s", k, a, b)
		}
	}
	if viaPage["location_id"] != loc {
		e.t.Errorf("tariff at %v, exchange says %s", viaPage["location_id"], loc)
	}
}
