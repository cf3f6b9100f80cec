package catalog

import (
	"strings"
	"testing"

	"github.com/ringsaturn/tzf"
)

func TestValidZoneAcceptsOnlyTheAllowList(t *testing.T) {
	for _, name := range []string{"Europe/London", "America/Argentina/Buenos_Aires", "America/Coyhaique",
		"US/Eastern", "Europe/Kiev", "Asia/Calcutta", "Etc/GMT-14", "Etc/GMT+12", "Etc/UTC", "UTC"} {
		if !ValidZone(name) {
			t.Errorf("ValidZone(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"right/UTC", "right/Europe/London", "posix/Europe/London", "posix/UTC",
		"Etc/GMT+13", "Etc/GMT-15", "GB", "EST", "EST5EDT", "Local", "", "Europe/London/", "/Europe/London",
		"Europe/../right/UTC", "europe/london", "Mars/Olympus", "Factory"} {
		if ValidZone(name) {
			t.Errorf("ValidZone(%q) = true, want false", name)
		}
	}
}

// Every accepted name loads in Go; none is a right/ or posix/ copy.
func TestAcceptedZonesLoad(t *testing.T) {
	zones := AcceptedZones()
	if len(zones) < 500 {
		t.Fatalf("%d accepted zones, want zone.tab's, their old names and Etc's", len(zones))
	}
	for _, name := range zones {
		if strings.HasPrefix(name, "right/") || strings.HasPrefix(name, "posix/") {
			t.Errorf("%s accepted", name)
		}
		if _, err := LoadZone(name); err != nil {
			t.Errorf("accepted zone %s does not load in Go: %v", name, err)
		}
	}
}

// A zone derived from coordinates is always one the API accepts.
func TestEveryZoneOfTheCoordinateFinderIsAccepted(t *testing.T) {
	f, err := tzf.NewDefaultFinder()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range f.TimezoneNames() {
		if !ValidZone(name) {
			t.Errorf("the coordinate finder may derive %s, which ValidZone refuses", name)
		}
	}
}
