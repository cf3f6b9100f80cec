package query

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var (
	fleetAheadStmt = chstore.Register("query.fleet_ahead",
		"fleet_pages.sql: the locations from a page's cursor on that have records in the window, and on which UTC dates")
	fleetAheadSQL = renderFixed("fleet_ahead")
)

// A page by location id is made from the locations from its cursor's on, in chunks of id
// order (fleet_pages.go). Sized by rows per location alone, a chunk comes up short where
// locations have no records in the window (just onboarded, or not metered), and the page
// reads another one. pageAhead is what the change counts say of the locations ahead of
// the cursor — which have records counted in the window, and on which UTC dates — read
// beside the account's locations and tariffs, so that a chunk is the fewest locations
// whose rows can fill the page. It bounds the rows each can give from above: a chunk it
// sizes never holds a location the page does not need, and comes up short only where a
// location has fewer rows than its dates allow (then the next chunk is sized the same way).
type pageAhead struct {
	done      chan struct{}
	locs      map[string]aheadLoc
	last      string // the last location read
	truncated bool   // the read stopped at its limit: the locations after last are unknown
	err       error
}

// aheadLoc is a row of fleet_ahead: a location's first and last UTC dates with records
// counted in the window (day numbers), and at least how many dates have them.
type aheadLoc struct{ first, last, days uint32 }

type pageAheadKey struct{}

// withPageAhead starts reading the pageAhead of req when it is a page by location id and
// returns ctx carrying it (fleetPage waits for it); other requests get ctx as it is. A
// customer's locations are known only once read, so its pages are sized without it.
func (c *Pricer) withPageAhead(ctx context.Context, scope kwhouse.Scope, req FleetRequest) context.Context {
	if !pagedByID(req) || req.CustomerID != "" || req.LocationsSet && len(req.LocationIDs) == 0 {
		return ctx
	}
	a := &pageAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.locs, a.last, a.truncated, a.err = c.readAhead(ctx, scope, req)
	}()
	return context.WithValue(ctx, pageAheadKey{}, a)
}

// aheadOf waits for the pageAhead ctx carries and returns it, nil when there is none.
func aheadOf(ctx context.Context) (*pageAhead, error) {
	a, _ := ctx.Value(pageAheadKey{}).(*pageAhead)
	if a == nil {
		return nil, nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if a.err != nil {
		return nil, a.err
	}
	return a, nil
}

// readAhead runs fleet_ahead for req: the locations from the cursor's on with records
// counted on the UTC dates of the window, at most as many as the page has rows and two
// (the cursor's location, and has_more's row).
func (c *Pricer) readAhead(ctx context.Context, scope kwhouse.Scope, req FleetRequest) (map[string]aheadLoc, string, bool, error) {
	cur, _ := parseCursor(req.StartingAfter) // checked in Validate
	n := req.Limit + 2
	named := []string{}
	if req.LocationsSet {
		named = append(named, req.LocationIDs...)
	}
	ctx = chstore.WithExternal(ctx, chstore.External{Name: "_locs",
		Columns: []chstore.ExternalColumn{{Name: "location_id", Type: "String", Values: named}}})
	rows, err := c.db.Query(ctx, fleetAheadStmt.With(fleetAheadSQL), chstore.Named("account", scope.AccountID),
		chstore.Named("live", scope.LiveByte()), chstore.Named("from", cur.key.group), chstore.Named("named", req.LocationsSet),
		chstore.Named("dir", req.Direction), chstore.Named("u0", req.Start.UTC().Format(time.DateOnly)),
		chstore.Named("u1", req.End.UTC().Add(-time.Second).Format(time.DateOnly)), chstore.Named("n", n))
	if err != nil {
		return nil, "", false, fmt.Errorf("locations ahead of a page: %w", err)
	}
	defer rows.Close()
	out := make(map[string]aheadLoc, n)
	last := ""
	for rows.Next() {
		var a aheadLoc
		if err := rows.Scan(&last, &a.first, &a.last, &a.days); err != nil {
			return nil, "", false, fmt.Errorf("scan a location ahead of a page: %w", err)
		}
		out[last] = a
	}
	return out, last, len(out) == n, rows.Err()
}

// chunkEnd returns where the chunk of ids from i ends for a page that wants want more
// rows: after the fewest locations whose bounds (rowsAtMost) add up to want, at the end
// of ids when they never do, or, when the read was truncated, where the locations it
// covers end; 0 when ids[i] is past them (the caller sizes the chunk itself).
func (a *pageAhead) chunkEnd(ids []string, i, want int, bound func(id string, at aheadLoc) int) int {
	sum := 0
	for j := i; j < len(ids); j++ {
		if a.truncated && ids[j] > a.last {
			if j == i {
				return 0
			}
			return j
		}
		if at, ok := a.locs[ids[j]]; ok {
			sum += bound(ids[j], at)
		}
		if sum >= want {
			return j + 1
		}
	}
	return len(ids)
}

// pageBounds bounds the rows each location can give a page of req (cursor cur), in its
// zone, from its dates in fleet_ahead (pageAhead).
type pageBounds struct {
	req   FleetRequest
	cur   FleetRow
	locs  map[string]catalog.Location
	plan  func(id string) tariffs.Plan
	zones map[string]zoneBound // by zone name
}

// zoneBound is what pageBounds keeps of a zone: the zone, and the most local days a UTC
// date of the window touches in it.
type zoneBound struct {
	z       *time.Location
	perDate int
}

// newPageBounds returns the bounds of a page of req after cursor cur, plan giving each
// location's plan.
func newPageBounds(req FleetRequest, cur FleetRow, locs map[string]catalog.Location, plan func(id string) tariffs.Plan) *pageBounds {
	return &pageBounds{req: req, cur: cur, locs: locs, plan: plan, zones: map[string]zoneBound{}}
}

// rowsAtMost is the most rows location id can give the page: none when it lacks a tariff
// of the direction (it is skipped); else one (NONE), or the local days or months (DAY,
// MONTH) that the window's part from its first UTC date with records to the end of its
// last touches — after the cursor's on the cursor's location — and by DAY at most
// perDate a date with records.
func (p *pageBounds) rowsAtMost(id string, at aheadLoc) int {
	if pl := p.plan(id); p.req.Direction == "IMPORT" && !pl.HasImport || p.req.Direction == "EXPORT" && !pl.HasExport {
		return 0
	}
	if p.req.Aggregation != AggregationDay && p.req.Aggregation != AggregationMonth {
		if id == p.cur.key.group {
			return 0
		}
		return 1
	}
	zb := p.zone(p.locs[id].Timezone)
	from, to := maxTime(p.req.Start, dateOf(at.first)), minTime(p.req.End, dateOf(at.last+1))
	if id == p.cur.key.group {
		from = maxTime(from, bucketAfter(p.cur.key.date, p.req.Aggregation, zb.z))
	}
	if !from.Before(to) {
		return 0
	}
	n := localBuckets(from, to, p.req.Aggregation, zb.z)
	if p.req.Aggregation == AggregationDay {
		n = min(n, int(at.days)*zb.perDate)
	}
	return n
}

// zone returns what p keeps of a zone, made when first asked.
func (p *pageBounds) zone(name string) zoneBound {
	if zb, ok := p.zones[name]; ok {
		return zb
	}
	z, err := catalog.LoadZone(name)
	if err != nil {
		z = time.UTC // a stored location's zone always loads
	}
	const day = 24 * time.Hour
	zb := zoneBound{z: z, perDate: 1}
	for d := p.req.Start.UTC().Truncate(day); d.Before(p.req.End); d = d.Add(day) {
		zb.perDate = max(zb.perDate, localBuckets(d, d.Add(day), AggregationDay, z))
	}
	p.zones[name] = zb
	return zb
}

// localBuckets is how many local days (DAY) or months (MONTH) of z the instants [from, to)
// touch, from < to (as bucketsIn counts a window's).
func localBuckets(from, to time.Time, aggregation string, z *time.Location) int {
	first, last := from.In(z), to.Add(-time.Nanosecond).In(z)
	if aggregation == AggregationMonth {
		return (last.Year()-first.Year())*12 + int(last.Month()) - int(first.Month()) + 1
	}
	return int(dayNumber(last)-dayNumber(first)) + 1
}

// bucketAfter is the start of the local day (DAY) or month (MONTH) of z after the one
// dated date (a row's date; the window's start when it does not parse).
func bucketAfter(date, aggregation string, z *time.Location) time.Time {
	layout := "2006-01-02"
	if aggregation == AggregationMonth {
		layout = "2006-01"
	}
	t, err := time.ParseInLocation(layout, date, z)
	if err != nil {
		return time.Time{}
	}
	if aggregation == AggregationMonth {
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, z)
	}
	return nextDay(t)
}
