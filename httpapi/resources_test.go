package httpapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestCustomerLifecycle(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	do := api.As(acc.Test())
	cu := do("POST", "/customers", map[string]any{"reference_id": "CUS-1"}).Map(t)
	id := cu["id"].(string)
	if cu["object"] != "customer" || cu["reference_id"] != "CUS-1" || cu["account_id"] != acc.ID || cu["live_mode"] != false {
		t.Fatalf("created customer %v", cu)
	}
	if got := do("GET", "/customers/"+id, nil).Map(t); got["reference_id"] != "CUS-1" {
		t.Fatalf("retrieved %v", got)
	}
	if got := do("PATCH", "/customers/"+id, map[string]any{"reference_id": "CUS-2"}).Map(t); got["reference_id"] != "CUS-2" {
		t.Fatalf("patched %v", got)
	}
	if got := do("GET", "/customers/"+id, nil).Map(t); got["reference_id"] != "CUS-2" {
		t.Fatalf("after patch, retrieved %v (stale cache?)", got)
	}
	if list := do("GET", "/customers?reference_id=CUS-2", nil).Map(t); len(list["data"].([]any)) != 1 {
		t.Fatalf("filter by new reference_id: %v", list)
	}
	if list := do("GET", "/customers?reference_id=CUS-1", nil).Map(t); len(list["data"].([]any)) != 0 {
		t.Fatalf("old reference_id still matches: %v", list)
	}
	if r := do("DELETE", "/customers/"+id, nil); r.Status != http.StatusAccepted {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := do(m, "/customers/"+id, nil); r.Status != 404 {
			t.Errorf("%s after delete: %d, want 404", m, r.Status)
		}
	}
	if r := do("PATCH", "/customers/"+id, map[string]any{"reference_id": "x"}); r.Status != 404 {
		t.Errorf("PATCH after delete: %d, want 404", r.Status)
	}
	// The reference_id of a deleted customer is free again.
	if r := do("POST", "/customers", map[string]any{"reference_id": "CUS-2"}); r.Status != 201 {
		t.Errorf("reuse of a deleted customer's reference_id: %d %s", r.Status, r.Body)
	}
}

func TestListsPageNewestFirstWithCursors(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	var ids []string // creation order
	for i := 0; i < 5; i++ {
		d := api.Do(apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: map[string]any{"reference_id": fmt.Sprintf("dev-%d", i)}}).Map(t)
		ids = append(ids, d["id"].(string))
	}
	page := func(q string) ([]string, bool) {
		r := api.Do(apitest.Request{Method: "GET", Path: "/devices" + q, Auth: acc.Test()})
		if r.Status != 200 {
			t.Fatalf("GET /devices%s: %d %s", q, r.Status, r.Body)
		}
		m := r.Map(t)
		if m["url"] != "/devices" || m["object"] != "list" {
			t.Fatalf("envelope %v", m)
		}
		var out []string
		for _, d := range m["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out, m["has_more"].(bool)
	}
	all, more := page("")
	if want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}; fmt.Sprint(all) != fmt.Sprint(want) || more {
		t.Fatalf("default page %v more=%v, want %v newest first", all, more, want)
	}
	p1, more1 := page("?limit=2")
	p2, more2 := page("?limit=2&starting_after=" + p1[1])
	p3, more3 := page("?limit=2&starting_after=" + p2[1])
	if fmt.Sprint(p1, p2, p3) != fmt.Sprint([]string{ids[4], ids[3]}, []string{ids[2], ids[1]}, []string{ids[0]}) || !more1 || !more2 || more3 {
		t.Fatalf("pages %v %v %v (more %v %v %v)", p1, p2, p3, more1, more2, more3)
	}
	back, moreBack := page("?limit=2&ending_before=" + ids[1])
	if fmt.Sprint(back) != fmt.Sprint([]string{ids[3], ids[2]}) || !moreBack {
		t.Fatalf("ending_before page %v more=%v, want [%s %s] with more", back, moreBack, ids[3], ids[2])
	}
	for q, code := range map[string]string{
		"?limit=0": "invalid_limit", "?limit=101": "invalid_limit", "?limit=x": "invalid_limit",
		"?starting_after=" + ids[0] + "&ending_before=" + ids[1]: "conflicting_cursors",
		"?starting_after=cus_000000000000000000000000":           "invalid_cursor",
		"?starting_after=dev_000000000000000000000000":           "invalid_cursor",
	} {
		r := api.Do(apitest.Request{Method: "GET", Path: "/devices" + q, Auth: acc.Test()})
		if r.Status != 400 || r.Map(t)["code"] != code {
			t.Errorf("GET /devices%s: %d %s, want 400 %s", q, r.Status, r.Body, code)
		}
	}
}

func TestLocationDerivesZoneAndCurrency(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	post := func(body any) apitest.Response {
		return api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(), Body: body})
	}
	for _, tc := range []struct {
		body         map[string]any
		zone, curncy string
	}{
		{map[string]any{"postal_address": map[string]any{"country_code": "GB", "city": "London"}}, "Europe/London", "GBP"},
		{map[string]any{"postal_address": map[string]any{"country_code": "DE"}}, "Europe/Berlin", "EUR"},
		{map[string]any{"postal_address": map[string]any{"country_code": "US"}, "geo_location": map[string]any{"lat": 40.71, "lng": -74.0}}, "America/New_York", "USD"},
		{map[string]any{"postal_address": map[string]any{"country_code": "AU"}, "geo_location": map[string]any{"lat": -33.87, "lng": 151.21}}, "Australia/Sydney", "AUD"},
		{map[string]any{"timezone": "America/Chicago", "currency_code": "USD"}, "America/Chicago", "USD"},
		{map[string]any{"postal_address": map[string]any{"country_code": "GB"}, "timezone": "Europe/Dublin", "currency_code": "EUR"}, "Europe/Dublin", "EUR"},
	} {
		r := post(tc.body)
		if r.Status != 201 {
			t.Errorf("POST %v: %d %s", tc.body, r.Status, r.Body)
			continue
		}
		l := r.Map(t)
		if l["timezone"] != tc.zone || l["currency_code"] != tc.curncy {
			t.Errorf("POST %v: zone %v currency %v, want %s %s", tc.body, l["timezone"], l["currency_code"], tc.zone, tc.curncy)
		}
		st := l["tariff_status"].(map[string]any)
		if st["commodity_import"] != "NOT_CONNECTED" || st["non_commodity_export"] != "NOT_SUPPORTED" || len(l["tariff_elements"].([]any)) != 0 {
			t.Errorf("new location's tariffs: %v %v", st, l["tariff_elements"])
		}
	}
	for _, tc := range []struct {
		body  map[string]any
		code  string
		param string
	}{
		{map[string]any{"postal_address": map[string]any{"country_code": "US"}}, "timezone_required", "timezone"},
		{map[string]any{}, "timezone_required", "timezone"},
		{map[string]any{"timezone": "Europe/London"}, "currency_required", "currency_code"},
		{map[string]any{"timezone": "Mars/Olympus", "currency_code": "GBP"}, "invalid_timezone", "timezone"},
		{map[string]any{"timezone": "Local", "currency_code": "GBP"}, "invalid_timezone", "timezone"},
		{map[string]any{"timezone": "Europe/London", "currency_code": "XYZ"}, "invalid_currency", "currency_code"},
		{map[string]any{"postal_address": map[string]any{"country_code": "UK"}}, "invalid_country", "postal_address.country_code"},
		{map[string]any{"postal_address": map[string]any{"country_code": "GB"}, "geo_location": map[string]any{"lat": 91, "lng": 0}}, "invalid_coordinate", "geo_location.lat"},
		{map[string]any{"postal_address": map[string]any{"country_code": "GB"}, "customer_id": "cus_000000000000000000000000"}, "resource_missing", "customer_id"},
		{map[string]any{"postal_address": map[string]any{"country_code": "GB"}, "reference_id": string(make([]byte, 256))}, "string_too_long", "reference_id"},
	} {
		r := post(tc.body)
		m := r.Map(t)
		if r.Status != 400 || m["code"] != tc.code || m["param"] != tc.param {
			t.Errorf("POST %v: %d %v/%v, want 400 %s/%s", tc.body, r.Status, m["code"], m["param"], tc.code, tc.param)
		}
	}
	list := api.Do(apitest.Request{Method: "GET", Path: "/locations", Auth: acc.Test()}).Map(t)
	if n := len(list["data"].([]any)); n != 6 {
		t.Errorf("%d locations stored, want 6: a refused create must store nothing", n)
	}
}

func TestLocationUpdateStatusAndCustomerLink(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	do := api.As(acc.Test())
	cus := do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	loc := do("POST", "/locations", map[string]any{"customer_id": cus, "reference_id": "L1",
		"postal_address": map[string]any{"country_code": "GB", "post_code": "WC2N 5EH"}}).Map(t)
	id := loc["id"].(string)

	if got := do("GET", "/customers/"+cus, nil).Map(t)["locations"].([]any); len(got) != 1 || got[0] != id {
		t.Fatalf("customer locations %v, want [%s]", got, id)
	}
	if list := do("GET", "/locations?customer_id="+cus, nil).Map(t); len(list["data"].([]any)) != 1 {
		t.Fatalf("filter by customer_id: %v", list)
	}
	// Deleting the customer keeps its locations with customer_id cleared (FlatPeak: 202).
	cus2 := do("POST", "/customers", map[string]any{}).Map(t)["id"].(string)
	loc2 := do("POST", "/locations", map[string]any{"customer_id": cus2, "postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	if r := do("DELETE", "/customers/"+cus2, nil); r.Status != 202 {
		t.Fatalf("deleting a customer with a location: %d %s, want 202", r.Status, r.Body)
	}
	if r := do("GET", "/customers/"+cus2, nil); r.Status != 404 {
		t.Errorf("customer after delete: %d, want 404", r.Status)
	}
	if got := do("GET", "/locations/"+loc2, nil).Map(t); got["customer_id"] != nil || got["id"] != loc2 {
		t.Errorf("location after its customer's delete: %v, want it kept without customer_id", got)
	}
	if list := do("GET", "/locations?customer_id="+cus2, nil).Map(t); len(list["data"].([]any)) != 0 {
		t.Errorf("locations still filed under the deleted customer: %v", list["data"])
	}
	ev := do("GET", "/events?object_id="+loc2+"&event_type=location.update", nil).Map(t)["data"].([]any)
	if len(ev) != 1 || ev[0].(map[string]any)["data"].(map[string]any)["customer_id"] != nil {
		t.Errorf("location.update events after the customer's delete: %v, want one without customer_id", ev)
	}
	// The other location of the first customer is untouched.
	if got := do("GET", "/locations/"+id, nil).Map(t); got["customer_id"] != cus {
		t.Errorf("another customer's location changed: %v", got)
	}
	// Moving the address to Germany re-derives zone and currency.
	up := do("PATCH", "/locations/"+id, map[string]any{"postal_address": map[string]any{"country_code": "DE"}}).Map(t)
	if up["timezone"] != "Europe/Berlin" || up["currency_code"] != "EUR" || up["reference_id"] != "L1" {
		t.Fatalf("after PATCH: %v", up)
	}
	st := do("GET", "/locations/"+id+"/status", nil)
	if st.Status != 200 {
		t.Fatalf("status: %d %s", st.Status, st.Body)
	}
	sm := st.Map(t)
	if sm["object"] != "location_status" || sm["tariff_status"].(map[string]any)["commodity_import"].(map[string]any)["status"] != "NOT_CONNECTED" {
		t.Fatalf("status body %v", sm)
	}
	if r := do("DELETE", "/locations/"+id, nil); r.Status != 202 {
		t.Fatalf("delete location: %d", r.Status)
	}
	for _, p := range []string{"/locations/" + id, "/locations/" + id + "/status"} {
		if r := do("GET", p, nil); r.Status != 404 {
			t.Errorf("GET %s after delete: %d", p, r.Status)
		}
	}
	if r := do("DELETE", "/customers/"+cus, nil); r.Status != 202 {
		t.Errorf("deleting the customer once its location is gone: %d %s", r.Status, r.Body)
	}
}

func TestDuplicateReferenceIDIsConflictEvenUnderConcurrentCreates(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	for _, path := range []string{"/customers", "/devices", "/locations"} {
		body := map[string]any{"reference_id": "same", "postal_address": map[string]any{"country_code": "GB"}}
		if path != "/locations" {
			body = map[string]any{"reference_id": "same"}
		}
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = api.Do(apitest.Request{Method: "POST", Path: path, Auth: acc.Test(), Body: body}).Status
			}(i)
		}
		wg.Wait()
		ok, conflict := 0, 0
		for _, s := range statuses {
			switch s {
			case 201:
				ok++
			case 409:
				conflict++
			}
		}
		if ok != 1 || conflict != n-1 {
			t.Errorf("%s: %d created, %d conflicts of %d concurrent creates (%v), want 1 and %d", path, ok, conflict, n, statuses, n-1)
		}
		list := api.Do(apitest.Request{Method: "GET", Path: path + "?reference_id=same", Auth: acc.Test()}).Map(t)
		if got := len(list["data"].([]any)); got != 1 {
			t.Errorf("%s: %d stored with reference_id same, want 1", path, got)
		}
	}
	// PATCH onto a taken reference_id is a conflict too.
	d := api.Do(apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: map[string]any{"reference_id": "other"}}).Map(t)
	r := api.Do(apitest.Request{Method: "PATCH", Path: "/devices/" + d["id"].(string), Auth: acc.Test(), Body: map[string]any{"reference_id": "same"}})
	if r.Status != 409 || r.Map(t)["param"] != "reference_id" {
		t.Errorf("PATCH to a taken reference_id: %d %s", r.Status, r.Body)
	}
}

func TestDeviceNeedsReference(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("a")
	r := api.Do(apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: map[string]any{}})
	if m := r.Map(t); r.Status != 400 || m["code"] != "parameter_missing" || m["param"] != "reference_id" {
		t.Fatalf("device without reference_id: %d %s", r.Status, r.Body)
	}
	d := api.Do(apitest.Request{Method: "POST", Path: "/devices", Auth: acc.Test(), Body: map[string]any{"reference_id": "hp-1"}}).Map(t)
	if d["object"] != "device" || d["reference_id"] != "hp-1" {
		t.Fatalf("device %v", d)
	}
}
