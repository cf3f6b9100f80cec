//go:build chdb

package chdb

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// scanValue stores one JSONCompact value of ClickHouse type typ into dest, a pointer to
// the Go type clickhouse-go would scan it into.
func scanValue(raw json.RawMessage, typ string, dest any) error {
	v := reflect.ValueOf(dest)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("destination %T is not a pointer", dest)
	}
	return setValue(raw, typ, v.Elem())
}

func setValue(raw json.RawMessage, typ string, v reflect.Value) error {
	typ = unwrapType(typ)
	if t, ok := v.Addr().Interface().(*time.Time); ok {
		return setTime(raw, typ, t)
	}
	switch v.Kind() {
	case reflect.String:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(numberText(raw), 10, 64)
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(numberText(raw), 10, 64)
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := parseFloat(numberText(raw))
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.Bool:
		t := numberText(raw)
		v.SetBool(t == "true" || t == "1")
	case reflect.Slice:
		return setSlice(raw, typ, v)
	default:
		return fmt.Errorf("no scan into %s", v.Type())
	}
	return nil
}

// unwrapType drops wrappers that do not change the JSON form of a value.
func unwrapType(typ string) string {
	for _, w := range []string{"LowCardinality(", "Nullable("} {
		if strings.HasPrefix(typ, w) {
			return unwrapType(typ[len(w) : len(typ)-1])
		}
	}
	return typ
}

func setSlice(raw json.RawMessage, typ string, v reflect.Value) error {
	if !strings.HasPrefix(typ, "Array(") {
		return fmt.Errorf("scan of %s into %s", typ, v.Type())
	}
	elem := typ[len("Array(") : len(typ)-1]
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return err
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, it := range items {
		if err := setValue(it, elem, s.Index(i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// numberText is the text of a JSON number or of a quoted one (64-bit integers, nan, inf).
func numberText(raw json.RawMessage) string {
	return strings.Trim(string(raw), `"`)
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "nan", "-nan":
		return math.NaN(), nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// setTime parses a DateTime or DateTime64 in the zone its type names (UTC otherwise).
func setTime(raw json.RawMessage, typ string, t *time.Time) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	loc := time.UTC
	if i := strings.Index(typ, "'"); i >= 0 {
		name := typ[i+1 : strings.LastIndex(typ, "'")]
		l, err := time.LoadLocation(name)
		if err != nil {
			return err
		}
		loc = l
	}
	parsed, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, loc)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}
