package httpapi

import (
	"bufio"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse/query"
)

// fleetBody is the body of POST /costs/fleet (docs/costs.md, "POST /costs/fleet").
type fleetBody struct {
	StartTime     *time.Time `json:"start_time"`
	EndTime       *time.Time `json:"end_time"`
	Direction     string     `json:"direction"`
	Aggregation   string     `json:"aggregation"`
	GroupBy       string     `json:"group_by"`
	CustomerID    string     `json:"customer_id"`
	LocationIDs   *[]string  `json:"location_ids"`
	Order         string     `json:"order"`
	Limit         int        `json:"limit"`
	StartingAfter string     `json:"starting_after"`
}

// request is the body as a fleet request; csv asks for every row.
func (b fleetBody) request(csv bool) query.FleetRequest {
	req := query.FleetRequest{Direction: b.Direction, Aggregation: b.Aggregation, GroupBy: b.GroupBy, CustomerID: b.CustomerID,
		Order: b.Order, Limit: b.Limit, StartingAfter: b.StartingAfter, All: csv}
	if b.StartTime != nil {
		req.Start = b.StartTime.UTC()
	}
	if b.EndTime != nil {
		req.End = b.EndTime.UTC()
	}
	if b.LocationIDs != nil {
		req.LocationIDs, req.LocationsSet = *b.LocationIDs, true
	}
	if csv {
		req.Limit, req.StartingAfter = query.MaxFleetLimit, ""
	}
	return req
}

func (s *Server) costFleet(c *gin.Context) {
	var body fleetBody
	if err := decodeBody(c, &body); err != nil {
		s.writeError(c, err)
		return
	}
	asCSV := strings.Contains(c.GetHeader("Accept"), "text/csv")
	out, err := s.deps.Pricer.Fleet(c.Request.Context(), scopeOf(c), body.request(asCSV))
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !asCSV {
		c.JSON(http.StatusOK, out)
		return
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Status(http.StatusOK)
	// 64 KiB writes: csv's own 4 KiB buffer made 750 writes of a 31,000-row answer.
	buf := bufio.NewWriterSize(c.Writer, 64<<10)
	w := csv.NewWriter(buf)
	_ = w.Write([]string{out.GroupBy + "_id", "date", "start_time", "end_time", "currency_code", "energy_value",
		"energy_value_exact", "tariff_value", "tariff_confidence"})
	for _, r := range out.Data {
		_ = w.Write(csvRow(r))
	}
	w.Flush()
	_ = buf.Flush()
}

// csvRow is one fleet row as CSV fields (empty where the row has no such field).
func csvRow(r query.FleetRow) []string {
	id := r.LocationID + r.DeviceID + r.CustomerID // exactly one is set
	var start, end string
	if r.StartTime != nil {
		start, end = r.StartTime.Time().Format(time.RFC3339), r.EndTime.Time().Format(time.RFC3339)
	}
	return []string{id, r.Date, start, end, r.CurrencyCode, strconv.FormatInt(r.Energy.Value, 10),
		amountText(r.Energy.ValueExact), amountText(r.Tariff.Value), amountText(r.Tariff.Confidence)}
}

// amountText writes an amount as its JSON does.
func amountText(a query.Amount) string {
	b, _ := a.MarshalJSON()
	return string(b)
}
