package tariffs

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
)

// A location created through the API has no tariffs. Until its first tariff of each
// direction and type, a one-time marker in Redis says so, and that create skips reading
// the location's tariffs for the overlap check: the read scans the location ids of every
// tariff of the account (4–7 ms at 100,000 tariffs), the largest part of onboarding's
// ClickHouse work when it runs (docs/benchmarks.md, "Onboarding").
//
// The marker is taken — deleted, atomically — under the tariff lock before the write, so
// at most one create ever trusts it; once taken, expired, lost with Redis or never set
// (Redis down, or locations from kwhouse import), creates read the tariffs. Only a location
// create sets markers, and only after its location is stored, before its id is known to
// anyone.

// LocationsCreated implements catalog.TariffView: it marks new locations fresh.
func (s *Service) LocationsCreated(ctx context.Context, scope kwhouse.Scope, ids []string) {
	var keys []string
	var values [][]byte
	for _, id := range ids {
		for _, dir := range []string{Import, Export} {
			for _, typ := range []string{Commodity, NonCommodity} {
				keys, values = append(keys, freshKey(scope, id, dir, typ)), append(values, []byte{1})
			}
		}
	}
	s.docs.Cache().SetMany(ctx, keys, values)
}

// mayOverlap returns the tariffs t's contract must not overlap: none when t is a create
// that takes its location's fresh marker, else every tariff of the location.
func (s *Service) mayOverlap(ctx context.Context, scope kwhouse.Scope, t *Tariff, created bool) ([]Tariff, error) {
	if created && s.docs.Cache().Take(ctx, freshKey(scope, t.LocationID, t.Direction, t.Type)) {
		return nil, nil
	}
	return s.ofLocation(ctx, scope, t.LocationID)
}

func freshKey(scope kwhouse.Scope, location, direction, typ string) string {
	return fmt.Sprintf("fresh-location:%s:%t:%s:%s:%s", scope.AccountID, scope.LiveMode, location, direction, typ)
}
