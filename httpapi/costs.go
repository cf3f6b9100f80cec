package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/query"
)

// costWindow is the body of POST /costs/interval/{id}.
type costWindow struct {
	StartTime *time.Time `json:"start_time"`
	EndTime   *time.Time `json:"end_time"`
}

func (s *Server) costInterval(c *gin.Context) (int, any, error) {
	req, err := costRequest(c)
	if err != nil {
		return 0, nil, err
	}
	req.ObjectID = c.Param("id")
	if !kwhouse.ValidID(kwhouse.PrefixLocation, req.ObjectID) && !kwhouse.ValidID(kwhouse.PrefixDevice, req.ObjectID) {
		return 0, nil, kwhouse.NotFound("id", req.ObjectID)
	}
	out, err := s.deps.Pricer.Interval(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}

// costRequest reads the query parameters and the window of a cost request.
func costRequest(c *gin.Context) (query.CostRequest, error) {
	req := query.CostRequest{Direction: c.Query("direction"), Aggregation: c.Query("aggregation")}
	if err := boolParams(c, map[string]*bool{"include_tariff": &req.IncludeTariff, "include_carbon": &req.IncludeCarbon,
		"include_charges": &req.IncludeCharges}); err != nil {
		return req, err
	}
	var w costWindow
	if err := decodeBody(c, &w); err != nil {
		return req, err
	}
	var err error
	req.Start, req.End, err = windowBounds(w.StartTime, w.EndTime)
	return req, err
}

// windowBounds returns the given bounds of a request window in UTC, the zero time for an
// absent one. A bound given as the zero time itself (0001-01-01T00:00:00Z) is refused
// here, where it can still be told from an absent one.
func windowBounds(start, end *time.Time) (time.Time, time.Time, error) {
	var out [2]time.Time
	for i, b := range []struct {
		param string
		t     *time.Time
	}{{"start_time", start}, {"end_time", end}} {
		if b.t == nil {
			continue
		}
		out[i] = b.t.UTC()
		if err := query.CheckBound(b.param, out[i]); err != nil {
			return out[0], out[1], err
		}
	}
	return out[0], out[1], nil
}

func (s *Server) costSession(c *gin.Context) (int, any, error) {
	var flags query.CostFlags
	if err := boolParams(c, map[string]*bool{"include_tariff": &flags.IncludeTariff, "include_carbon": &flags.IncludeCarbon}); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Pricer.Session(c.Request.Context(), scopeOf(c), c.Param("id"), c.Query("direction"), flags)
	return http.StatusOK, out, err
}

func (s *Server) costInstant(c *gin.Context) (int, any, error) {
	var flags query.CostFlags
	var nonPersistentQuery bool
	if err := boolParams(c, map[string]*bool{"include_tariff": &flags.IncludeTariff, "include_carbon": &flags.IncludeCarbon,
		"non_persistent": &nonPersistentQuery}); err != nil {
		return 0, nil, err
	}
	body, err := readMeterBody(c, s.deps.MaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	var inBody struct {
		NonPersistent *bool `json:"non_persistent"`
	}
	// Only non_persistent is read here; a malformed body is reported by the record parser.
	_ = decodeLenient(body, &inBody)
	nonPersistent := nonPersistentQuery || (inBody.NonPersistent != nil && *inBody.NonPersistent)
	record := withoutNonPersistent(body)
	out, err := s.deps.Pricer.Instant(c.Request.Context(), scopeOf(c), record, flags)
	if err != nil || nonPersistent {
		return http.StatusOK, out, err
	}
	// Priced, then stored as PUT /meters/interval would store it.
	if _, err := s.deps.Ingest.SubmitInterval(c.Request.Context(), scopeOf(c), append(append([]byte("["), record...), ']'), ingest.BodyJSONArray); err != nil {
		return 0, nil, err
	}
	out.Persisted = true
	return http.StatusOK, out, nil
}
