package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/strictjson"
)

// limitBody caps request bodies at n bytes; a larger one is answered 413 when read.
func (s *Server) limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			s.writeError(c, tooLarge(n))
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		c.Next()
	}
}

func tooLarge(n int64) error {
	return &kwhouse.Error{Kind: kwhouse.KindTooLarge, Code: "body_too_large",
		Message: "the request body is larger than " + byteSize(n)}
}

// decodeBody reads a JSON object body into v, rejecting unknown fields, wrong types,
// duplicate names and trailing data, with the offending field as param.
func decodeBody(c *gin.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(body, v)
}

// decodeOptionalBody is decodeBody for a route whose body may be left out: an empty body
// reads as {} (a body of null is still refused).
func decodeOptionalBody(c *gin.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	return decodeJSON(body, v)
}

// readBody reads the whole body (of at most limitBody's bytes).
func readBody(c *gin.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	return body, nil
}

// bodyReadError is the answer to a body that could not be read: 413 past a byte limit,
// 400 otherwise (a client that stopped sending, or sent too slowly: http.read_timeout).
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return kwhouse.Invalid("unreadable_body", "", "could not read the request body: %v", err)
}

// decodeJSON decodes a JSON object strictly into v.
func decodeJSON(body []byte, v any) error { return strictjson.Decode(body, v) }

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// decodeLenient reads the fields of v that body has, ignoring the rest.
func decodeLenient(body []byte, v any) error {
	return json.Unmarshal(body, v)
}

// withoutNonPersistent drops the "non_persistent" member of a JSON object, which the
// reference allows inside a record body, so the record can be stored as sent otherwise.
func withoutNonPersistent(body []byte) []byte {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(body, &m); err != nil {
		return body // the record parser reports what is wrong
	}
	if _, ok := m["non_persistent"]; !ok {
		return body
	}
	delete(m, "non_persistent")
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}
