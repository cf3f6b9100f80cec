package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/query"
)

// window reads start_time (default: now) and end_time (required) from the query string.
func (s *Server) window(c *gin.Context) (time.Time, time.Time, error) {
	start := s.deps.Now().UTC().Truncate(time.Second)
	if v, ok := c.GetQuery("start_time"); ok {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return start, start, kwhouse.Invalid("invalid_value", "start_time", "must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z")
		}
		start = t.UTC()
		if err := query.CheckBound("start_time", start); err != nil {
			return start, start, err
		}
	}
	v, ok := c.GetQuery("end_time")
	if !ok {
		return start, time.Time{}, kwhouse.Invalid("parameter_missing", "end_time", "end_time is required")
	}
	end, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return start, end, kwhouse.Invalid("invalid_value", "end_time", "must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z")
	}
	return start, end.UTC(), query.CheckBound("end_time", end.UTC())
}

// floatParam reads an optional finite number from the query string.
func floatParam(c *gin.Context, name string) (*float64, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, kwhouse.Invalid("invalid_value", name, "%s must be a finite number", name)
	}
	return &f, nil
}

// boolParams reads optional true/false flags from the query string into dst by name.
func boolParams(c *gin.Context, dst map[string]*bool) error {
	for name, p := range dst {
		v, ok := c.GetQuery(name)
		if !ok {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return kwhouse.Invalid("invalid_value", name, "%s must be true or false", name)
		}
		*p = b
	}
	return nil
}

func (s *Server) slotRequest(c *gin.Context) (query.SlotRequest, error) {
	start, end, err := s.window(c)
	if err != nil {
		return query.SlotRequest{}, err
	}
	req := query.SlotRequest{LocationID: c.Param("id"), Direction: c.Query("direction"), Segment: c.Query("segment"), Start: start, End: end}
	for name, dst := range map[string]**float64{"relative": &req.Relative, "absolute": &req.Absolute, "duration": &req.Duration} {
		if *dst, err = floatParam(c, name); err != nil {
			return req, err
		}
	}
	return req, nil
}

func (s *Server) slotsThreshold(c *gin.Context) (int, any, error) {
	req, err := s.slotRequest(c)
	if err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Pricer.Threshold(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}

func (s *Server) slotsTime(c *gin.Context) (int, any, error) {
	req, err := s.slotRequest(c)
	if err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Pricer.TimeSlots(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}
