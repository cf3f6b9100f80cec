package onboard

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/strictjson"
	"github.com/kwhouse/kwhouse/tariffs"
)

// readNDJSON reads one row object per line; a line that is not one is rejected.
func readNDJSON(r io.Reader, add func(line) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for num := 1; ; num++ {
		text, err := br.ReadString('\n')
		if text == "" && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read line %d: %w", num, err)
		}
		text = strings.TrimRight(text, "\r\n")
		if strings.TrimSpace(text) == "" {
			continue
		}
		ln := line{num: num, original: text}
		ln.problem = strictjson.Decode([]byte(text), &ln.row)
		if err := add(ln); err != nil {
			return err
		}
	}
}

// csvColumns are the columns a CSV import may have, each setting its part of a row. An
// empty cell leaves its field unset, as a missing JSON member does.
var csvColumns = map[string]func(r *Row, v string) error{
	"reference_id":     func(r *Row, v string) error { r.ReferenceID = &v; return nil },
	"customer_id":      func(r *Row, v string) error { r.CustomerID = &v; return nil },
	"timezone":         func(r *Row, v string) error { r.Timezone = &v; return nil },
	"currency_code":    func(r *Row, v string) error { r.CurrencyCode = &v; return nil },
	"carbon_series_id": func(r *Row, v string) error { r.CarbonSeriesID = &v; return nil },
	"address_line1":    func(r *Row, v string) error { address(r).AddressLine1 = v; return nil },
	"address_line2":    func(r *Row, v string) error { address(r).AddressLine2 = v; return nil },
	"city":             func(r *Row, v string) error { address(r).City = v; return nil },
	"state":            func(r *Row, v string) error { address(r).State = v; return nil },
	"post_code":        func(r *Row, v string) error { address(r).PostCode = v; return nil },
	"country_code":     func(r *Row, v string) error { address(r).CountryCode = v; return nil },
	"lat":              func(r *Row, v string) error { return coordinate(&geo(r).Lat, "geo_location.lat", v) },
	"lng":              func(r *Row, v string) error { return coordinate(&geo(r).Lng, "geo_location.lng", v) },
	"tariffs":          tariffsCell,
}

func address(r *Row) *catalog.PostalAddress {
	if r.PostalAddress == nil {
		r.PostalAddress = &catalog.PostalAddress{}
	}
	return r.PostalAddress
}

func geo(r *Row) *catalog.GeoLocation {
	if r.GeoLocation == nil {
		r.GeoLocation = &catalog.GeoLocation{}
	}
	return r.GeoLocation
}

func coordinate(dst *float64, param, v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return kwhouse.Invalid("invalid_type", param, "wrong type: got %q, want a number", v)
	}
	*dst = f
	return nil
}

// tariffsCell reads a JSON array of tariff bodies.
func tariffsCell(r *Row, v string) error {
	var ts []tariffs.Input
	if err := strictjson.Decode([]byte(v), &ts); err != nil {
		if e := kwhouse.AsError(err); e != nil {
			c := *e
			c.Param = "tariffs" + e.Param
			return &c
		}
		return err
	}
	r.Tariffs = &ts
	return nil
}

func csvColumnNames() string {
	names := make([]string, 0, len(csvColumns))
	for n := range csvColumns {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// readCSV reads a header row naming columns of csvColumns, then one row per line.
func readCSV(r io.Reader, add func(line) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read CSV header: %w", err)
	}
	set := make([]func(*Row, string) error, len(header))
	for i, name := range header {
		if set[i] = csvColumns[strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))]; set[i] == nil {
			return fmt.Errorf("CSV header: unknown column %q (columns are %s)", name, csvColumnNames())
		}
	}
	for num := 2; ; num++ {
		cells, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		ln := line{num: num}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			ln.problem = kwhouse.Invalid("invalid_csv", "row", "malformed CSV: %v", pe.Err)
		case err != nil:
			return fmt.Errorf("read CSV line %d: %w", num, err)
		case len(cells) != len(set):
			ln.problem = kwhouse.Invalid("invalid_csv", "row", "row has %d columns, the header %d", len(cells), len(set))
		default:
			ln.problem = fill(&ln.row, set, cells)
		}
		ln.original = csvLine(cells)
		if err := add(ln); err != nil {
			return err
		}
	}
}

func fill(r *Row, set []func(*Row, string) error, cells []string) error {
	for i, v := range cells {
		if v == "" {
			continue
		}
		if err := set[i](r, v); err != nil {
			return err
		}
	}
	return nil
}

// csvLine is a row as CSV again, for the reject file.
func csvLine(cells []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(cells) // a strings.Builder does not fail
	w.Flush()
	return strings.TrimRight(b.String(), "\r\n")
}
