package ingest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unsafe"
)

// scanner reads JSON from b without building a tree: records are flat objects, so a
// purpose-built reader avoids the reflection and allocations of a general decoder.
type scanner struct {
	b []byte
	i int
}

// SyntaxError is malformed JSON: the request is refused whole.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.Offset, e.Msg)
}

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.i, Msg: msg} }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string value and returns its contents. Unescaped strings are returned as
// views of the input (no copy); escaped ones are decoded.
func (s *scanner) str() (string, error) {
	if s.peek() != '"' {
		return "", s.fail("want a string")
	}
	start := s.i + 1
	escaped := false
	for j := skipPlain(s.b, start); j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			if !escaped {
				return unsafe.String(unsafe.SliceData(s.b[start:j]), j-start), nil
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:j+1], &out); err != nil {
				s.i = start - 1
				return "", s.fail("bad string escape")
			}
			return out, nil
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			s.i = j
			return "", s.fail("control character in string")
		}
	}
	s.i = len(s.b)
	return "", s.fail("unterminated string")
}

// skipPlain returns the first index from i of a byte that ends or complicates a JSON
// string ('"', '\\' or a control character), or where fewer than 8 bytes remain. It
// tests 8 bytes at a time (SWAR): records are mostly ids and times with nothing to escape.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zeroByte := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if zeroByte(x^(ones*'"'))|zeroByte(x^(ones*'\\'))|(x-ones*0x20)&^x&highs != 0 {
			return i
		}
	}
	return i
}

// number reads a JSON number and returns its text.
func (s *scanner) number() (string, error) {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.peek() == '0' {
		s.i++
	} else if digits() == 0 {
		return "", s.fail("bad number")
	}
	if s.peek() == '.' {
		s.i++
		if digits() == 0 {
			return "", s.fail("bad number")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return "", s.fail("bad number")
		}
	}
	return unsafe.String(unsafe.SliceData(s.b[start:s.i]), s.i-start), nil
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

// kind names the JSON type of the value at the cursor.
func (s *scanner) kind() string {
	switch c := s.peek(); {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	}
	return "number"
}

// skip reads over any value, checking its syntax.
func (s *scanner) skip(depth int) error {
	if depth > 64 {
		return s.fail("nested too deeply")
	}
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '{', '[':
		return s.skipContainer(c, depth)
	case 0:
		return s.fail("unexpected end of input")
	}
	_, err := s.number()
	return err
}

func (s *scanner) skipContainer(open byte, depth int) error {
	return s.members(open, func(string) error { return s.skip(depth + 1) })
}

// members walks the object or array at s.i (open is its first byte): value reads each
// member's value, given its name ("" in an array).
func (s *scanner) members(open byte, value func(name string) error) error {
	close := byte('}')
	if open == '[' {
		close = ']'
	}
	s.i++
	s.ws()
	if s.peek() == close {
		s.i++
		return nil
	}
	for {
		s.ws()
		var name string
		if open == '{' {
			var err error
			if name, err = s.str(); err != nil {
				return err
			}
			s.ws()
			if s.peek() != ':' {
				return s.fail("want ':'")
			}
			s.i++
			s.ws()
		}
		if err := value(name); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return nil
		default:
			return s.fail("want ',' or '" + string(close) + "'")
		}
	}
}
