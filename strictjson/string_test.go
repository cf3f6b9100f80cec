package strictjson

import (
	stdjson "encoding/json"
	"testing"
)

// String decodes what encoding/json decodes, plain strings without it, and refuses what it
// refuses.
func TestStringAgreesWithUnmarshal(t *testing.T) {
	for _, in := range []string{`"2024-03-01T00:00:00Z"`, `""`, `"Weekday"`, `"a b~!"`} {
		var want string
		if err := stdjson.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := plainString([]byte(in)); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`null`, `7`, `"a\"b"`, `"\u0041"`, `"é"`, "\"tab\there\"", `"`, `"x`, `x"`, "\"\x7f\""} {
		if got, ok := plainString([]byte(in)); ok {
			t.Errorf("%s taken as plain: %q", in, got)
		}
		var want string
		wantErr := stdjson.Unmarshal([]byte(in), &want)
		got, err := String([]byte(in))
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: %q, %v; encoding/json gives %q, %v", in, got, err, want, wantErr)
		}
	}
}
