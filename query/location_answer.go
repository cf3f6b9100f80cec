package query

import (
	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// LocationAnswer is the head of every answer about one location's prices (tariff_rate,
// slot_threshold and slot_time, tariff_rate_audit): FlatPeak gives these the same first
// fields, in this order, and kwhouse fills them from the location in one place.
type LocationAnswer struct {
	ID               string `json:"id"`
	Object           string `json:"object"`
	LiveMode         bool   `json:"live_mode"`
	LocationID       string `json:"location_id"`
	LocationTimezone string `json:"location_timezone"`
	CurrencyCode     string `json:"currency_code"`
	Direction        string `json:"direction"`
}

// newLocationAnswer is the head of an answer of object about loc, with a new id of prefix.
func newLocationAnswer(prefix, object string, scope kwhouse.Scope, loc catalog.Location, direction string) LocationAnswer {
	return LocationAnswer{ID: kwhouse.NewID(prefix), Object: object, LiveMode: scope.LiveMode, LocationID: loc.ID,
		LocationTimezone: loc.Timezone, CurrencyCode: loc.CurrencyCode, Direction: direction}
}
