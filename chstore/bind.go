package chstore

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ErrBind is returned when a statement's placeholders and its arguments do not match.
var ErrBind = errors.New("bind statement")

// NamedArg is a value for an @name placeholder.
type NamedArg struct {
	Name  string
	Value any
}

// Named binds value to @name.
func Named(name string, value any) NamedArg { return NamedArg{Name: name, Value: value} }

// Tuple is a value list for `col IN ?`: it renders as (a, b), where a slice renders as an
// array literal, which IN does not take.
type Tuple []any

// Set returns values as a Tuple.
func Set(values []string) Tuple {
	t := make(Tuple, len(values))
	for i, v := range values {
		t[i] = v
	}
	return t
}

// Bind renders sql with its placeholders replaced by literals: `?` takes the positional
// arguments in order, `@name` the NamedArg of that name. Placeholders inside string
// literals, quoted identifiers and comments are left alone. This is the only binding
// kwhouse does, so the text a server receives is the text the conformance suite replays.
func Bind(sql string, args ...any) (string, error) {
	named, positional := map[string]any{}, []any{}
	for _, a := range args {
		if n, ok := a.(NamedArg); ok {
			named[n.Name] = n.Value
			continue
		}
		positional = append(positional, a)
	}
	var b strings.Builder
	b.Grow(len(sql) + 16*len(args))
	next := 0
	for i := 0; i < len(sql); {
		if n := skipQuoted(sql, i); n > i {
			b.WriteString(sql[i:n])
			i = n
			continue
		}
		c := sql[i]
		switch {
		case c == '?':
			if next >= len(positional) {
				return "", fmt.Errorf("%w: more ? than the %d arguments", ErrBind, len(positional))
			}
			if err := writeLiteral(&b, positional[next]); err != nil {
				return "", fmt.Errorf("%w: argument %d: %v", ErrBind, next+1, err)
			}
			next++
			i++
		case c == '@' && i+1 < len(sql) && isNameByte(sql[i+1]):
			j := i + 1
			for j < len(sql) && isNameByte(sql[j]) {
				j++
			}
			v, ok := named[sql[i+1:j]]
			if !ok {
				return "", fmt.Errorf("%w: no value for @%s", ErrBind, sql[i+1:j])
			}
			if err := writeLiteral(&b, v); err != nil {
				return "", fmt.Errorf("%w: @%s: %v", ErrBind, sql[i+1:j], err)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	if next != len(positional) {
		return "", fmt.Errorf("%w: %d arguments for %d ?", ErrBind, len(positional), next)
	}
	return b.String(), nil
}

// skipQuoted returns the end of the string literal, quoted identifier or comment that
// starts at i, or i when none does.
func skipQuoted(s string, i int) int {
	switch {
	case s[i] == '\'' || s[i] == '`' || s[i] == '"':
		q := s[i]
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case q:
				return j + 1
			}
		}
		return len(s)
	case strings.HasPrefix(s[i:], "--"):
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	case strings.HasPrefix(s[i:], "/*"):
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2
		}
		return len(s)
	}
	return i
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var quoteReplacer = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// Literal renders v as a ClickHouse literal (see Bind).
func Literal(v any) (string, error) {
	var b strings.Builder
	err := writeLiteral(&b, v)
	return b.String(), err
}

// writeLiteral renders one value. Floats are cast to Float64 so that 1.0 stays a float
// (a bare 1 is read as UInt8); times are whole UTC seconds.
func writeLiteral(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case string:
		b.WriteByte('\'')
		quoteReplacer.WriteString(b, v)
		b.WriteByte('\'')
	case bool:
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	case float64:
		writeFloat(b, v)
	case float32:
		writeFloat(b, float64(v))
	case time.Time:
		b.WriteString("toDateTime(")
		b.WriteString(strconv.FormatInt(v.Unix(), 10))
		b.WriteString(", 'UTC')")
	case []float64:
		writeFloats(b, v)
	case Tuple:
		b.WriteByte('(')
		if err := writeList(b, reflect.ValueOf([]any(v))); err != nil {
			return err
		}
		b.WriteByte(')')
	default:
		return writeReflected(b, reflect.ValueOf(v))
	}
	return nil
}

func writeFloat(b *strings.Builder, f float64) {
	switch {
	case math.IsNaN(f):
		b.WriteString("cast('nan', 'Float64')")
	case math.IsInf(f, 0):
		fmt.Fprintf(b, "cast('%s', 'Float64')", map[bool]string{true: "inf", false: "-inf"}[f > 0])
	default:
		b.WriteString("cast(")
		b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		b.WriteString(", 'Float64')")
	}
}

// writeFloats renders a Float64 array as plain numbers, each with a '.' or an exponent
// so that ClickHouse reads the array as Array(Float64); a long array of casts would
// cost the parser far more. Non-finite values fall back to casts.
func writeFloats(b *strings.Builder, fs []float64) {
	b.WriteByte('[')
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			writeFloat(b, f)
			continue
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		b.WriteString(s)
		if !strings.ContainsAny(s, ".e") {
			b.WriteString(".0")
		}
	}
	b.WriteByte(']')
}

func writeReflected(b *strings.Builder, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.String:
		return writeLiteral(b, v.String())
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		if err := writeList(b, v); err != nil {
			return err
		}
		b.WriteByte(']')
	default:
		if !v.IsValid() {
			return fmt.Errorf("nil has no literal")
		}
		return fmt.Errorf("no literal for %s", v.Type())
	}
	return nil
}

func writeList(b *strings.Builder, v reflect.Value) error {
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeLiteral(b, v.Index(i).Interface()); err != nil {
			return err
		}
	}
	return nil
}
