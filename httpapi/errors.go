package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
)

// errorBody is the body of every error response.
type errorBody struct {
	Object      string `json:"object"`
	Type        string `json:"type"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Param       string `json:"param,omitempty"`
	LiveMode    *bool  `json:"live_mode,omitempty"` // when the caller's mode is known (docs/api.md, "Errors")
	RequestID   string `json:"request_id"`
	TimeCreated string `json:"time_created"`
}

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[kwhouse.Kind]int{
	kwhouse.KindInternal:      http.StatusInternalServerError,
	kwhouse.KindInvalid:       http.StatusBadRequest,
	kwhouse.KindUnauthorized:  http.StatusForbidden, // FlatPeak answers bad credentials with 403
	kwhouse.KindNotFound:      http.StatusNotFound,
	kwhouse.KindConflict:      http.StatusConflict,
	kwhouse.KindTooLarge:      http.StatusRequestEntityTooLarge,
	kwhouse.KindUnprocessable: http.StatusUnprocessableEntity,
	kwhouse.KindRateLimited:   http.StatusTooManyRequests,
	kwhouse.KindUnavailable:   http.StatusServiceUnavailable,
}

// methodNotAllowed is the one kind outside the domain's: only the router knows it.
type methodNotAllowed struct{ method, path string }

func (m *methodNotAllowed) Error() string { return m.method + " is not allowed on " + m.path }

func errMethodNotAllowed(method, path string) error { return &methodNotAllowed{method, path} }

// writeError maps err to a status and the error body, and logs server-side failures once.
func (s *Server) writeError(c *gin.Context, err error) {
	body := errorBody{Object: "error", RequestID: requestIDOf(c), TimeCreated: s.deps.Now().UTC().Format(time.RFC3339)}
	if sc, ok := kwhouse.ScopeFrom(c.Request.Context()); ok {
		body.LiveMode = &sc.LiveMode
	}
	var status int
	var mna *methodNotAllowed
	retry := time.Second
	if e := kwhouse.AsError(err); e != nil && e.RetryAfter > 0 {
		retry = e.RetryAfter
	}
	switch e := kwhouse.AsError(err); {
	case errors.As(err, &mna):
		status, body.Type, body.Code, body.Message = http.StatusMethodNotAllowed, "invalid_request", "method_not_allowed", mna.Error()
	case e != nil:
		status = statusOf[e.Kind]
		body.Code, body.Message, body.Param = e.Code, e.Message, e.Param
	default:
		status = http.StatusInternalServerError
	}
	switch {
	case status == http.StatusTooManyRequests:
		body.Type = "rate_limit"
		c.Header("Retry-After", strconv.Itoa(retryAfterSeconds(retry)))
	case status >= 500:
		body.Type = "api_error"
		if status == http.StatusServiceUnavailable {
			c.Header("Retry-After", strconv.Itoa(retryAfterSeconds(retry)))
		} else {
			body.Code, body.Message, body.Param = "internal_error", "an internal error occurred; quote the request_id when reporting it", ""
		}
		if body.Code != "too_busy" { // a shed query is counted in /metrics, not an error
			s.deps.Log.Error("request failed", "request_id", body.RequestID, "method", c.Request.Method,
				"route", c.FullPath(), "status", status, "err", err)
		}
	default:
		body.Type = "invalid_request"
	}
	c.AbortWithStatusJSON(status, body)
}
