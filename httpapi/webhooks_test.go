package httpapi_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestWebhookEndpointsLifecycle(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("hooks")
	do := api.As(acc.Test())

	r := do("POST", "/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "description": "ops",
		"event_types": []string{"device.create", "cost.revised"}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.Map(t)
	id, secret := created["id"].(string), created["secret"].(string)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 || len(key) > 32 {
		t.Fatalf("secret %q: want whsec_ and the base64 of 24-32 bytes (%d bytes, %v)", secret, len(key), err)
	}
	got := do("GET", "/webhooks/"+id, nil).Map(t)
	if _, shown := got["secret"]; shown || got["url"] != "http://127.0.0.1:9/hook" || got["disabled"] != false {
		t.Errorf("GET shows %v: want the endpoint without its secret", got)
	}
	list := do("GET", "/webhooks?limit=1", nil).Map(t)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id || data[0].(map[string]any)["secret"] != nil {
		t.Errorf("list: %v", list)
	}

	r = do("PATCH", "/webhooks/"+id, map[string]any{"disabled": true, "event_types": []string{}})
	if p := r.Map(t); r.Status != 200 || p["disabled"] != true || len(p["event_types"].([]any)) != 0 || p["secret"] != nil {
		t.Errorf("PATCH: %d %s", r.Status, r.Body)
	}
	rot := do("POST", "/webhooks/"+id+"/rotate_secret", nil).Map(t)
	if s, _ := rot["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == secret {
		t.Errorf("rotate_secret gave %q (old %q)", s, secret)
	}

	other := api.As(api.NewAccount("other").Test())
	if r := other("GET", "/webhooks/"+id, nil); r.Status != 404 {
		t.Errorf("another account reads the endpoint: %d", r.Status)
	}
	if r := api.As(acc.Live())("GET", "/webhooks/"+id, nil); r.Status != 404 {
		t.Errorf("live mode reads a test-mode endpoint: %d", r.Status)
	}
	if r := do("DELETE", "/webhooks/"+id, nil); r.Status != 202 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	if r := do("GET", "/webhooks/"+id, nil); r.Status != 404 {
		t.Errorf("GET after DELETE: %d", r.Status)
	}
}

func TestWebhookEndpointValidation(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("hooks")
	test, live := api.As(acc.Test()), api.As(acc.Live())
	for _, c := range []struct {
		name  string
		do    func(string, string, any) apitest.Response
		body  map[string]any
		code  string
		param string
	}{
		{"no url", test, map[string]any{}, "parameter_missing", "url"},
		{"http to a public host", test, map[string]any{"url": "http://example.com/h"}, "insecure_url", "url"},
		{"http to loopback in live mode", live, map[string]any{"url": "http://127.0.0.1:8080/h"}, "insecure_url", "url"},
		{"not a URL", test, map[string]any{"url": "hooks"}, "invalid_url", "url"},
		{"ftp", test, map[string]any{"url": "ftp://example.com/h"}, "invalid_url", "url"},
		{"metadata address in live mode", live, map[string]any{"url": "https://169.254.169.254/latest"}, "private_address", "url"},
		{"private address in live mode", live, map[string]any{"url": "https://10.1.2.3/h"}, "private_address", "url"},
		{"unknown event type", test, map[string]any{"url": "https://example.com/h", "event_types": []string{"device.create", "device.explode"}},
			"unknown_event_type", "event_types[1]"},
		{"unknown field", test, map[string]any{"url": "https://example.com/h", "secret": "whsec_x"}, "", "secret"},
	} {
		r := c.do("POST", "/webhooks", c.body)
		e := r.Map(t)
		if r.Status != 400 || e["param"] != c.param || (c.code != "" && e["code"] != c.code) {
			t.Errorf("%s: %d %s, want 400 %s at %s", c.name, r.Status, r.Body, c.code, c.param)
		}
	}
	if data := test("GET", "/webhooks", nil).Map(t)["data"].([]any); len(data) != 0 {
		t.Errorf("refused creates stored %d endpoints", len(data))
	}
	ok := test("POST", "/webhooks", map[string]any{"url": "https://example.com/h"})
	if ok.Status != 201 {
		t.Fatalf("https create: %d %s", ok.Status, ok.Body)
	}
	id := ok.Map(t)["id"].(string)
	if r := test("PATCH", "/webhooks/"+id, map[string]any{"url": "http://example.com/h"}); r.Status != 400 || r.Map(t)["param"] != "url" {
		t.Errorf("PATCH to an http URL: %d %s", r.Status, r.Body)
	}
	if r := test("GET", "/webhooks/"+id, nil).Map(t); r["url"] != "https://example.com/h" {
		t.Errorf("a refused PATCH changed the endpoint: %v", r)
	}
	if r := test("POST", "/webhooks/"+id+"/deliveries/whd_000000000000000000000000/resend", nil); r.Status != 404 {
		t.Errorf("resend of an unknown delivery: %d %s", r.Status, r.Body)
	}
}
