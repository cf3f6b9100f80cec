package catalog

import (
	"encoding/json"
	"testing"
)

// A plain JSON string is taken as json.Unmarshal takes it; anything else is left to it.
func TestPlainJSONStringAgreesWithUnmarshal(t *testing.T) {
	for _, in := range []string{`"2024-03-01T00:00:00Z"`, `""`, `"Weekday"`, `"a b~!"`} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := PlainJSONString([]byte(in)); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`null`, `7`, `"a\"b"`, `"\u0041"`, `"é"`, "\"tab\there\"", `"`, `"x`, `x"`, "\"\x7f\""} {
		if got, ok := PlainJSONString([]byte(in)); ok {
			t.Errorf("%s taken as plain: %q", in, got)
		}
	}
	var ts Timestamp
	if err := ts.UnmarshalJSON([]byte(`"2024-03-01T01:02:03+01:00"`)); err != nil || ts.Time().Format("2006-01-02T15:04:05Z07:00") != "2024-03-01T00:02:03Z" {
		t.Errorf("timestamp %v %v", ts.Time(), err)
	}
	if err := ts.UnmarshalJSON([]byte(`"2024-03-01T00:00:00\u005a"`)); err != nil || ts.Time().Hour() != 0 {
		t.Errorf("escaped timestamp %v %v", ts.Time(), err)
	}
}
