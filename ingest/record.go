// Package ingest is the write path of meter data: it decodes and validates interval and
// cumulative records, converts them to Wh, and stores them through a group-commit writer
// that acknowledges a request only once every accepted record is in ClickHouse.
package ingest

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kwhouse/kwhouse"
)

// Direction and tariff-rate codes, as stored (Enum8 values of meter_records).
const (
	Import int8 = 1
	Export int8 = 2
	Local  int8 = 3
)

// DirectionName returns the API name of a direction or tariff-rate code.
func DirectionName(code int8) string {
	switch code {
	case Import:
		return "IMPORT"
	case Export:
		return "EXPORT"
	case Local:
		return "LOCAL"
	}
	return ""
}

// MaxRecordSpan is the longest interval one record may cover.
const MaxRecordSpan = 31 * 24 * time.Hour

// Record is a validated interval record, energy in Wh, times in Unix seconds (UTC).
type Record struct {
	LocationID string
	DeviceID   string
	Direction  int8
	TariffRate int8
	Start, End int64
	EnergyWh   float64
	Confidence float64
	SessionRef string
	RecordRef  string
}

// normalise validates r and converts it; the error text is what failed_records shows.
func normalise(r *rawRecord) (Record, string) {
	if r.problem != "" {
		return Record{}, r.problem
	}
	f := &r.fields
	for _, req := range []int{fLocationID, fUnits, fValue, fStartTime, fEndTime} {
		if !r.set[req] {
			return Record{}, fieldNames[req] + " is required"
		}
	}
	// Free-text fields must be valid UTF-8 (docs/ingest.md); every other string field is checked
	// against an ASCII grammar below, which invalid bytes fail anyway.
	for _, i := range []int{fSessionRef, fRecordRef, fMeasurand} {
		if !utf8.ValidString(f[i]) {
			return Record{}, fieldNames[i] + " is not valid UTF-8"
		}
	}
	for i := range f {
		// At most 255 bytes is at most 255 characters: most fields skip the count.
		if !numeric[i] && !boolean[i] && len(f[i]) > 255 && utf8.RuneCountInString(f[i]) > 255 {
			return Record{}, fieldNames[i] + " is longer than 255 characters"
		}
	}
	rec := Record{LocationID: f[fLocationID], DeviceID: f[fDeviceID], SessionRef: f[fSessionRef], RecordRef: f[fRecordRef]}
	if !kwhouse.ValidID(kwhouse.PrefixLocation, rec.LocationID) {
		return Record{}, "location_id is not a location id (loc_ followed by 24 hex characters)"
	}
	if rec.DeviceID != "" && !kwhouse.ValidID(kwhouse.PrefixDevice, rec.DeviceID) {
		return Record{}, "device_id is not a device id (dev_ followed by 24 hex characters)"
	}
	if _, msg := rec.setDirections(r); msg != "" {
		return Record{}, msg
	}
	if msg := rec.setTimes(f[fStartTime], f[fEndTime]); msg != "" {
		return Record{}, msg
	}
	if msg := rec.setEnergy(f[fUnits], f[fValue]); msg != "" {
		return Record{}, msg
	}
	rec.Confidence = 1
	if r.set[fConfidence] {
		c, ok := float(f[fConfidence])
		if !ok || c < 0 || c > 1 {
			return Record{}, "confidence must be a number from 0 to 1"
		}
		rec.Confidence = c
	}
	if r.set[fMeasurand] && !strings.EqualFold(f[fMeasurand], "TRANSFERRED") {
		return Record{}, "measurand must be TRANSFERRED"
	}
	if r.set[fNonPersistent] && f[fNonPersistent] == "true" {
		// FlatPeak's record schema has the flag; a push stores what it accepts.
		return Record{}, "non_persistent records are never stored: price them with POST /costs/instant?non_persistent=true"
	}
	return rec, ""
}

// setDirections sets direction and tariff_rate; a problem comes back as the field it is
// about and its message.
func (rec *Record) setDirections(r *rawRecord) (field, problem string) {
	rec.Direction = Import
	if r.set[fDirection] {
		switch strings.ToUpper(r.fields[fDirection]) {
		case "IMPORT":
		case "EXPORT":
			rec.Direction = Export
		default:
			return "direction", "direction must be IMPORT or EXPORT"
		}
	}
	rec.TariffRate = rec.Direction
	if r.set[fTariffRate] {
		switch strings.ToUpper(r.fields[fTariffRate]) {
		case "IMPORT":
			rec.TariffRate = Import
		case "EXPORT":
			rec.TariffRate = Export
		case "LOCAL":
			rec.TariffRate = Local
		default:
			return "tariff_rate", "tariff_rate must be IMPORT, EXPORT or LOCAL"
		}
	}
	return "", ""
}

func (rec *Record) setTimes(start, end string) string {
	s, msg := parseTime("start_time", start)
	if msg != "" {
		return msg
	}
	e, msg := parseTime("end_time", end)
	if msg != "" {
		return msg
	}
	if e <= s {
		return "end_time must be after start_time"
	}
	if time.Duration(e-s)*time.Second > MaxRecordSpan {
		return "a record may span at most 31 days"
	}
	rec.Start, rec.End = s, e
	return ""
}

func (rec *Record) setEnergy(units, value string) string {
	v, ok := float(value)
	if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
		return "value must be a finite number"
	}
	if v < 0 {
		return "value must not be negative"
	}
	hours := float64(rec.End-rec.Start) / 3600
	switch strings.ToUpper(units) {
	case "WH":
		rec.EnergyWh = v
	case "KWH":
		rec.EnergyWh = v * 1000
	case "W":
		rec.EnergyWh = v * hours
	case "KW":
		rec.EnergyWh = v * 1000 * hours
	default:
		return "units must be W, KW, WH or KWH"
	}
	if !kwhouse.Within(rec.EnergyWh, kwhouse.MaxEnergyWh) {
		return fmt.Sprintf("value is %g Wh; a reading may be at most %g Wh", rec.EnergyWh, kwhouse.MaxEnergyWh)
	}
	return ""
}

// Earliest and latest instants a record may have: DateTime covers 1970..2105.
var (
	minTime = time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	maxTime = time.Date(2105, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
)

// parseTime reads an RFC 3339 time with any offset, in whole seconds. The common
// "2024-01-02T03:04:05Z" form is parsed by hand; others go through time.Parse.
func parseTime(field, s string) (int64, string) {
	t, ok := parseZulu(s)
	if !ok {
		pt, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Sprintf("%s must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z", field)
		}
		if pt.Nanosecond() != 0 {
			return 0, field + " must be a whole second"
		}
		t = pt.Unix()
	}
	if t < minTime || t > maxTime {
		return 0, field + " must be between 1970-01-02 and 2105-12-31"
	}
	return t, ""
}

func parseZulu(s string) (int64, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return 0, false
	}
	num := func(i, n int) int {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, se := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59 {
		return 0, false
	}
	return daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+se), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil counts days from 1970-01-01 to y-m-d (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era*146097 + doe - 719468)
}

// ParseOne validates a single JSON record object (the body of POST /costs/instant, where
// "non_persistent" may also appear).
func ParseOne(body []byte) (Record, error) {
	s := &scanner{b: body}
	s.ws()
	if s.peek() != '{' {
		return Record{}, kwhouse.Invalid("invalid_body", "", "the body must be one JSON meter record object")
	}
	var r rawRecord
	if err := s.record(&r); err != nil {
		return Record{}, bodyError(err)
	}
	if err := s.end(); err != nil {
		return Record{}, bodyError(err)
	}
	r.set[fNonPersistent] = false // the query parameter's twin in the body; read by the caller
	rec, problem := normalise(&r)
	if problem != "" {
		return Record{}, kwhouse.Invalid("invalid_record", "", "%s", problem)
	}
	return rec, nil
}
