//go:build chdb

package conformance

import (
	"testing"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// Every time zone the API accepts (catalog.AcceptedZones) loads in ClickHouse 18.16 and in
// current ClickHouse: a location in a zone the server cannot load would fail every
// local-day query, its account's fleet included.
func TestEveryAcceptedZoneLoadsOnBothEngines(t *testing.T) {
	zoned := chstore.Tool("SELECT toString(toDateTime(1000000000, ?))")
	for engine, db := range map[string]*chstore.DB{
		"18.16": testkit.ClickHouse(t),
		"chDB":  chdbDB(t, testkit.RandomName("kwzones_")),
	} {
		for _, zone := range catalog.AcceptedZones() {
			var local string
			if err := db.QueryRow(t.Context(), zoned, zone).Scan(&local); err != nil || local == "" {
				t.Errorf("%s: zone %s: %q, %v", engine, zone, local, err)
			}
		}
	}
	// The rule is not vacuous: a right/ zone Go loads from the host fails on ClickHouse.
	var local string
	if err := testkit.ClickHouse(t).QueryRow(t.Context(), zoned, "right/UTC").Scan(&local); err == nil {
		t.Errorf("right/UTC loaded on 18.16 (%q): the refusal it motivates is untested", local)
	}
}
