package catalog

import (
	"encoding/json"
	"time"

	"github.com/kwhouse/kwhouse/strictjson"
)

// Timestamp is a UTC time that marshals as RFC 3339 with whole seconds ("2024-08-24T10:00:00Z").
type Timestamp time.Time

// MarshalJSON implements json.Marshaler.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format(time.RFC3339))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	s, err := strictjson.String(b)
	if err != nil {
		return err
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
