package chstore

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestBindRendersLiterals(t *testing.T) {
	cases := []struct {
		sql  string
		args []any
		want string
	}{
		{"SELECT ?, ?", []any{"it's \\ ok", uint8(1)}, `SELECT 'it\'s \\ ok', 1`},
		{"x = ? AND y = ?", []any{int32(-7), 1.0}, "x = -7 AND y = cast(1, 'Float64')"},
		{"id IN ?", []any{Set([]string{"a", "b"})}, "id IN ('a', 'b')"},
		{"has(?, 3)", []any{[]int32{1, 3}}, "has([1, 3], 3)"},
		{"has(?, 3)", []any{[]int32{}}, "has([], 3)"},
		// Float arrays are plain numbers that ClickHouse still reads as Float64.
		{"p = ?", []any{[]float64{1, -0.25, 1e21, math.NaN()}}, "p = [1.0, -0.25, 1e+21, cast('nan', 'Float64')]"},
		{"t = ?", []any{time.Unix(1700000000, 0)}, "t = toDateTime(1700000000, 'UTC')"},
		{"f = ?", []any{math.Inf(-1)}, "f = cast('-inf', 'Float64')"},
		{"a = @a AND b = @b_2 AND a2 = @a", []any{Named("a", "x"), Named("b_2", uint64(9))}, "a = 'x' AND b = 9 AND a2 = 'x'"},
		// placeholders in literals, identifiers and comments are text
		{"SELECT '?@a', `?` -- why? @a\n, ? /* @b ? */", []any{true}, "SELECT '?@a', `?` -- why? @a\n, 1 /* @b ? */"},
		{"x = 'a\\'?' AND y = ?", []any{"z"}, `x = 'a\'?' AND y = 'z'`},
	}
	for _, c := range cases {
		got, err := Bind(c.sql, c.args...)
		if err != nil || got != c.want {
			t.Errorf("Bind(%q) = %q, %v; want %q", c.sql, got, err, c.want)
		}
	}
}

func TestBindRefusesMismatches(t *testing.T) {
	for _, c := range []struct {
		sql  string
		args []any
	}{
		{"SELECT ?, ?", []any{1}},
		{"SELECT ?", []any{1, 2}},
		{"SELECT @missing", nil},
		{"SELECT ?", []any{struct{}{}}},
		{"SELECT ?", []any{nil}},
	} {
		if _, err := Bind(c.sql, c.args...); !errors.Is(err, ErrBind) {
			t.Errorf("Bind(%q, %v) = %v, want ErrBind", c.sql, c.args, err)
		}
	}
}
