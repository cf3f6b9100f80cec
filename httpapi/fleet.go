package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse/query"
)

// fleetBody is the body of POST /costs/fleet (docs/costs.md, "POST /costs/fleet").
type fleetBody struct {
	StartTime      *time.Time `json:"start_time"`
	EndTime        *time.Time `json:"end_time"`
	Direction      string     `json:"direction"`
	Aggregation    string     `json:"aggregation"`
	GroupBy        string     `json:"group_by"`
	CustomerID     string     `json:"customer_id"`
	LocationIDs    *[]string  `json:"location_ids"`
	Order          string     `json:"order"`
	Limit          *int       `json:"limit"`
	StartingAfter  string     `json:"starting_after"`
	IncludeCharges bool       `json:"include_charges"`
}

// request is the body as a fleet request; csv asks for every row.
func (b fleetBody) request(csv bool) (query.FleetRequest, error) {
	req := query.FleetRequest{Direction: b.Direction, Aggregation: b.Aggregation, GroupBy: b.GroupBy, CustomerID: b.CustomerID,
		Order: b.Order, StartingAfter: b.StartingAfter, All: csv, IncludeCharges: b.IncludeCharges}
	if b.Limit != nil {
		req.Limit, req.LimitSet = *b.Limit, true
	}
	var err error
	if req.Start, req.End, err = windowBounds(b.StartTime, b.EndTime); err != nil {
		return req, err
	}
	if b.LocationIDs != nil {
		req.LocationIDs, req.LocationsSet = *b.LocationIDs, true
	}
	if csv {
		req.Limit, req.StartingAfter = query.MaxFleetLimit, ""
	}
	return req, nil
}

func (s *Server) costFleet(c *gin.Context) {
	var body fleetBody
	if err := decodeBody(c, &body); err != nil {
		s.writeError(c, err)
		return
	}
	asCSV := strings.Contains(c.GetHeader("Accept"), "text/csv")
	req, err := body.request(asCSV)
	if err != nil {
		s.writeError(c, err)
		return
	}
	format, contentType, encode := "json", "application/json; charset=utf-8", encodeFleetJSON
	if asCSV {
		format, contentType = "csv", "text/csv; charset=utf-8"
		encode = func(out query.FleetCost) ([]byte, error) { return encodeFleetCSV(out, req.IncludeCharges) }
	}
	// The whole answer is encoded before anything is sent (or served whole from the answer
	// cache): a row that cannot be written is a 500 with the error body, not a 200 cut short.
	ans, err := s.deps.Pricer.FleetAnswer(c.Request.Context(), scopeOf(c), req, format, encode)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.sendFleet(c, ans, contentType)
}

// sendFleet sends a fleet answer served from the answer cache gzipped, as stored, to a
// client that accepts gzip, and any other as encoded (docs/costs.md, "Answer cache").
func (s *Server) sendFleet(c *gin.Context, ans *query.Answer, contentType string) {
	c.Header("Vary", "Accept-Encoding")
	if gz, ok := ans.Stored(); ok && acceptsGzip(c.GetHeader("Accept-Encoding")) {
		c.Header("Content-Encoding", "gzip")
		c.Data(http.StatusOK, contentType, gz)
		return
	}
	b, err := ans.Plain()
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Data(http.StatusOK, contentType, b)
}

// encodeFleetJSON is a fleet answer as writeJSON encodes any answer.
func encodeFleetJSON(out query.FleetCost) ([]byte, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode fleet answer: %w", err)
	}
	return b, nil
}

// encodeFleetCSV is a fleet answer as CSV.
func encodeFleetCSV(out query.FleetCost, charges bool) ([]byte, error) {
	b, err := fleetCSV(out, charges)
	if err != nil {
		return nil, fmt.Errorf("encode fleet CSV: %w", err)
	}
	return b, nil
}
