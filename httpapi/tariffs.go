package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/tariffs"
)

func (s *Server) createTariff(c *gin.Context) (int, any, error) {
	var in tariffs.Input
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	t, err := s.deps.Tariffs.Create(c.Request.Context(), scopeOf(c), in)
	return http.StatusOK, t, err
}

func (s *Server) getTariff(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixTariff)
	if err != nil {
		return 0, nil, err
	}
	t, err := s.deps.Tariffs.Get(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, t, err
}

func (s *Server) listTariffs(c *gin.Context) (int, any, error) {
	lq, err := listQuery(c, kwhouse.PrefixTariff, nil)
	if err != nil {
		return 0, nil, err
	}
	q := tariffs.ListQuery{ListQuery: lq, LocationID: c.Query("location_id"), Direction: c.Query("direction"), Type: c.Query("type")}
	if !kwhouse.ValidID(kwhouse.PrefixLocation, q.LocationID) {
		return 0, nil, kwhouse.Invalid("parameter_missing", "location_id", "location_id (loc_…) is required")
	}
	data, more, err := s.deps.Tariffs.List(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}

func (s *Server) updateTariff(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixTariff)
	if err != nil {
		return 0, nil, err
	}
	var u tariffs.Update
	if err := decodeBody(c, &u); err != nil {
		return 0, nil, err
	}
	t, err := s.deps.Tariffs.UpdateElement(c.Request.Context(), scopeOf(c), id, u)
	return http.StatusOK, t, err
}

func (s *Server) deleteTariff(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixTariff)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deps.Tariffs.Delete(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	return accepted(id, "tariff")
}

func (s *Server) createMarket(c *gin.Context) (int, any, error) {
	var in tariffs.MarketInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	m, err := s.deps.Tariffs.CreateMarket(c.Request.Context(), scopeOf(c), in)
	return http.StatusOK, m, err
}

func (s *Server) getMarket(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixMarket)
	if err != nil {
		return 0, nil, err
	}
	m, err := s.deps.Tariffs.GetMarket(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, m, err
}

func (s *Server) putMarketPrices(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixMarket)
	if err != nil {
		return 0, nil, err
	}
	body, err := readMeterBody(c, s.deps.IngestMaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	var prices []tariffs.MarketPrice
	if err := decodeJSON(body, &prices); err != nil {
		return 0, nil, err
	}
	r, err := s.deps.Tariffs.PutPrices(c.Request.Context(), scopeOf(c), id, prices)
	return http.StatusOK, r, err
}

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
	out, err := s.deps.Coster.Interval(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}

// costRequest reads the query parameters and the window of a cost request.
func costRequest(c *gin.Context) (query.CostRequest, error) {
	req := query.CostRequest{Direction: c.Query("direction"), Aggregation: c.Query("aggregation")}
	if err := boolParams(c, map[string]*bool{"include_tariff": &req.IncludeTariff, "include_carbon": &req.IncludeCarbon}); err != nil {
		return req, err
	}
	var w costWindow
	if err := decodeBody(c, &w); err != nil {
		return req, err
	}
	if w.StartTime != nil {
		req.Start = w.StartTime.UTC()
	}
	if w.EndTime != nil {
		req.End = w.EndTime.UTC()
	}
	return req, nil
}

func (s *Server) costSession(c *gin.Context) (int, any, error) {
	var flags query.CostFlags
	if err := boolParams(c, map[string]*bool{"include_tariff": &flags.IncludeTariff, "include_carbon": &flags.IncludeCarbon}); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Coster.Session(c.Request.Context(), scopeOf(c), c.Param("id"), c.Query("direction"), flags)
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
	out, err := s.deps.Coster.Instant(c.Request.Context(), scopeOf(c), s.deps.Ingest, withoutNonPersistent(body), nonPersistent, flags)
	return http.StatusOK, out, err
}
