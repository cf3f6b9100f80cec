package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse/query"
)

// tariffRates answers GET /tariffs/rates/{id}: the price timeline of a location.
func (s *Server) tariffRates(c *gin.Context) (int, any, error) {
	start, end, err := s.window(c)
	if err != nil {
		return 0, nil, err
	}
	req := query.RatesRequest{LocationID: c.Param("id"), Direction: c.Query("direction"), Start: start, End: end}
	if err := boolParams(c, map[string]*bool{"include_tariff": &req.IncludeTariff, "include_carbon": &req.IncludeCarbon}); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Pricer.Rates(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}

// tariffAudit answers GET /tariffs/audit/{id}: the timeline of a location with how each
// price came about.
func (s *Server) tariffAudit(c *gin.Context) (int, any, error) {
	start, end, err := s.window(c)
	if err != nil {
		return 0, nil, err
	}
	req := query.RatesRequest{LocationID: c.Param("id"), Direction: c.Query("direction"), Start: start, End: end}
	out, err := s.deps.Pricer.Audit(c.Request.Context(), scopeOf(c), req)
	return http.StatusOK, out, err
}
