package catalog

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// zoneAliases are old Area/Location names of zone.tab's zones (Europe/Kiev, US/Eastern).
//
//go:embed zone_aliases.txt
var zoneAliases string

// acceptedZones is the set of time zone names a location or tariff may name: zone.tab's
// zones, their old names (zone_aliases.txt), the fixed-offset Etc zones and UTC. Every
// one loads in Go and in ClickHouse, 18.16 and current (the conformance suite runs each).
// Names outside it are refused even where the host's tz database has them: right/…
// (leap seconds) and posix/… copies load in Go from /usr/share/zoneinfo but not in
// ClickHouse, and a zone ClickHouse cannot load fails every local-day query naming it.
var acceptedZones = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{"UTC": true}
	for _, text := range []string{zoneTab, zoneAliases} {
		for _, line := range strings.Split(text, "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			if cols := strings.Split(line, "\t"); len(cols) >= 3 {
				set[cols[2]] = true // zone.tab: country, coordinates, zone
			} else {
				set[strings.TrimSpace(line)] = true
			}
		}
	}
	for _, name := range []string{"GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "UCT", "UTC", "Universal", "Zulu"} {
		set["Etc/"+name] = true
	}
	for h := 1; h <= 14; h++ {
		set[fmt.Sprintf("Etc/GMT-%d", h)] = true // east of Greenwich (POSIX sign)
		if h <= 12 {
			set[fmt.Sprintf("Etc/GMT+%d", h)] = true
		}
	}
	return set
})

// AcceptedZones returns every time zone name ValidZone may accept, sorted.
func AcceptedZones() []string {
	out := make([]string, 0, len(acceptedZones()))
	for name := range acceptedZones() {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ValidZone reports whether name is a time zone a location or tariff may name: one of
// AcceptedZones (the one rule the API and kwhouse import share) that Go loads.
func ValidZone(name string) bool {
	if !acceptedZones()[name] {
		return false
	}
	_, err := LoadZone(name)
	return err == nil
}
