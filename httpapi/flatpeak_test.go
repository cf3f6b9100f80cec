package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// flatPeakCall is one call a FlatPeak client makes, in FlatPeak's own terms.
type flatPeakCall struct {
	op     string // FlatPeak's operation: "METHOD /path/{id}"
	path   string // with ids and query; {name} is replaced by the id a call of that name made
	body   any
	name   string // keeps the answer's id as {name}
	status int
}

// Tried as a new FlatPeak client would: every FlatPeak operation (kwhouse routes all 38), with bodies
// that FlatPeak's own document accepts (checked), every answer checked against FlatPeak's
// document (status and body, by apitest) and once more without credentials (403).
func TestEveryFlatPeakOperationAnswersAsFlatPeakDocuments(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("flatpeak-client")
	schedule := []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"},
		"hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": []any{map[string]any{"fixed": 0.25}}}}}}}}
	record := map[string]any{"location_id": "{loc}", "device_id": "{dev}", "session_reference_id": "S-1", "record_reference_id": "R-1",
		"direction": "IMPORT", "tariff_rate": "IMPORT", "measurand": "TRANSFERRED", "units": "WH", "confidence": 1, "value": 1500,
		"start_time": "2024-06-03T10:00:00Z", "end_time": "2024-06-03T10:30:00+00:00", "non_persistent": false}
	window := "start_time=2024-06-03T00:00:00Z&end_time=2024-06-04T00:00:00Z"
	soon := time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)
	scheduleBody := map[string]any{"location_id": "{loc}", "max_power": map[string]any{"units": "W", "value": "14000"},
		"shaving_threshold": map[string]any{"relative": 0.9}, "data": []any{map[string]any{"device_id": "{dev}", "direction": "IMPORT",
			"start_time": soon.Format(time.RFC3339), "end_time": soon.Add(3 * time.Hour).Format(time.RFC3339),
			"max_power": map[string]any{"units": "W", "value": 7000}, "energy": map[string]any{"units": "WH", "value": 10000}}}}
	calls := []flatPeakCall{
		{op: "POST /customers", path: "/customers", body: map[string]any{"reference_id": "CUS-1"}, name: "cus", status: 201},
		{op: "GET /customers", path: "/customers?limit=10&reference_id=CUS-1", status: 200},
		{op: "GET /customers/{id}", path: "/customers/{cus}", status: 200},
		{op: "PATCH /customers/{id}", path: "/customers/{cus}", body: map[string]any{"reference_id": "CUS-2"}, status: 202},
		{op: "POST /devices", path: "/devices", body: map[string]any{"reference_id": "EV-1"}, name: "dev", status: 201},
		{op: "GET /devices", path: "/devices?limit=10", status: 200},
		{op: "GET /devices/{id}", path: "/devices/{dev}", status: 200},
		{op: "PATCH /devices/{id}", path: "/devices/{dev}", body: map[string]any{"reference_id": "EV-2"}, status: 200},
		{op: "POST /locations", path: "/locations", body: map[string]any{"reference_id": "HOME-1", "customer_id": "{cus}",
			"postal_address": map[string]any{"address_line1": "1 High St", "city": "London", "post_code": "WC2N 5EH", "country_code": "GB"}},
			name: "loc", status: 201},
		{op: "GET /locations", path: "/locations?customer_id={cus}", status: 200},
		{op: "GET /locations/{id}", path: "/locations/{loc}", status: 200},
		{op: "PATCH /locations/{id}", path: "/locations/{loc}", body: map[string]any{"reference_id": "HOME-2"}, status: 200},
		{op: "POST /tariffs/elements", path: "/tariffs/elements", body: map[string]any{"location_id": "{loc}", "direction": "IMPORT",
			"type": "COMMODITY", "display_name": "Flat", "contract_start_date": "2024-01-01T00:00:00Z",
			"contract_end_date": "2030-01-01T00:00:00Z", "schedule": schedule}, name: "trf", status: 200},
		{op: "GET /tariffs/elements", path: "/tariffs/elements?location_id={loc}&direction=IMPORT&type=COMMODITY", status: 200},
		{op: "GET /tariffs/elements/{id}", path: "/tariffs/elements/{trf}", status: 200},
		{op: "PATCH /tariffs/elements/{id}", path: "/tariffs/elements/{trf}", body: map[string]any{"display_name": "Flat rate"}, status: 200},
		{op: "GET /locations/{id}/status", path: "/locations/{loc}/status", status: 200},
		{op: "PUT /meters/interval", path: "/meters/interval", body: []any{record}, name: "bat", status: 200},
		{op: "GET /meters/batch", path: "/meters/batch?batch_id={bat}", status: 200},
		{op: "PUT /meters/cumulative/epoch", path: "/meters/cumulative/epoch", body: map[string]any{"location_id": "{loc}",
			"device_id": "{dev}", "session_reference_id": "S-2", "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "KWH",
			"data": []any{map[string]any{"time": 1717408800, "value": 10.5, "record_reference_id": "C-1"},
				map[string]any{"time": 1717410600, "value": 11}}}, status: 200},
		{op: "GET /tariffs/rates/{id}", path: "/tariffs/rates/{loc}?include_tariff=true&include_carbon=true&direction=IMPORT&" + window, status: 200},
		{op: "GET /tariffs/audit/{id}", path: "/tariffs/audit/{loc}?direction=IMPORT&" + window, status: 200},
		{op: "GET /slots/threshold/{id}", path: "/slots/threshold/{loc}?segment=HIGH&relative=0.5&direction=IMPORT&" + window, status: 200},
		{op: "GET /slots/time/{id}", path: "/slots/time/{loc}?segment=LOW&duration=60&" + window, status: 200},
		{op: "POST /costs/interval/{id}", path: "/costs/interval/{dev}?aggregation=DAY&direction=IMPORT&include_tariff=true&include_carbon=true",
			body: map[string]any{"start_time": "2024-06-01T00:00:00Z", "end_time": "2024-07-01T00:00:00Z"}, status: 200},
		{op: "POST /costs/session/{id}", path: "/costs/session/S-1?include_tariff=true&include_carbon=true", status: 200},
		{op: "POST /connect/tariff/token", path: "/connect/tariff/token", body: map[string]any{"callback_uri": "https://app.example/done",
			"direction": "IMPORT", "type": "COMMODITY", "location_id": "{loc}"}, name: "cot", status: 200},
		{op: "GET /connect/tariff/token", path: "/connect/tariff/token?connect_token={cot}", status: 422}, // the page is not completed
		{op: "POST /connect/tariff/batch", path: "/connect/tariff/batch", body: map[string]any{
			"session": map[string]any{"direction": "EXPORT", "type": "COMMODITY", "location_id": "{loc}"},
			"tariff": map[string]any{"type": "FIXED", "name": "Export", "data": schedule,
				"contract": map[string]any{"start_date": "2024-01-01T00:00:00Z", "end_date": "2030-01-01T00:00:00Z"}}}, status: 200},
		{op: "POST /schedules", path: "/schedules?include_carbon=true", body: scheduleBody, status: 200},
		{op: "POST /costs/instant", path: "/costs/instant?include_tariff=true&include_carbon=true&non_persistent=true", body: record, status: 200},
		{op: "GET /events", path: "/events?event_type=location.create&limit=5", name: "evt", status: 200},
		{op: "GET /events/{id}", path: "/events/{evt}", status: 200},
		{op: "DELETE /tariffs/elements/{id}", path: "/tariffs/elements/{trf}", status: 202},
		{op: "DELETE /devices/{id}", path: "/devices/{dev}", status: 202},
		{op: "DELETE /customers/{id}", path: "/customers/{cus}", status: 202},
		{op: "DELETE /locations/{id}", path: "/locations/{loc}", status: 202},
		{op: "GET /login", status: 200},
	}
	ids := map[string]string{}
	expand := func(s string) string {
		for n, id := range ids {
			s = strings.ReplaceAll(s, "{"+n+"}", id)
		}
		return s
	}
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.op] = true
		method, _, _ := strings.Cut(c.op, " ")
		req := apitest.Request{Method: method, Path: expand(c.path), Auth: acc.Test()}
		if c.op == "GET /login" {
			req.Path, req.Auth = "/login", "Basic "+base64.StdEncoding.EncodeToString([]byte(acc.ID+":"+acc.TestKey))
		}
		if c.body != nil {
			raw, _ := json.Marshal(c.body)
			req.Body = []byte(expand(string(raw)))
			if err := apitest.CheckFlatPeakRequest(method, req.Path, req.Body.([]byte)); err != nil {
				t.Fatalf("%s: the test's request is not valid for FlatPeak: %v", c.op, err)
			}
		}
		r := api.Do(req) // apitest checks the answer against FlatPeak's document
		if r.Status != c.status {
			t.Fatalf("%s %s: %d %s, want %d", method, req.Path, r.Status, r.Body, c.status)
		}
		if c.name != "" {
			ids[c.name] = idOf(t, r)
		}
		// Without credentials: 403 with FlatPeak's error body (checked by apitest).
		req.Auth = ""
		if r := api.Do(req); r.Status != 403 || r.Map(t)["message"] != "Bad credentials" {
			t.Errorf("%s without credentials: %d %s, want 403 Bad credentials", c.op, r.Status, r.Body)
		}
	}
	// Every FlatPeak operation is routed and tried above.
	ops, err := apitest.FlatPeakOperations()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ops)
	param := regexp.MustCompile(`:(\w+)`)
	routed := map[string]bool{}
	for _, rt := range api.App.API.Routes() {
		routed[rt.Method+" "+param.ReplaceAllString(rt.Path, "{id}")] = true
	}
	for _, op := range ops {
		if !routed[op] {
			t.Errorf("FlatPeak's %s has no kwhouse route", op)
		} else if !covered[op] {
			t.Errorf("kwhouse routes FlatPeak's %s but the test never calls it", op)
		}
	}
	if len(ops) != 38 {
		t.Errorf("FlatPeak's document lists %d operations, want its 38", len(ops))
	}
}

// idOf is the answer's id, or the first listed object's.
func idOf(t *testing.T, r apitest.Response) string {
	m := r.Map(t)
	if id, ok := m["id"].(string); ok {
		return id
	}
	if tok, ok := m["connect_token"].(string); ok {
		return tok
	}
	if data, ok := m["data"].([]any); ok && len(data) > 0 {
		return data[0].(map[string]any)["id"].(string)
	}
	t.Fatalf("no id in %s", r.Body)
	return ""
}
