package query

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var (
	fleetRecordedStmt = chstore.Register("query.fleet_recorded", "fleet_pages.sql: the directions locations have records in, from the change counts")
	fleetRecordedSQL  = renderFixed("fleet_recorded")
)

// pagedByID reports whether a page of req can be made from the locations from its cursor
// on: rows by location in id order, ascending by location id, so a page needs only the
// locations from the cursor's to the one that fills it.
func pagedByID(req FleetRequest) bool {
	return !req.All && req.Order == OrderID && req.GroupBy == GroupLocation
}

// fleetPage returns the sorted rows of req's page and the locations it lists as skipped:
// the rows of the locations from the cursor's on, in chunks of id order, until they fill
// the page: each chunk the fewest locations whose rows can fill it, as the change counts
// ahead of the cursor bound them (pageAhead), or, where those are not known, enough if
// every location has a row in every bucket (more when chunks come up short). The first page lists every skipped location of the
// whole answer (fleetSkipped, read meanwhile), as an answer in one page does; a later page
// (starting_after given) only the skipped ones among the locations it covers, from its
// cursor's location to its last row's (to the end on the last page), as its own pricing
// finds them: no check of the whole fleet per page, and the pages after the first list
// each skipped location once between them. A later page resolves the plans (plan) of
// the locations it looks at only (pagePlans); the first resolves every one, as the check
// of the whole fleet needs them.
func (c *Pricer) fleetPage(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plan func(ids []string) map[string]tariffs.Plan) ([]FleetRow, []SkippedItem, error) {
	ids := sortedIDs(locs)
	if req.StartingAfter != "" {
		rows, skipped, err := c.pageRows(ctx, scope, req, locs, ids, newPagePlans(ids, nil, plan))
		if err != nil {
			return nil, nil, err
		}
		return rows, coveredSkipped(rows, skipped, req.Limit), nil
	}
	plans := plan(ids)
	var skipped []SkippedItem
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { skipped, err = c.fleetSkipped(gctx, scope, req, locs, plans); return err })
	var rows []FleetRow
	g.Go(func() (err error) {
		rows, _, err = c.pageRows(gctx, scope, req, locs, ids, newPagePlans(ids, plans, plan))
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return rows, skipped, nil
}

// pagePlans resolves the plans of a page's locations as it comes to them, a block of
// consecutive ids at a time: a later page looks at about a page of locations, and
// resolving all of the account's on every page was half of a page's Go work.
type pagePlans struct {
	ids  []string // every location of the answer, in id order
	have map[string]tariffs.Plan
	plan func(ids []string) map[string]tariffs.Plan
}

// planBlock is how many locations pagePlans resolves at once (a page by DAY of a month
// looks at about 34).
const planBlock = 64

// newPagePlans returns the plans of ids, those of have already resolved (have is not
// written to when it holds every one of ids).
func newPagePlans(ids []string, have map[string]tariffs.Plan, plan func(ids []string) map[string]tariffs.Plan) *pagePlans {
	if have == nil {
		have = map[string]tariffs.Plan{}
	}
	return &pagePlans{ids: ids, have: have, plan: plan}
}

// of returns the plan of location id, resolving it with the block of ids from it on.
func (p *pagePlans) of(id string) tariffs.Plan {
	if pl, ok := p.have[id]; ok {
		return pl
	}
	i := sort.SearchStrings(p.ids, id)
	for k, pl := range p.plan(p.ids[i:min(i+planBlock, len(p.ids))]) {
		p.have[k] = pl
	}
	return p.have[id]
}

// chunk returns the plans of the locations of chunk.
func (p *pagePlans) chunk(chunk []string) map[string]tariffs.Plan {
	out := make(map[string]tariffs.Plan, len(chunk))
	for _, id := range chunk {
		out[id] = p.of(id)
	}
	return out
}

// coveredSkipped keeps the skipped locations a page of limit rows cut from rows covers:
// those up to its last row's location when rows go on past the page, else all of them.
func coveredSkipped(rows []FleetRow, skipped []SkippedItem, limit int) []SkippedItem {
	if len(rows) <= limit {
		return skipped
	}
	last := rows[limit-1].key.group
	n := sort.Search(len(skipped), func(i int) bool { return skipped[i].ID > last })
	return skipped[:n]
}

// pageRows returns the sorted rows of the locations from req's cursor on (ids: every
// location of the answer, in id order), at least a page of them when there are that many,
// and the locations skipped among those it priced, in id order.
func (c *Pricer) pageRows(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	ids []string, plans *pagePlans) ([]FleetRow, []SkippedItem, error) {
	ahead, err := aheadOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur, _ := parseCursor(req.StartingAfter) // checked in Validate
	i := sort.SearchStrings(ids, cur.key.group)
	per := rowsPerLocation(req, locs)
	bounds := newPageBounds(req, cur, locs, plans.of)
	grow := 1 // how many times more locations than the rows left need, if chunks come up short
	// The cursor's location comes first, its rows up to the cursor already served.
	behind := 0
	if req.StartingAfter != "" {
		behind = per
	}
	var rows []FleetRow
	skipped := []SkippedItem{}
	for i < len(ids) && len(rows) <= req.Limit {
		want := req.Limit + 1 - len(rows)
		k := grow * ((want + behind + per - 1) / per) // enough for the rows left if every bucket has records
		behind = 0
		end := min(i+k, len(ids))
		if ahead != nil {
			if j := ahead.chunkEnd(ids, i, want, bounds.rowsAtMost); j > i {
				end = j
			}
		}
		chunk := ids[i:end]
		i = i + len(chunk)
		sub := make(map[string]catalog.Location, len(chunk))
		for _, id := range chunk {
			sub[id] = locs[id]
		}
		r, s, err := c.pricedRows(ctx, scope, req, sub, plans.chunk(chunk))
		if err != nil {
			return nil, nil, err
		}
		sortFleet(r, req.Order)
		if req.StartingAfter != "" {
			r = r[sort.Search(len(r), func(j int) bool { return fleetLess(cur, r[j], req.Order) }):]
		}
		if len(r) < want/2 {
			grow *= 2 // sparse locations (few records, or skipped): take more at a time
		}
		rows = append(rows, r...)
		skipped = append(skipped, s...)
	}
	return rows, skipped, nil
}

// fleetSkipped lists the locations of the whole answer that cannot be priced: only a
// location without a tariff of a direction it has records in can be, so only locations
// lacking a direction's tariff with records of that direction written near the window
// (reading_changes) are priced to find out, as the whole answer would.
func (c *Pricer) fleetSkipped(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]SkippedItem, error) {
	var lacking []string
	for id := range locs {
		if p := plans[id]; !p.HasImport || !p.HasExport {
			lacking = append(lacking, id)
		}
	}
	if len(lacking) == 0 {
		return []SkippedItem{}, nil
	}
	slices.Sort(lacking)
	recorded, err := c.recordedDirections(ctx, scope, req, lacking)
	if err != nil {
		return nil, err
	}
	cands := map[string]catalog.Location{}
	for _, r := range recorded {
		if p := plans[r[0]]; r[1] == "IMPORT" && !p.HasImport || r[1] == "EXPORT" && !p.HasExport {
			cands[r[0]] = locs[r[0]]
		}
	}
	if len(cands) == 0 {
		return []SkippedItem{}, nil
	}
	sums, err := c.fleetSums(ctx, scope, req, cands, plans)
	if err != nil {
		return nil, err
	}
	_, skipped := fleetRows(req, sums, cands, plans)
	return skipped, nil
}

// recordedDirections returns the (location, direction) pairs of ids with location-level
// records written on the UTC dates a day either side of req's window.
func (c *Pricer) recordedDirections(ctx context.Context, scope kwhouse.Scope, req FleetRequest, ids []string) ([][2]string, error) {
	const day = 24 * time.Hour
	ctx = chstore.WithExternal(ctx, chstore.External{Name: "_locs",
		Columns: []chstore.ExternalColumn{{Name: "location_id", Type: "String", Values: ids}}})
	rows, err := c.db.Query(ctx, fleetRecordedStmt.With(fleetRecordedSQL), chstore.Named("account", scope.AccountID),
		chstore.Named("live", scope.LiveByte()), chstore.Named("u0", req.Start.UTC().Add(-day).Format(time.DateOnly)),
		chstore.Named("u1", req.End.UTC().Add(day).Format(time.DateOnly)))
	if err != nil {
		return nil, fmt.Errorf("directions recorded: %w", err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			return nil, fmt.Errorf("scan direction recorded: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// rowsPerLocation is how many rows a location of locs with records in every bucket gives
// req at least: a row per local day or month the window touches in its zone (the fewest
// over locs' zones, so that a chunk sized by it is never short in a fleet of several
// zones), or one.
func rowsPerLocation(req FleetRequest, locs map[string]catalog.Location) int {
	if req.Aggregation != AggregationDay && req.Aggregation != AggregationMonth {
		return 1
	}
	seen, fewest := map[string]bool{}, 0
	for _, l := range locs {
		if !seen[l.Timezone] {
			seen[l.Timezone] = true
			if n := bucketsIn(req, l.Timezone); fewest == 0 || n < fewest {
				fewest = n
			}
		}
	}
	return max(1, fewest)
}

// bucketsIn is how many local days (DAY) or months (MONTH) of zone req's window
// [start, end) touches.
func bucketsIn(req FleetRequest, zone string) int {
	z, err := catalog.LoadZone(zone)
	if err != nil {
		z = time.UTC // a stored location's zone always loads
	}
	return localBuckets(req.Start, req.End, req.Aggregation, z)
}

func sortedIDs(locs map[string]catalog.Location) []string {
	ids := make([]string, 0, len(locs))
	for id := range locs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
