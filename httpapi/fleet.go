package httpapi

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse/catalog"
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
	out, err := s.deps.Pricer.Fleet(c.Request.Context(), scopeOf(c), req)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if !asCSV {
		s.writeJSON(c, http.StatusOK, out)
		return
	}
	// The whole CSV is made before anything is sent: a row that cannot be written is a
	// 500 with the error body, not a 200 cut short.
	b, err := fleetCSV(out, req.IncludeCharges)
	if err != nil {
		s.writeError(c, fmt.Errorf("encode fleet CSV: %w", err))
		return
	}
	c.Data(http.StatusOK, "text/csv; charset=utf-8", b)
}

// fleetCSV is the CSV form of a fleet answer; withCharges adds the charges_* columns.
func fleetCSV(out query.FleetCost, withCharges bool) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(out.Data) * 160)
	w := csv.NewWriter(&buf)
	header := []string{out.GroupBy + "_id", "date", "start_time", "end_time", "currency_code", "energy_value",
		"energy_value_exact", "tariff_value", "tariff_confidence"}
	if withCharges {
		header = append(header, "charges_energy", "charges_standing", "charges_demand", "charges_tax", "charges_total")
	}
	if err := w.Write(header); err != nil {
		return nil, err
	}
	c := csvCells{times: map[catalog.Timestamp]string{}}
	for _, r := range out.Data {
		row, err := c.row(r)
		if err == nil && withCharges {
			row, err = c.charges(row, r)
		}
		if err != nil {
			return nil, err
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// charges appends a row's charges to its CSV fields, each number as its JSON is, the five
// appended to one buffer and cut from one string as row's numbers are.
func (c *csvCells) charges(fields []string, r query.FleetRow) ([]string, error) {
	ch := r.Charges
	if ch == nil {
		ch = &query.Charges{}
	}
	c.num = c.num[:0]
	var ends [5]int
	for i, a := range [5]query.Amount{ch.Energy, ch.Standing, ch.Demand, ch.Tax, ch.Total} {
		var err error
		if c.num, err = a.AppendText(c.num); err != nil {
			return nil, fmt.Errorf("charges of %s: %w", fields[0], err)
		}
		ends[i] = len(c.num)
	}
	nums := string(c.num)
	from := 0
	for _, end := range ends {
		fields = append(fields, nums[from:end])
		from = end
	}
	c.fields = fields // the next row reuses the room for its charges too
	return fields, nil
}

// csvCells writes rows' CSV fields: the rows of an answer share their buckets' bounds,
// so each is formatted once, and numbers are appended to one buffer.
type csvCells struct {
	times  map[catalog.Timestamp]string
	fields []string
	num    []byte
}

func (c *csvCells) time(t *catalog.Timestamp) string {
	s, ok := c.times[*t]
	if !ok {
		s = t.Time().Format(time.RFC3339)
		c.times[*t] = s
	}
	return s
}

// row is one fleet row as CSV fields (empty where the row has no such field), each
// number as its JSON is; the fields are reused by the next row.
func (c *csvCells) row(r query.FleetRow) ([]string, error) {
	id := r.LocationID + r.DeviceID + r.CustomerID // exactly one is set
	var start, end string
	if r.StartTime != nil {
		start, end = c.time(r.StartTime), c.time(r.EndTime)
	}
	if err := r.Energy.Check(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", id, start+r.Date, err)
	}
	c.num = strconv.AppendInt(c.num[:0], r.Energy.Value, 10)
	ends := [4]int{len(c.num)}
	for i, a := range []query.Amount{r.Energy.ValueExact, r.Tariff.Value, r.Tariff.Confidence} {
		var err error
		if c.num, err = a.AppendText(c.num); err != nil {
			return nil, fmt.Errorf("%s %s: %w", id, start+r.Date, err)
		}
		ends[i+1] = len(c.num)
	}
	nums := string(c.num) // one string for the row's four numbers
	c.fields = append(c.fields[:0], id, r.Date, start, end, r.CurrencyCode,
		nums[:ends[0]], nums[ends[0]:ends[1]], nums[ends[1]:ends[2]], nums[ends[2]:ends[3]])
	return c.fields, nil
}
