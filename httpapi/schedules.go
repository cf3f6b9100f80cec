package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse/schedules"
)

// createSchedule answers POST /schedules: FlatPeak's ScheduleCreate body, kwhouse's
// objective, carbon_weight and include_carbon in the query string.
func (s *Server) createSchedule(c *gin.Context) (int, any, error) {
	var req schedules.Request
	if err := decodeBody(c, &req); err != nil {
		return 0, nil, err
	}
	opt := schedules.Options{Objective: c.Query("objective")}
	var err error
	if opt.CarbonWeight, err = floatParam(c, "carbon_weight"); err != nil {
		return 0, nil, err
	}
	if err := boolParams(c, map[string]*bool{"include_carbon": &opt.IncludeCarbon}); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Schedules.Create(c.Request.Context(), scopeOf(c), req, opt)
	return http.StatusOK, out, err
}

// getSchedule answers GET /schedules/{id}: a stored schedule.
func (s *Server) getSchedule(c *gin.Context) (int, any, error) {
	out, err := s.deps.Schedules.Get(c.Request.Context(), scopeOf(c), c.Param("id"))
	return http.StatusOK, out, err
}
