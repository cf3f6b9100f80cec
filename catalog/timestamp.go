package catalog

import (
	"encoding/json"
	"time"
)

// Timestamp is a UTC time that marshals as RFC 3339 with whole seconds ("2024-08-24T10:00:00Z").
type Timestamp time.Time

// MarshalJSON implements json.Marshaler.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format(time.RFC3339))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	s, ok := PlainJSONString(b)
	if !ok {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = Timestamp(v.UTC())
	return nil
}

// Time returns t as a time.Time.
func (t Timestamp) Time() time.Time { return time.Time(t) }

// PlainJSONString returns the text of b, a JSON string of printable ASCII without escapes
// (as stored documents hold times and day names), and true: what json.Unmarshal gives
// for it, without the call (a tariff holds five such values; unmarshaled, they took a
// tenth of decoding it). Any other b returns false.
func PlainJSONString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(in), true
}
