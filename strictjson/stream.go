package strictjson

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kwhouse/kwhouse"
)

// Bound is how many elements a streamed array may hold, and the error once it holds more.
type Bound struct {
	Max     int
	TooMany func() error
}

// DecodeArray reads a JSON array from r one element at a time, each decoded as strictly as
// Decode does into a T. Once the array holds more than b.Max elements it stops with
// b.TooMany(), without reading further: memory follows the elements kept, never the
// body's size. Params name the element ("[3].price"). A failure to read r is returned
// wrapped (errors.As reaches it), for the caller to answer.
func DecodeArray[T any](r io.Reader, b Bound) ([]T, error) {
	src := &recordingReader{r: r}
	dec := jsontext.NewDecoder(src)
	if dec.PeekKind() != '[' {
		return nil, src.or(readNonArray(dec), "the request body must be a JSON array")
	}
	out, err := readElements[T](dec, src, b)
	if err != nil {
		return nil, err
	}
	return out, src.end(dec)
}

// DecodeWithArray decodes a JSON object from r into v as Decode does, except its member
// named field: an array read one element at a time into *items, bounded as DecodeArray's.
// The other members are held whole until the object ends.
func DecodeWithArray[T any](r io.Reader, v any, field string, items *[]T, b Bound) error {
	src := &recordingReader{r: r}
	dec := jsontext.NewDecoder(src)
	if dec.PeekKind() != '{' {
		return src.or(readNonArray(dec), "the request body must be a JSON object")
	}
	if _, err := dec.ReadToken(); err != nil {
		return src.or(err, "")
	}
	rest := []byte{'{'}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return src.or(err, "")
		}
		name := tok.String() // before the next call voids tok
		if name == field && dec.PeekKind() == '[' {
			if *items, err = readElements[T](dec, src, b); err != nil {
				return err
			}
			continue
		}
		val, err := dec.ReadValue()
		if err != nil {
			return src.or(err, "")
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest, _ = jsontext.AppendQuote(rest, name)
		rest = append(append(rest, ':'), val...)
	}
	if _, err := dec.ReadToken(); err != nil {
		return src.or(err, "")
	}
	if err := src.end(dec); err != nil {
		return err
	}
	return Decode(append(rest, '}'), v)
}

// readElements reads the array that comes next in dec, element by element.
func readElements[T any](dec *jsontext.Decoder, src *recordingReader, b Bound) ([]T, error) {
	if _, err := dec.ReadToken(); err != nil {
		return nil, src.or(err, "")
	}
	var out []T
	for dec.PeekKind() != ']' {
		if len(out) == b.Max {
			return nil, b.TooMany()
		}
		var v T
		if err := json.UnmarshalDecode(dec, &v, json.RejectUnknownMembers(true)); err != nil {
			return nil, src.or(err, "")
		}
		out = append(out, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, src.or(err, "")
	}
	return out, nil
}

// readNonArray reads the value that is not what was wanted, for its error if any.
func readNonArray(dec *jsontext.Decoder) error {
	_, err := dec.ReadValue()
	if err == nil {
		err = io.EOF // well-formed, but the wrong kind: the caller's message
	}
	return err
}

// recordingReader keeps the first error of r other than io.EOF: the decoder's own errors
// do not always say that reading, not the JSON, failed.
type recordingReader struct {
	r   io.Reader
	err error
}

func (s *recordingReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// or is the read error when there was one, else err as a 400 (an io.EOF: msg when given).
func (s *recordingReader) or(err error, msg string) error {
	switch {
	case s.err != nil:
		return fmt.Errorf("read body: %w", s.err)
	case msg != "" && errors.Is(err, io.EOF):
		return kwhouse.Invalid("invalid_body", "", "%s", msg)
	case errors.Is(err, errInvalidUTF8):
		return kwhouse.Invalid("invalid_utf8", "", "the request body is not valid UTF-8")
	}
	return jsonError(err)
}

// errInvalidUTF8 is the decoder's own error for invalid UTF-8 (its package keeps it
// unexported), taken from decoding such a string once.
var errInvalidUTF8 = func() error {
	_, err := jsontext.NewDecoder(strings.NewReader("\"\xff\"")).ReadToken()
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) && syn.Err != nil {
		return syn.Err
	}
	return errors.New("unreachable: invalid UTF-8 was accepted")
}()

// end checks that nothing but white space follows the value.
func (s *recordingReader) end(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if s.err != nil {
			return fmt.Errorf("read body: %w", s.err)
		}
		return kwhouse.Invalid("invalid_json", "", "unexpected data after the end of the body")
	}
	return nil
}
