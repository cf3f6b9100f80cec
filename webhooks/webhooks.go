// Package webhooks pushes events to the endpoints accounts register, on the Standard
// Webhooks scheme: the endpoints (documents, scoped like every resource), the signature,
// the address guard that keeps live-mode deliveries off internal networks, and the
// dispatcher that reads new events from the outbox and delivers them with retries.
package webhooks

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// KindEndpoint is the document kind of webhook endpoints.
const KindEndpoint = "webhook_endpoint"

// Event types this package emits.
const (
	EventDisabled = "webhook.disabled" // an endpoint failed for webhooks.disable_after and was disabled
	EventTest     = "webhook.test"     // sent by POST /webhooks/{id}/test to that endpoint only
	EventRevised  = "cost.revised"     // a closed local day's energy or money changed

	EventBatchCompleted = "meter.batch.completed" // a request body of readings was stored
)

// EventTypes are the event types an endpoint may subscribe to.
var EventTypes = []string{
	"carbon_series.create", EventRevised,
	"customer.create", "customer.delete", "customer.update",
	"device.create", "device.delete", "device.update",
	"location.create", "location.delete", "location.update",
	"market.create", EventBatchCompleted,
	"tariff.create", "tariff.delete", "tariff.update",
	EventDisabled,
}

// Endpoint is a registered webhook endpoint. Secret is shown only when it is made (create
// and rotate_secret); FailingSince is the first failed attempt since the last success.
type Endpoint struct {
	ID           string             `json:"id"`
	Object       string             `json:"object"`
	LiveMode     bool               `json:"live_mode"`
	URL          string             `json:"url"`
	EventTypes   []string           `json:"event_types"`
	Description  string             `json:"description,omitempty"`
	Disabled     bool               `json:"disabled"`
	Secret       string             `json:"secret,omitempty"`
	FailingSince *catalog.Timestamp `json:"failing_since,omitempty"`
	TimeCreated  catalog.Timestamp  `json:"time_created"`
	AccountID    string             `json:"account_id"`
}

// Wants reports whether the endpoint takes events of type t (all but webhook.test when it
// names none).
func (e Endpoint) Wants(t string) bool {
	if t == EventTest {
		return false
	}
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, t)
}

// EndpointInput is the body of POST /webhooks and PATCH /webhooks/{id}.
type EndpointInput struct {
	URL         *string   `json:"url"`
	EventTypes  *[]string `json:"event_types"`
	Description *string   `json:"description"`
	Disabled    *bool     `json:"disabled"`
}

// maxURLLen bounds an endpoint URL.
const maxURLLen = 2048

// Validate reports every problem of the input. creating requires url; live selects the
// live-mode rules for the URL; allowPrivate lifts the refusal of internal addresses.
func (in EndpointInput) Validate(creating, live, allowPrivate bool) error {
	var p kwhouse.Problems
	switch {
	case in.URL == nil && creating:
		p.Add("parameter_missing", "url", "url is required")
	case in.URL != nil:
		if err := checkURL(*in.URL, live, allowPrivate); err != nil {
			p.AddErr(err)
		}
	}
	if in.EventTypes != nil {
		for i, t := range *in.EventTypes {
			if !slices.Contains(EventTypes, t) {
				p.Add("unknown_event_type", "event_types["+strconv.Itoa(i)+"]", "%q is not an event type (%s)", t, strings.Join(EventTypes, ", "))
			}
		}
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > catalog.MaxStringLen {
		p.Add("string_too_long", "description", "at most %d characters", catalog.MaxStringLen)
	}
	return p.Err()
}

// checkURL applies the URL rules: https, or http to a loopback host in test mode only;
// in live mode a literal internal address is refused unless allowPrivate (host names are
// checked when they are resolved, at every delivery).
func checkURL(raw string, live, allowPrivate bool) error {
	bad := func(code, format string, args ...any) error { return kwhouse.Invalid(code, "url", format, args...) }
	if len(raw) > maxURLLen {
		return bad("string_too_long", "at most %d characters", maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return bad("invalid_url", "not an absolute URL: %q", raw)
	}
	if u.User != nil {
		return bad("invalid_url", "credentials in the URL are not accepted")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if live || !loopbackHost(u.Hostname()) {
			return bad("insecure_url", "must be https (http only to a loopback host, in test mode)")
		}
	default:
		return bad("invalid_url", "must be https, got scheme %q", u.Scheme)
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && live && !allowPrivate && Internal(ip) {
		return bad("private_address", "%s is an internal address, refused in live mode", ip)
	}
	return nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Internal reports whether ip is private, loopback, link-local (169.254.0.0/16, with the
// cloud metadata address), unspecified, or otherwise not a public unicast address.
func Internal(ip net.IP) bool {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || sharedOrReserved(ip)
}

// sharedOrReserved: carrier-grade NAT 100.64.0.0/10, 0.0.0.0/8 and 240.0.0.0/4.
func sharedOrReserved(ip net.IP) bool {
	if len(ip) != net.IPv4len {
		return false
	}
	return ip[0] == 0 || ip[0] >= 240 || (ip[0] == 100 && ip[1]&0xc0 == 64)
}

// Scope is the account and mode the endpoint belongs to.
func (e Endpoint) Scope() kwhouse.Scope {
	return kwhouse.Scope{AccountID: e.AccountID, LiveMode: e.LiveMode}
}
