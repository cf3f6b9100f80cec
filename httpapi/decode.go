package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kwhouse/kwhouse"
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
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		return kwhouse.Invalid("unreadable_body", "", "could not read the request body: %v", err)
	}
	return decodeJSON(body, v)
}

// decodeJSON decodes a JSON object strictly into v.
func decodeJSON(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return kwhouse.Invalid("invalid_json", "", "the request body must be a JSON object")
	}
	if !utf8.Valid(body) {
		return kwhouse.Invalid("invalid_utf8", "", "the request body is not valid UTF-8")
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError turns a decoding error into a 400 naming the field.
func jsonError(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		param := paramOf(se.JSONPointer)
		switch {
		case errors.Is(se.Err, json.ErrUnknownName):
			return kwhouse.Invalid("unknown_field", param, "unknown field %q", param)
		case se.JSONKind == '"' && se.GoType != nil && isTimeType(se.GoType.String()):
			return kwhouse.Invalid("invalid_value", param, "must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z")
		case se.JSONKind != 0 && se.GoType != nil:
			return kwhouse.Invalid("invalid_type", param, "wrong type: got JSON %s, want %s", kindName(se.JSONKind), typeName(se.GoType.String()))
		}
		return kwhouse.Invalid("invalid_value", param, "invalid value")
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return kwhouse.Invalid("invalid_json", paramOf(syn.JSONPointer), "malformed JSON at byte %d", syn.ByteOffset)
	}
	return kwhouse.Invalid("invalid_json", "", "malformed JSON")
}

// paramOf turns a JSON pointer (/schedule/0/hours) into a field path (schedule[0].hours).
func paramOf(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return k.String()
}

func typeName(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "string":
		return "string"
	case strings.HasPrefix(t, "float"), strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "number"
	case t == "bool":
		return "boolean"
	case strings.HasPrefix(t, "[]"):
		return "array"
	}
	return "object"
}

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

func isTimeType(goType string) bool {
	t := strings.TrimLeft(goType, "*")
	return t == "time.Time" || t == "catalog.Timestamp"
}

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
