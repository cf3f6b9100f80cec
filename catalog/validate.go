package catalog

import (
	"unicode/utf8"

	"github.com/kwhouse/kwhouse"
)

// MaxStringLen is the longest string a caller may send in any field.
const MaxStringLen = 255

// problems collects an input's problems (kwhouse.Problems) with the string-length rule
// every catalog field shares.
type problems struct{ kwhouse.Problems }

func (p *problems) add(code, param, format string, args ...any) { p.Add(code, param, format, args...) }

func (p *problems) err() error { return p.Err() }

func (p *problems) str(param string, s *string) {
	if s != nil {
		p.text(param, *s)
	}
}

func (p *problems) text(param, s string) {
	if utf8.RuneCountInString(s) > MaxStringLen {
		p.add("string_too_long", param, "at most %d characters", MaxStringLen)
	}
}
