// Package kwhouse holds the few things every part of the service shares: the error kinds
// that the HTTP layer maps to status codes, and resource identifiers.
package kwhouse

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error for the caller; the HTTP layer maps each kind to one status.
type Kind int

// Error kinds. Packages return *Error values of these kinds where a caller branches.
const (
	KindInternal      Kind = iota // a bug or an unexpected store answer: 500
	KindInvalid                   // the request breaks a rule: 400
	KindUnauthorized              // missing or bad credentials: 403 (FlatPeak's status)
	KindNotFound                  // no such object for this account and mode: 404
	KindConflict                  // clashes with stored state: 409
	KindTooLarge                  // body or batch over a limit: 413
	KindUnprocessable             // well-formed but cannot be priced: 422
	KindRateLimited               // too many requests: 429
	KindUnavailable               // a backing store is down; retry: 503
)

// Error is an error a caller can act on: a kind, a machine-readable code naming the rule,
// the offending parameter (a field path) and a message for people.
type Error struct {
	Kind    Kind
	Code    string
	Param   string
	Message string
	Err     error // the cause, kept for logs; never shown to clients
	// RetryAfter, when set, is how long the caller should wait before retrying (429, 503).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Param != "" {
		msg = e.Param + ": " + msg
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid reports a request that breaks the rule code at param.
func Invalid(code, param, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports that the object id does not exist for the caller.
func NotFound(param, id string) *Error {
	return &Error{Kind: KindNotFound, Code: "resource_missing", Param: param,
		Message: fmt.Sprintf("no such object: %s", id)}
}

// Conflict reports a clash with stored state.
func Conflict(code, param, format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Unavailable wraps the failure of a backing store; the request may be retried.
func Unavailable(store string, err error) *Error {
	return &Error{Kind: KindUnavailable, Code: "store_unavailable",
		Message: store + " is unavailable; retry later", Err: err}
}

// KindOf reports the kind of err: that of the first *Error in its chain, else KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// AsError returns the first *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
