package catalog

import (
	_ "embed"
	"strings"
	"sync"
	"time"

	"github.com/biter777/countries"
	"github.com/ringsaturn/tzf"
)

// zoneTab is the IANA time zone database's zone.tab (public domain): which zones each
// country uses.
//
//go:embed zone.tab
var zoneTab string

// ZoneFinder derives a location's time zone from its country and coordinates.
type ZoneFinder struct {
	byCountry map[string][]string

	agreeMu sync.Mutex
	agree   map[string]bool // country: do all its zones keep the same clock?

	geoOnce sync.Once
	geo     tzf.F
	geoErr  error
}

// NewZoneFinder parses the embedded zone table. The coordinate finder loads on first use.
func NewZoneFinder() *ZoneFinder {
	z := &ZoneFinder{byCountry: map[string][]string{}, agree: map[string]bool{}}
	for _, line := range strings.Split(zoneTab, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) >= 3 {
			z.byCountry[cols[0]] = append(z.byCountry[cols[0]], cols[2])
		}
	}
	return z
}

// CountryZones returns the zones of a two-letter country code.
func (z *ZoneFinder) CountryZones(country string) []string { return z.byCountry[country] }

// CountryZone returns the zone of a country when it has one clock: a single zone, or
// zones that agree on the UTC offset at every hour of the years around now (Germany's
// Europe/Berlin and Europe/Busingen). The first listed zone is returned.
func (z *ZoneFinder) CountryZone(country string, now time.Time) (string, bool) {
	zones := z.byCountry[country]
	if len(zones) == 0 {
		return "", false
	}
	z.agreeMu.Lock()
	defer z.agreeMu.Unlock()
	same, ok := z.agree[country]
	if !ok {
		same = sameClock(zones, now)
		z.agree[country] = same
	}
	return zones[0], same
}

// sameClock reports whether zones have equal offsets hourly from a year before now to two after.
func sameClock(zones []string, now time.Time) bool {
	locs := make([]*time.Location, 0, len(zones))
	for _, name := range zones {
		loc, err := time.LoadLocation(name)
		if err != nil {
			return false
		}
		locs = append(locs, loc)
	}
	start := now.UTC().Truncate(time.Hour).AddDate(-1, 0, 0)
	for t := start; t.Before(start.AddDate(3, 0, 0)); t = t.Add(time.Hour) {
		_, off0 := t.In(locs[0]).Zone()
		for _, loc := range locs[1:] {
			if _, off := t.In(loc).Zone(); off != off0 {
				return false
			}
		}
	}
	return true
}

// AtPoint returns the zone at lat/lng, or "" when none is known (open sea).
func (z *ZoneFinder) AtPoint(lat, lng float64) (string, error) {
	z.geoOnce.Do(func() { z.geo, z.geoErr = tzf.NewDefaultFinder() })
	if z.geoErr != nil {
		return "", z.geoErr
	}
	return z.geo.GetTimezoneName(lng, lat), nil
}

// ValidCountry reports whether code is an ISO 3166-1 alpha-2 code in upper case.
func ValidCountry(code string) bool {
	return len(code) == 2 && code == strings.ToUpper(code) && countries.ByName(code).IsValid() &&
		countries.ByName(code).Alpha2() == code
}

// ValidCurrency reports whether code is an ISO 4217 code in upper case.
func ValidCurrency(code string) bool {
	c := countries.CurrencyCodeByName(code)
	return len(code) == 3 && code == strings.ToUpper(code) && c.IsValid() && c.Alpha() == code
}

// CountryCurrency returns the currency of a country, or "".
func CountryCurrency(country string) string {
	c := countries.ByName(country).Currency()
	if !c.IsValid() {
		return ""
	}
	return c.Alpha()
}
