package ingest

import (
	"bytes"
	"fmt"
	"strconv"
)

// rawRecord is a record as sent: every field as text, before validation.
type rawRecord struct {
	fields  [fieldCount]string
	set     [fieldCount]bool
	problem string // the first field-level problem (wrong type, unknown field)
}

// Record field numbers, in the order of fieldNames.
const (
	fLocationID = iota
	fDeviceID
	fSessionRef
	fRecordRef
	fDirection
	fTariffRate
	fMeasurand
	fUnits
	fValue
	fConfidence
	fStartTime
	fEndTime
	fNonPersistent
	fieldCount
)

var fieldNames = [fieldCount]string{"location_id", "device_id", "session_reference_id", "record_reference_id",
	"direction", "tariff_rate", "measurand", "units", "value", "confidence", "start_time", "end_time", "non_persistent"}

// numeric fields take JSON numbers, boolean fields true or false; the rest take strings.
var (
	numeric = [fieldCount]bool{fValue: true, fConfidence: true}
	boolean = [fieldCount]bool{fNonPersistent: true}
)

// fieldIndex is the number of a field name, -1 for an unknown one. A switch, which Go
// compiles to a search by length and content, instead of comparing with every name.
func fieldIndex(name string) int {
	switch name {
	case "location_id":
		return fLocationID
	case "device_id":
		return fDeviceID
	case "session_reference_id":
		return fSessionRef
	case "record_reference_id":
		return fRecordRef
	case "direction":
		return fDirection
	case "tariff_rate":
		return fTariffRate
	case "measurand":
		return fMeasurand
	case "units":
		return fUnits
	case "value":
		return fValue
	case "confidence":
		return fConfidence
	case "start_time":
		return fStartTime
	case "end_time":
		return fEndTime
	case "non_persistent":
		return fNonPersistent
	}
	return -1
}

// decodeArray reads a JSON array of records, calling fn with each record's 1-based
// number. Malformed JSON is a *SyntaxError; a well-formed element that is not a valid
// record object is reported through the record's problem.
func decodeArray(body []byte, fn func(num int, r *rawRecord) error) error {
	s := &scanner{b: body}
	s.ws()
	if s.peek() != '[' {
		return &NotArrayError{}
	}
	s.i++
	s.ws()
	if s.peek() == ']' {
		s.i++
		return s.end()
	}
	var r rawRecord
	for num := 0; ; num++ { // record_num is the 0-based position in the array (FlatPeak)
		s.ws()
		if err := s.record(&r); err != nil {
			return err
		}
		if err := fn(num, &r); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return s.end()
		default:
			return s.fail("want ',' or ']' after a record")
		}
	}
}

// decodeNDJSON reads one record object per line; blank lines are skipped. A line that is
// not one well-formed JSON object is a *SyntaxError naming the line.
func decodeNDJSON(body []byte, fn func(num int, r *rawRecord) error) error {
	return decodeLines(body, 0, DefaultMaxLine, fn, nil)
}

// DefaultMaxLine is the longest NDJSON line when the config leaves ingest.max_line_bytes 0:
// a record is 100–250 bytes, and at most about 4 KiB with every string at its limit.
const DefaultMaxLine = 64 << 10

// decodeLines reads NDJSON lines, the first of them line number first (0-based). A line
// that is not one JSON object, or is longer than maxLine bytes, goes to bad, when given,
// and ends the decoding otherwise.
func decodeLines(body []byte, first, maxLine int, fn func(num int, r *rawRecord) error, bad func(num int, err error)) error {
	var r rawRecord
	for line := first + 1; len(body) > 0; line++ {
		var text []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			text, body = body[:i], body[i+1:]
		} else {
			text, body = body, nil
		}
		s := &scanner{b: text}
		if len(text) <= maxLine {
			if s.ws(); s.i == len(text) {
				continue // blank
			}
		}
		err := error(nil)
		switch {
		case len(text) > maxLine: // even of spaces: the stream keeps only its start
			err = &SyntaxError{Msg: fmt.Sprintf("longer than the line limit of %d bytes", maxLine)}
		case s.peek() != '{':
			err = &SyntaxError{Offset: s.i, Msg: fmt.Sprintf("line %d is not a JSON object", line)}
		default:
			if err = s.record(&r); err == nil {
				err = s.end()
			}
		}
		if err != nil {
			err = lineError(err, line)
			if bad == nil {
				return err
			}
			bad(line-1, err)
			continue
		}
		if err := fn(line-1, &r); err != nil { // record_num: the 0-based line number
			return err
		}
	}
	return nil
}

func lineError(err error, line int) error {
	if se, ok := err.(*SyntaxError); ok {
		return &SyntaxError{Offset: se.Offset, Msg: fmt.Sprintf("line %d: %s", line, se.Msg)}
	}
	return err
}

// NotArrayError is a JSON body that is not an array.
type NotArrayError struct{}

func (*NotArrayError) Error() string { return "the body must be a JSON array of meter records" }

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("unexpected data after the end")
	}
	return nil
}

// record reads one element into r, resetting it first.
func (s *scanner) record(r *rawRecord) error {
	*r = rawRecord{}
	if s.peek() != '{' {
		r.problem = "record is a JSON " + s.kind() + ", not an object"
		return s.skip(0)
	}
	return s.members('{', func(name string) error { return s.field(r, name) })
}

func (s *scanner) field(r *rawRecord, name string) error {
	f := fieldIndex(name)
	if f < 0 {
		r.note(fmt.Sprintf("unknown field %q", name))
		return s.skip(0)
	}
	if s.peek() == 'n' { // null: as if absent
		return s.literal("null")
	}
	var v string
	var err error
	switch {
	case numeric[f] && (s.peek() == '-' || (s.peek() >= '0' && s.peek() <= '9')):
		v, err = s.number()
	case boolean[f] && (s.peek() == 't' || s.peek() == 'f'):
		v = map[byte]string{'t': "true", 'f': "false"}[s.peek()]
		err = s.literal(v)
	case !numeric[f] && !boolean[f] && s.peek() == '"':
		v, err = s.str()
	default:
		want := "string"
		if numeric[f] {
			want = "number"
		} else if boolean[f] {
			want = "boolean"
		}
		r.note(fmt.Sprintf("%s must be a %s, not a JSON %s", name, want, s.kind()))
		return s.skip(0)
	}
	if err != nil {
		return err
	}
	if r.set[f] {
		r.note(fmt.Sprintf("field %q appears twice", name))
	}
	r.fields[f], r.set[f] = v, true
	return nil
}

func (r *rawRecord) note(problem string) {
	if r.problem == "" {
		r.problem = problem
	}
}

// float parses a numeric field already checked for JSON number syntax.
func float(text string) (float64, bool) {
	v, err := strconv.ParseFloat(text, 64)
	return v, err == nil
}
