package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
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
	lq, err := listQuery(c, kwhouse.PrefixTariff)
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
	// Another account's market, or none, is a 404 before a byte of the body is read.
	if _, err := s.deps.Tariffs.GetMarket(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	prices, err := decodeSeries[tariffs.MarketPrice](c, s.deps.SeriesMaxBodyBytes, tariffs.PricesBound)
	if err != nil {
		return 0, nil, err
	}
	r, err := s.deps.Tariffs.PutPrices(c.Request.Context(), scopeOf(c), id, prices)
	return http.StatusOK, r, err
}
