package query

import (
	"context"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/tariffs"
)

// How a fleet query takes the latest version of each reading (pricingShape.Dedup).
const (
	// dedupNone reads every stored version and flags the groups that hold two (dirty):
	// re-sent readings not yet merged are rare, and deduplicating all of them cost a fleet
	// month more than its pricing (fleet_arrays.sql).
	dedupNone = ""
	// dedupArgMax groups the readings by key and takes the latest version's values.
	dedupArgMax = "argmax"
	// dedupFinal reads with FINAL (fleet_arrays.sql, large batches).
	dedupFinal = "final"
)

// fleetFinalFrom is the number of locations from which fleet_arrays.sql deduplicates with
// FINAL rather than argMax (see there).
const fleetFinalFrom = 500

// fleetPriced prices the locations ids of a task's batch without deduplicating readings,
// then prices again, deduplicated, the locations whose sums counted two versions of a reading.
func (c *Pricer) fleetPriced(ctx context.Context, scope kwhouse.Scope, req FleetRequest, t fleetTask, ids []string,
	plans map[string]tariffs.Plan) ([]fleetSum, error) {
	first := dedupNone
	if c.dedupFirst || c.hints.mostlyDirty(scope, c.now()) {
		first = c.dedupOf(t, len(ids))
	}
	sums, err := c.fleetQuery(ctx, scope, req, t, ids, first, plans)
	if err != nil || first != dedupNone {
		return sums, err
	}
	dirty := map[string]bool{}
	var dirtyIDs []string
	for _, s := range sums {
		if s.Dirty != 0 && !dirty[s.Loc] {
			dirty[s.Loc] = true
			dirtyIDs = append(dirtyIDs, s.Loc)
		}
	}
	c.hints.note(scope, len(dirtyIDs), len(ids), c.now())
	if len(dirtyIDs) == 0 {
		return sums, nil
	}
	again, err := c.fleetQuery(ctx, scope, req, t, dirtyIDs, c.dedupOf(t, len(dirtyIDs)), plans)
	if err != nil {
		return nil, err
	}
	out := again
	for _, s := range sums {
		if !dirty[s.Loc] {
			out = append(out, s)
		}
	}
	return out, nil
}

// dedupOf is how a query of n of a task's locations deduplicates: FINAL for large array batches.
func (c *Pricer) dedupOf(t fleetTask, n int) string {
	if t.fa != nil && n >= c.finalFrom {
		return dedupFinal
	}
	return dedupArgMax
}
