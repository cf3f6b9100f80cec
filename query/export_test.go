package query

// JoinOnly returns a Pricer like c that prices every window through the JOINs of cost.sql
// and fleet.sql, the paths tiered tariffs and long market windows take.
func JoinOnly(c *Pricer) *Pricer {
	d := *c
	d.joinOnly = true
	return &d
}

// FinalAlways returns a Pricer like c whose fleet array queries read with FINAL however
// small the batch.
func FinalAlways(c *Pricer) *Pricer {
	d := *c
	d.finalFrom = 1
	return &d
}

// DedupAlways returns a Pricer like c whose fleet queries deduplicate readings at once
// rather than after a read that found re-sent ones.
func DedupAlways(c *Pricer) *Pricer {
	d := *c
	d.dedupFirst = true
	return &d
}

// WithoutHints returns a Pricer like c that never skips the undeduplicated first read of a
// fleet query, however dirty earlier reads were: every query takes the path under test.
func WithoutHints(c *Pricer) *Pricer {
	d := *c
	d.hints = nil
	return &d
}

// WithoutFleetCache returns a Pricer like c that prices every fleet bucket afresh.
func WithoutFleetCache(c *Pricer) *Pricer {
	d := *c
	d.fleetCache = nil
	return &d
}

// WithFleetCache returns a Pricer like c with an empty fleet bucket cache of its own.
func WithFleetCache(c *Pricer) *Pricer {
	d := *c
	d.fleetCache = newFleetCache(defaultFleetCacheLocations)
	return &d
}

// FleetCacheHits returns how many fleet buckets c served from its cache, and how many it priced.
func FleetCacheHits(c *Pricer) (hits, priced int64) {
	return c.fleetCache.hits.Load(), c.fleetCache.misses.Load()
}

// FleetPrintsReused returns how many fingerprint reads c's fleet cache skipped because no
// part of the table had changed.
func FleetPrintsReused(c *Pricer) int64 { return c.fleetCache.printsReused.Load() }
