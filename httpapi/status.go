package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/query"
)

// locationStatusBody is the reference's location_status: the catalog's status plus the
// import and export price timelines of yesterday, today and tomorrow (local days).
type locationStatusBody struct {
	catalog.LocationStatus
	Rates map[string]*dayRates `json:"rates"`
}

type dayRates struct {
	Yesterday []query.RateItem `json:"yesterday"`
	Today     []query.RateItem `json:"today"`
	Tomorrow  []query.RateItem `json:"tomorrow"`
}

func (s *Server) locationStatus(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixLocation)
	if err != nil {
		return 0, nil, err
	}
	ctx := c.Request.Context()
	st, err := s.deps.Catalog.LocationStatus(ctx, scopeOf(c), id)
	if err != nil {
		return 0, nil, err
	}
	out := locationStatusBody{LocationStatus: st, Rates: map[string]*dayRates{}}
	for key, direction := range map[string]string{"import": "IMPORT", "export": "EXPORT"} {
		if out.Rates[key], err = s.threeDays(ctx, scopeOf(c), st, direction); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, out, nil
}

// threeDays returns a direction's timeline over yesterday, today and tomorrow, or nil
// when the location has no tariff of that direction.
func (s *Server) threeDays(ctx context.Context, scope kwhouse.Scope, st catalog.LocationStatus, direction string) (*dayRates, error) {
	zone, err := catalog.LoadZone(st.Timezone)
	if err != nil {
		return nil, err
	}
	now := s.deps.Now().In(zone)
	day := func(offset int) time.Time {
		return time.Date(now.Year(), now.Month(), now.Day()+offset, 0, 0, 0, 0, zone)
	}
	r, err := s.deps.Pricer.Rates(ctx, scope, query.RatesRequest{LocationID: st.ID, Direction: direction, Start: day(-1), End: day(2)})
	if kwhouse.KindOf(err) == kwhouse.KindUnprocessable {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &dayRates{Yesterday: clipItems(r.Data, day(-1), day(0)), Today: clipItems(r.Data, day(0), day(1)),
		Tomorrow: clipItems(r.Data, day(1), day(2))}, nil
}

// clipItems keeps the parts of items inside [from, to).
func clipItems(items []query.RateItem, from, to time.Time) []query.RateItem {
	out := []query.RateItem{}
	for _, it := range items {
		a, b := it.ValidFrom.Time(), it.ValidTo.Time()
		if !b.After(from) || !a.Before(to) {
			continue
		}
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		it.ValidFrom, it.ValidTo = catalog.Timestamp(a.UTC()), catalog.Timestamp(b.UTC())
		out = append(out, it)
	}
	return out
}
