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

// putCarbonIntensities takes ingest.max_series_bytes: a year of intensities exceeds the
// metadata limit, as market prices do.
func (s *Server) putCarbonIntensities(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCarbon)
	if err != nil {
		return 0, nil, err
	}
	// Another account's series, or none, is a 404 before a byte of the body is read.
	if _, err := s.deps.Carbon.Get(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	ivs, err := decodeSeries[carbon.Intensity](c, s.deps.SeriesMaxBodyBytes, carbon.IntensitiesBound)
	if err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Carbon.PutIntensities(c.Request.Context(), scopeOf(c), id, ivs)
	return http.StatusOK, out, err
}
