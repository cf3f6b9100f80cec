// Package strictjson decodes JSON objects the way kwhouse's API reads bodies: strictly,
// with each problem a kwhouse error naming the offending field (schedule[0].hours). The
// HTTP API and the bulk import (package onboard) read the same objects, and say the same
// of them.
package strictjson

import (
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kwhouse/kwhouse"
)

// Decode decodes the JSON object body strictly into v: unknown members, wrong types,
// duplicate names and trailing data are refused with a 400 error naming the field. An
// empty body, and a body that is just null (which would leave v as it is), are refused.
func Decode(body []byte, v any) error {
	trimmed := strings.TrimSpace(string(body))
	if len(trimmed) == 0 || trimmed == "null" {
		return kwhouse.Invalid("invalid_json", "", "the request body must be %s", wantedShape(v))
	}
	if !utf8.Valid(body) {
		return kwhouse.Invalid("invalid_utf8", "", "the request body is not valid UTF-8")
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err != nil {
		return jsonError(err)
	}
	return nil
}

// wantedShape names what v decodes from: a JSON array for a slice, else an object.
func wantedShape(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Slice {
		return "a JSON array"
	}
	return "a JSON object"
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

func isTimeType(goType string) bool {
	t := strings.TrimLeft(goType, "*")
	return t == "time.Time" || t == "catalog.Timestamp"
}
