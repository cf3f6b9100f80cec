package httpapi_test

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestEveryChangeEmitsAnEvent(t *testing.T) {
	clock := &testkit.Clock{}
	api := apitest.Start(t, apitest.Options{Now: clock.Now})
	acc := api.NewAccount("a")
	do := api.As(acc.Test())
	dev := do("POST", "/devices", map[string]any{"reference_id": "ev-1"}).Map(t)["id"].(string)
	do("PATCH", "/devices/"+dev, map[string]any{"reference_id": "ev-2"})
	do("DELETE", "/devices/"+dev, nil)
	cus := do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	loc := do("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)

	events := func(q string) []map[string]any {
		r := do("GET", "/events"+q, nil)
		if r.Status != 200 {
			t.Fatalf("GET /events%s: %d %s", q, r.Status, r.Body)
		}
		var out []map[string]any
		for _, e := range r.Map(t)["data"].([]any) {
			out = append(out, e.(map[string]any))
		}
		return out
	}
	devEvents := events("?object_id=" + dev)
	var types []string
	for _, e := range devEvents {
		types = append(types, e["type"].(string))
	}
	if want := "[device.delete device.update device.create]"; fmtSlice(types) != want {
		t.Fatalf("device events %v, want %s (newest first)", types, want)
	}
	created := devEvents[2]
	if data := created["data"].(map[string]any); data["id"] != dev || data["reference_id"] != "ev-1" || data["object"] != "device" {
		t.Errorf("device.create data %v", data)
	}
	if data := devEvents[1]["data"].(map[string]any); data["reference_id"] != "ev-2" {
		t.Errorf("device.update data is not the object after the change: %v", data)
	}
	if data := devEvents[0]["data"].(map[string]any); data["reference_id"] != "ev-2" {
		t.Errorf("device.delete data is not the object before deletion: %v", data)
	}
	if got := events("?event_type=device.create"); len(got) != 1 || got[0]["id"] != created["id"] {
		t.Errorf("event_type filter: %v", got)
	}
	if got := events("?event_type=customer.create&object_id=" + cus); len(got) != 1 {
		t.Errorf("customer.create of %s: %v", cus, got)
	}
	if got := events("?object_id=" + loc); len(got) != 1 || got[0]["type"] != "location.create" {
		t.Errorf("location.create: %v", got)
	}
	one := do("GET", "/events/"+created["id"].(string), nil)
	if one.Status != 200 || one.Map(t)["type"] != "device.create" {
		t.Fatalf("GET /events/{id}: %d %s", one.Status, one.Body)
	}
	if got := events("?limit=2"); len(got) != 2 {
		t.Errorf("limit=2 gave %d events", len(got))
	}

	clock.Advance(91 * 24 * time.Hour)
	if got := events(""); len(got) != 0 {
		t.Errorf("%d events older than 90 days still listed", len(got))
	}
	if r := do("GET", "/events/"+created["id"].(string), nil); r.Status != 404 {
		t.Errorf("GET of a 91-day-old event: %d, want 404", r.Status)
	}
}

func fmtSlice(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}
