package strictjson

import (
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse"
)

// A body of null would leave the target as it is (an object with no fields, an empty
// list): it is refused as an empty body is, naming the shape wanted.
func TestDecodeRefusesEmptyAndNullBodies(t *testing.T) {
	var obj struct {
		Name *string `json:"name"`
	}
	var list []int
	for _, tc := range []struct {
		body string
		v    any
		want string
	}{
		{"", &obj, "a JSON object"},
		{"  \n", &obj, "a JSON object"},
		{"null", &obj, "a JSON object"},
		{" null\n", &obj, "a JSON object"},
		{"null", &list, "a JSON array"},
	} {
		e := kwhouse.AsError(Decode([]byte(tc.body), tc.v))
		if e == nil || e.Code != "invalid_json" || !strings.Contains(e.Message, tc.want) {
			t.Errorf("Decode(%q): %v, want invalid_json asking for %s", tc.body, e, tc.want)
		}
	}
	if err := Decode([]byte(`{"name":null}`), &obj); err != nil || obj.Name != nil {
		t.Errorf(`{"name":null}: %v, %v (a null member stays accepted)`, err, obj.Name)
	}
	if err := Decode([]byte(`[1,2]`), &list); err != nil || len(list) != 2 {
		t.Errorf("[1,2]: %v, %v", err, list)
	}
}
