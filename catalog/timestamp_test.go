package catalog

import "testing"

// A timestamp is read from its JSON string, escaped or not.
func TestTimestampReadsItsJSONString(t *testing.T) {
	var ts Timestamp
	if err := ts.UnmarshalJSON([]byte(`"2024-03-01T01:02:03+01:00"`)); err != nil || ts.Time().Format("2006-01-02T15:04:05Z07:00") != "2024-03-01T00:02:03Z" {
		t.Errorf("timestamp %v %v", ts.Time(), err)
	}
	if err := ts.UnmarshalJSON([]byte(`"2024-03-01T00:00:00\u005a"`)); err != nil || ts.Time().Hour() != 0 {
		t.Errorf("escaped timestamp %v %v", ts.Time(), err)
	}
}
