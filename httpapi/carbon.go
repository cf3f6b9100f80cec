package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
)

func (s *Server) createCarbonSeries(c *gin.Context) (int, any, error) {
	var in carbon.SeriesInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	se, err := s.deps.Carbon.Create(c.Request.Context(), scopeOf(c), in)
	return http.StatusOK, se, err
}

func (s *Server) getCarbonSeries(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCarbon)
	if err != nil {
		return 0, nil, err
	}
	se, err := s.deps.Carbon.Get(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, se, err
}

// putCarbonIntensities takes the ingest body limit: a year of intensities exceeds the
// metadata limit, as market prices do.
func (s *Server) putCarbonIntensities(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCarbon)
	if err != nil {
		return 0, nil, err
	}
	body, err := readMeterBody(c, s.deps.IngestMaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	var ivs []carbon.Intensity
	if err := decodeJSON(body, &ivs); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Carbon.PutIntensities(c.Request.Context(), scopeOf(c), id, ivs)
	return http.StatusOK, out, err
}
