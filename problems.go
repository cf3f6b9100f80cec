package kwhouse

import (
	"errors"
	"fmt"
	"strings"
)

// Problems collects every validation failure of an input, each with its field path: the
// one style of kwhouse's Validate methods. The error it makes is the first problem (the
// one the API reports in code and param) with the count of the others in its message
// and all of them in its chain.
type Problems struct{ errs []error }

// Add records a problem with the rule code at param.
func (p *Problems) Add(code, param, format string, args ...any) {
	p.errs = append(p.errs, Invalid(code, param, format, args...))
}

// AddErr records the problem of a check that returns one (nil: none).
func (p *Problems) AddErr(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

// Err is nil without problems, else the first joined with the rest.
func (p *Problems) Err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	first := AsError(p.errs[0])
	if first == nil {
		return errors.Join(p.errs...)
	}
	joined := *first
	joined.Message = fmt.Sprintf("%s (and %d more problems)", first.Message, len(p.errs)-1)
	joined.Err = errors.Join(p.errs[1:]...)
	return &joined
}

// ID adds parameter_missing when a required id is empty, and invalid_id when a given id
// is not of the kind prefix names: ID("location_id", PrefixLocation, id, true).
func (p *Problems) ID(param, prefix, id string, required bool) {
	switch {
	case id == "":
		if required {
			p.Add("parameter_missing", param, "%s is required", param)
		}
	case !ValidID(prefix, id):
		p.Add("invalid_id", param, "not a %s id (%s followed by 24 hex characters)",
			strings.ReplaceAll(strings.TrimSuffix(param, "_id"), "_", " "), prefix)
	}
}
