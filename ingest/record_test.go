package ingest

import (
	"math"
	"strings"
	"testing"
	"time"
)

func decodeOne(t *testing.T, js string) (Record, string) {
	t.Helper()
	var rec Record
	var msg string
	n := 0
	err := decodeArray([]byte("["+js+"]"), func(_ int, r *rawRecord) error {
		rec, msg = normalise(r)
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("decode %s: %v (%d records)", js, err, n)
	}
	return rec, msg
}

const loc = `"location_id":"loc_0123456789abcdef01234567"`

func TestUnitsConvertToWattHours(t *testing.T) {
	for _, tc := range []struct {
		units, value, start, end string
		wh                       float64
	}{
		{"WH", "1500", "2024-01-01T00:00:00Z", "2024-01-01T00:30:00Z", 1500},
		{"KWH", "1.5", "2024-01-01T00:00:00Z", "2024-01-01T00:30:00Z", 1500},
		// 2000 W held for 15 minutes = 2000 × 0.25 h = 500 Wh.
		{"W", "2000", "2024-01-01T00:00:00Z", "2024-01-01T00:15:00Z", 500},
		// 3 kW for 40 minutes = 3000 × 2/3 h = 2000 Wh.
		{"KW", "3", "2024-01-01T00:00:00Z", "2024-01-01T00:40:00Z", 2000},
		// Offsets are converted to UTC: 01:00+01:00 is 00:00Z; 1 kW for 1 h = 1000 Wh.
		{"kw", "1", "2024-06-01T01:00:00+01:00", "2024-06-01T01:00:00Z", 1000},
	} {
		js := loc + `,"units":"` + tc.units + `","value":` + tc.value + `,"start_time":"` + tc.start + `","end_time":"` + tc.end + `"`
		rec, msg := decodeOne(t, "{"+js+"}")
		if msg != "" || math.Abs(rec.EnergyWh-tc.wh) > 1e-9 {
			t.Errorf("%s %s over %s..%s: %v Wh (%q), want %v", tc.value, tc.units, tc.start, tc.end, rec.EnergyWh, msg, tc.wh)
		}
	}
}

func TestDefaultsAndTimes(t *testing.T) {
	rec, msg := decodeOne(t, `{`+loc+`,"units":"WH","value":1,"start_time":"2024-03-31T00:30:00Z","end_time":"2024-03-31T01:30:00.000Z"}`)
	if msg != "" {
		t.Fatal(msg)
	}
	if rec.Direction != Import || rec.TariffRate != Import || rec.Confidence != 1 {
		t.Errorf("defaults: %+v", rec)
	}
	if want := time.Date(2024, 3, 31, 0, 30, 0, 0, time.UTC).Unix(); rec.Start != want || rec.End != want+3600 {
		t.Errorf("times %d..%d, want %d..%d", rec.Start, rec.End, want, want+3600)
	}
	rec, _ = decodeOne(t, `{`+loc+`,"direction":"EXPORT","units":"WH","value":1,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`)
	if rec.TariffRate != Export {
		t.Errorf("tariff_rate defaults to the direction: got %d", rec.TariffRate)
	}
}

func TestParseZuluMatchesTimeParse(t *testing.T) {
	for ts := time.Date(1999, 12, 31, 23, 0, 0, 0, time.UTC); ts.Year() < 2030; ts = ts.Add(97*time.Hour + 13*time.Minute + 7*time.Second) {
		s := ts.Format(time.RFC3339)
		got, ok := parseZulu(s)
		if !ok || got != ts.Unix() {
			t.Fatalf("parseZulu(%s) = %d %v, want %d", s, got, ok, ts.Unix())
		}
	}
	for _, bad := range []string{"2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01 00:00:00Z"} {
		if _, ok := parseZulu(bad); ok {
			t.Errorf("parseZulu accepted %s", bad)
		}
	}
}

func TestRecordProblems(t *testing.T) {
	base := `"units":"WH","value":1,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"`
	for js, want := range map[string]string{
		`{` + base + `}`:                                              "location_id is required",
		`{` + loc + `,"units":"WH","value":1}`:                        "start_time is required",
		`{"location_id":"dev_0123456789abcdef01234567",` + base + `}`: "not a location id",
		`{` + loc + `,"device_id":"x",` + base + `}`:                  "not a device id",
		`{` + loc + `,"units":"J","value":1,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`:      "units must be",
		`{` + loc + `,"units":"WH","value":-1,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`:    "must not be negative",
		`{` + loc + `,"units":"WH","value":1e999,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`: "finite",
		`{` + loc + `,"units":"WH","value":"1","start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`:   "value must be a number",
		`{` + loc + `,"units":"WH","value":1,"start_time":"2024-01-01T00:30:00Z","end_time":"2024-01-01T00:30:00Z"}`:     "end_time must be after start_time",
		`{` + loc + `,"units":"WH","value":1,"start_time":"2024-01-01T00:00:00.5Z","end_time":"2024-01-01T00:30:00Z"}`:   "whole second",
		`{` + loc + `,"units":"WH","value":1,"start_time":"yesterday","end_time":"2024-01-01T00:30:00Z"}`:                "RFC 3339",
		`{` + loc + `,"units":"WH","value":1,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-03-01T00:30:00Z"}`:     "31 days",
		`{` + loc + `,"direction":"SIDEWAYS",` + base + `}`:                                                              "direction must be",
		`{` + loc + `,"tariff_rate":"FREE",` + base + `}`:                                                                "tariff_rate must be",
		`{` + loc + `,"confidence":2,` + base + `}`:                                                                      "confidence must be",
		`{` + loc + `,"colour":"red",` + base + `}`:                                                                      `unknown field "colour"`,
		`{` + loc + `,"location_id":{"a":[1]},` + base + `}`:                                                             "must be a string",
		`{` + loc + `,"session_reference_id":"` + strings.Repeat("x", 256) + `",` + base + `}`:                           "255",
		`{` + loc + `,"record_reference_id":"ab` + "\xff\xfe" + `",` + base + `}`:                                        "record_reference_id is not valid UTF-8",
		`{` + loc + `,"session_reference_id":"` + "\xc3(" + `",` + base + `}`:                                            "session_reference_id is not valid UTF-8",
		`{` + loc + `,"session_reference_id":"` + strings.Repeat("é", 200) + "\xe2\x82" + `",` + base + `}`:              "session_reference_id is not valid UTF-8",
		`{` + loc + `,"non_persistent":true,` + base + `}`:                                                               "non_persistent records are never stored",
		`{` + loc + `,"non_persistent":"yes",` + base + `}`:                                                              "non_persistent must be a boolean",
		`7`: "not an object",
	} {
		_, msg := decodeOne(t, js)
		if !strings.Contains(msg, want) {
			t.Errorf("%.80s…: problem %q, want one containing %q", js, msg, want)
		}
	}
}

func TestMalformedBodiesAreSyntaxErrors(t *testing.T) {
	for _, body := range []string{`[{"a":1}`, `[{"a":}]`, `[1,]`, `[{"location_id":"x"} {}]`, `[] []`, `[{"a":"\x01"}]`, `["\u12"]`} {
		err := decodeArray([]byte(body), func(int, *rawRecord) error { return nil })
		if _, ok := err.(*SyntaxError); !ok {
			t.Errorf("%q: error %v, want a syntax error", body, err)
		}
	}
	if err := decodeArray([]byte(`{"location_id":"x"}`), func(int, *rawRecord) error { return nil }); err == nil {
		t.Error("an object body must be refused")
	}
	err := decodeNDJSON([]byte("{\"units\":\"WH\"}\n\n[1]\n"), func(int, *rawRecord) error { return nil })
	if se, ok := err.(*SyntaxError); !ok || !strings.Contains(se.Msg, "line 3") {
		t.Errorf("NDJSON with an array line: %v", err)
	}
}

func FuzzDecodeNeverPanics(f *testing.F) {
	f.Add([]byte(`[{` + loc + `,"units":"W","value":2000,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:15:00Z"}]`))
	f.Add([]byte(`[{"a":[{"b":null}],"value":-0.5e-3,"units":"\u0057H"}, 5, "x", true]`))
	f.Add([]byte("{\"value\":1}\n{\"value\":2}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fn := func(_ int, r *rawRecord) error {
			rec, msg := normalise(r)
			if msg == "" && (rec.End <= rec.Start || rec.EnergyWh < 0 || math.IsNaN(rec.EnergyWh)) {
				t.Fatalf("accepted an invalid record %+v", rec)
			}
			return nil
		}
		_ = decodeArray(body, fn)
		_ = decodeNDJSON(body, fn)
	})
}
