package httpapi

import "testing"

// TestAcceptsGzipAsRFC9110Weighs: gzip goes to a client that lists gzip, x-gzip or "*"
// with a weight above 0, and never to one that refuses gzip by name or lists neither.
func TestAcceptsGzipAsRFC9110Weighs(t *testing.T) {
	for header, want := range map[string]bool{
		"":                      false,
		"identity":              false,
		"gzip":                  true,
		"GZip":                  true,
		"x-gzip":                true,
		"deflate, gzip":         true,
		"br;q=1.0, gzip;q=0.5":  true,
		"gzip;q=0":              false,
		"gzip; q=0.000":         false,
		"*":                     true,
		"*;q=0":                 false,
		"gzip;q=0, *":           false,
		"*, gzip;q=0":           false,
		"br, deflate":           false,
		"gzip;q=abc":            false,
		"identity;q=1, *;q=0.1": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("Accept-Encoding %q: gzip %t, want %t", header, got, want)
		}
	}
}
