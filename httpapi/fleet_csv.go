package httpapi

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/query"
)

// csvRowBytes is room for a typical fleet CSV row (a month by DAY row is about 115 bytes)
// and csvChargesBytes for its charges: the answer is appended to one buffer, grown at
// most once or twice where ids or numbers are longer.
const csvRowBytes, csvChargesBytes = 128, 48

// fleetCSV is the CSV form of a fleet answer; withCharges adds the charges_* columns. The
// bytes are encoding/csv's (a field quoted only when it must be, "\n" ending each line),
// appended row by row to one buffer: with encoding/csv's per-field strings a 31,000-row
// month by DAY took about 17 ms of CPU and most of its allocations.
func fleetCSV(out query.FleetCost, withCharges bool) ([]byte, error) {
	row := csvRowBytes
	if withCharges {
		row += csvChargesBytes
	}
	b := make([]byte, 0, 256+len(out.Data)*row)
	header := []string{out.GroupBy + "_id", "date", "start_time", "end_time", "currency_code", "energy_value",
		"energy_value_exact", "tariff_value", "tariff_confidence"}
	if withCharges {
		header = append(header, "charges_energy", "charges_standing", "charges_demand", "charges_tax", "charges_total")
	}
	for i, h := range header {
		b = appendCSVField(b, h, i == 0)
	}
	b = append(b, '\n')
	times := csvTimes{}
	for i := range out.Data {
		var err error
		if b, err = appendFleetRow(b, &out.Data[i], times, withCharges); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendFleetRow appends one fleet row as a CSV line, each number as its JSON is.
func appendFleetRow(b []byte, r *query.FleetRow, times csvTimes, withCharges bool) ([]byte, error) {
	id := r.LocationID + r.DeviceID + r.CustomerID // exactly one is set
	var start, end string
	if r.StartTime != nil {
		start, end = times.of(r.StartTime), times.of(r.EndTime)
	}
	if err := r.Energy.Check(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", id, start+r.Date, err)
	}
	b = appendCSVField(b, id, true)
	for _, f := range [...]string{r.Date, start, end, r.CurrencyCode} {
		b = appendCSVField(b, f, false)
	}
	b = strconv.AppendInt(append(b, ','), r.Energy.Value, 10)
	b, err := appendAmounts(b, r.Energy.ValueExact, r.Tariff.Value, r.Tariff.Confidence)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", id, start+r.Date, err)
	}
	if withCharges {
		ch := r.Charges
		if ch == nil {
			ch = &query.Charges{}
		}
		if b, err = appendAmounts(b, ch.Energy, ch.Standing, ch.Demand, ch.Tax, ch.Total); err != nil {
			return nil, fmt.Errorf("charges of %s: %w", id, err)
		}
	}
	return append(b, '\n'), nil
}

// appendAmounts appends amounts as CSV fields, each after a comma.
func appendAmounts(b []byte, amounts ...query.Amount) ([]byte, error) {
	for _, a := range amounts {
		var err error
		if b, err = a.AppendText(append(b, ',')); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// csvTimes formats the bucket bounds of an answer, each once: its rows share them.
type csvTimes map[catalog.Timestamp]string

func (c csvTimes) of(t *catalog.Timestamp) string {
	s, ok := c[*t]
	if !ok {
		s = t.Time().Format(time.RFC3339)
		c[*t] = s
	}
	return s
}

// appendCSVField appends field as encoding/csv's Writer writes it, after a comma unless
// first: quoted, its quotes doubled, when it holds a comma, quote, CR or LF, starts with
// a space, or is `\.`.
func appendCSVField(b []byte, field string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	if !csvNeedsQuotes(field) {
		return append(b, field...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(field, '"')
		if i < 0 {
			break
		}
		b = append(append(b, field[:i+1]...), '"')
		field = field[i+1:]
	}
	return append(append(b, field...), '"')
}

// csvNeedsQuotes is encoding/csv's rule for a field with ',' as its separator (a byte
// loop: strings.ContainsAny built its set anew for every field, a third of the encoding).
func csvNeedsQuotes(field string) bool {
	if field == "" {
		return false
	}
	if field == `\.` {
		return true
	}
	for i := 0; i < len(field); i++ {
		if c := field[i]; c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	if field[0] < utf8.RuneSelf {
		return field[0] == ' ' || ('\t' <= field[0] && field[0] <= '\r')
	}
	r, _ := utf8.DecodeRuneInString(field)
	return unicode.IsSpace(r)
}
