package httpapi

import (
	"strconv"
	"strings"
)

// acceptsGzip reports whether an Accept-Encoding header value takes a gzip body: gzip (or
// x-gzip) or "*" listed with a weight above 0, and gzip not refused by name (q=0).
func acceptsGzip(header string) bool {
	star := false
	for _, item := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(item, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		ok := weightAboveZero(params)
		switch coding {
		case "gzip", "x-gzip":
			return ok
		case "*":
			star = ok
		}
	}
	return star
}

// weightAboveZero reads the q parameter of an Accept-Encoding item (absent: 1).
func weightAboveZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q > 0
		}
	}
	return true
}
