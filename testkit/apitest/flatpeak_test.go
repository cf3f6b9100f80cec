package apitest

import (
	"net/http"
	"strings"
	"testing"
)

func TestFlatPeakRequestCheckRefusesWhatFlatPeakRefuses(t *testing.T) {
	if err := CheckFlatPeakRequest("POST", "/customers", []byte(`{"reference_id":"a"}`)); err != nil {
		t.Errorf("valid customer create refused: %v", err)
	}
	if err := CheckFlatPeakRequest("POST", "/customers", []byte(`{"reference_id":5}`)); err == nil {
		t.Error("a number as reference_id passed")
	}
	if err := CheckFlatPeakRequest("PUT", "/meters/interval", []byte(`[{"location_id":"loc_1","units":"WH","value":1,"start_time":"a"}]`)); err == nil {
		t.Error("a record without end_time passed")
	}
	if err := CheckFlatPeakRequest("POST", "/carbon/series", []byte(`{}`)); err == nil {
		t.Error("kwhouse's own route passed as a FlatPeak operation")
	}
}

func TestFlatPeakResponseCheckFindsWhatBreaksAClient(t *testing.T) {
	req := func(method, path string) *http.Request {
		r, _ := http.NewRequest(method, "http://x"+path, nil)
		return r
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body, want   string
	}{
		{"POST", "/customers", 201, `{"id":"cus_1","object":"customer","live_mode":false,"time_created":"2024-01-01T00:00:00Z","account_id":"acc_1"}`, ""},
		{"POST", "/customers", 200, `{"id":"cus_1"}`, "status 200 is not listed"},
		{"GET", "/customers/cus_1", 401, `{"message":"x"}`, ""}, // unlisted error status: FlatPeak's error shape
		{"GET", "/customers/cus_1", 400, `{"code":"x"}`, "no string message"},
		{"POST", "/costs/interval/loc_1", 200, `{"account_id":"a","data":[{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:00:00Z",
			"energy":{"value":1.5},"tariff":{"value":1,"confidence":1}}]}`, "integer"},
		{"GET", "/events", 200, `{"object":"list","data":[{"id":"evt_1","data":{"id":"cus_1","object":"customer"}}]}`, ""}, // Event.data resolved
		{"GET", "/carbon/series/cis_1", 200, `{}`, ""},                                                                     // not FlatPeak's
	} {
		got := checkFlatPeak(req(tc.method, tc.path), Response{Status: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)})
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s %d: finding %q, want one containing %q", tc.method, tc.path, tc.status, got, tc.want)
		}
	}
}
