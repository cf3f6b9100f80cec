package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The public data files the demo reads (their sources and licences: SOURCES.md beside them).
const (
	AgileFile     = "agile_A_eastern_england_2018-2021.csv"
	HouseholdFile = "uk_household_halfhourly_import_2020-2023.csv"
	AusgridFile   = "ausgrid_customer12_consumption_solar_2011-2012.csv"
)

// AusgridYears moves the Sydney home's readings (July 2011 to June 2012) onto the demo's
// window, keeping their local dates and times, so that the whole fleet shares one window.
const AusgridYears = 9

// ReadDir reads the fleet's data from dir over [from, to). A missing file leaves its part
// empty and is named in missing; a file that cannot be read is an error.
func ReadDir(dir string, from, to time.Time) (f Fleet, missing []string, err error) {
	parts := []struct {
		name string
		read func(io.Reader) error
	}{
		{AgileFile, func(r io.Reader) (err error) { f.Agile, err = ReadAgile(r, from, to); return err }},
		{HouseholdFile, func(r io.Reader) (err error) { f.London, err = ReadHousehold(r, from, to); return err }},
		{AusgridFile, func(r io.Reader) (err error) { f.Sydney, err = ReadAusgrid(r, from, to, AusgridYears); return err }},
	}
	for _, p := range parts {
		file, err := os.Open(filepath.Join(dir, p.name))
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, p.name)
			continue
		}
		if err != nil {
			return f, nil, err
		}
		err = p.read(file)
		file.Close()
		if err != nil {
			return f, nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return f, missing, nil
}

// ReadAgile reads Octopus Agile prices (no header; UTC start, local time, region letter,
// region name, pence per kWh) starting in [from, to), as GBP per kWh.
func ReadAgile(r io.Reader, from, to time.Time) ([]Price, error) {
	var out []Price
	err := eachRow(r, 5, false, func(row []string) error {
		start, err := time.Parse(time.RFC3339, row[0])
		if err != nil || start.Before(from) || !start.Before(to) {
			return err
		}
		pounds, err := scaled(row[4], 1, 100)
		out = append(out, Price{Start: start, Price: pounds})
		return err
	})
	return out, err
}

// ReadHousehold reads a household's import (header; UTC end of the half hour, kWh) whose
// half hours start in [from, to), oldest first.
func ReadHousehold(r io.Reader, from, to time.Time) ([]Reading, error) {
	var out []Reading
	err := eachRow(r, 2, true, func(row []string) error {
		end, err := time.Parse("2006-01-02 15:04:05-07:00", row[0])
		start := end.Add(-30 * time.Minute).UTC()
		if err != nil || start.Before(from) || !start.Before(to) {
			return err
		}
		wh, err := scaled(row[1], 1000, 1)
		out = append(out, Reading{Start: start, Wh: wh, Direction: "IMPORT"})
		return err
	})
	slices.SortFunc(out, func(a, b Reading) int { return a.Start.Compare(b.Start) })
	return out, err
}

// ReadAusgrid reads a Sydney home's consumption (GC, import) and rooftop solar generation
// (GG, export) as average kW over half hours starting at naive Australia/Sydney times,
// moved years later, whose half hours start in [from, to).
func ReadAusgrid(r io.Reader, from, to time.Time, years int) ([]Reading, error) {
	zone, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		return nil, fmt.Errorf("zone: %w", err)
	}
	var out []Reading
	err = eachRow(r, 3, true, func(row []string) error {
		naive, err := time.Parse(time.DateTime, row[0])
		if err != nil {
			return err
		}
		start := time.Date(naive.Year()+years, naive.Month(), naive.Day(), naive.Hour(), naive.Minute(), 0, 0, zone)
		if start.Before(from) || !start.Before(to) {
			return nil
		}
		for i, dir := range []string{"IMPORT", "EXPORT"} {
			wh, err := scaled(row[1+i], 500, 1) // kW held for half an hour
			if err != nil {
				return err
			}
			out = append(out, Reading{Start: start, Wh: wh, Direction: dir})
		}
		return nil
	})
	return out, err
}

// eachRow calls fn with every row of a CSV of at least n fields, after the header when
// header is set; an error names the line.
func eachRow(r io.Reader, n int, header bool, fn func([]string) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	for line := 1; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if header && line == 1 {
			continue
		}
		if len(row) < n {
			return fmt.Errorf("line %d: %d fields, want %d", line, len(row), n)
		}
		if err := fn(row); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}

// scaled is the decimal s × mul ÷ div as the float64 nearest the exact result, so that
// 8.1585 pence is 0.081585 pounds and 0.1950 kWh is 195 Wh, with no binary noise added.
func scaled(s string, mul, div int64) (float64, error) {
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	f, _ := v.Mul(v, big.NewRat(mul, div)).Float64()
	return f, nil
}
