package catalog

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/kwhouse/kwhouse"
)

// MaxStringLen is the longest string a caller may send in any field.
const MaxStringLen = 255

// problems collects every validation failure of an input, each with its field path.
type problems struct{ errs []error }

func (p *problems) add(code, param, format string, args ...any) {
	p.errs = append(p.errs, kwhouse.Invalid(code, param, format, args...))
}

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

// err returns the first problem (the one the API reports) joined with the rest.
func (p *problems) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	first := kwhouse.AsError(p.errs[0])
	joined := *first
	joined.Message = fmt.Sprintf("%s (and %d more problems)", first.Message, len(p.errs)-1)
	joined.Err = errors.Join(p.errs[1:]...)
	return &joined
}
