package query

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Fleet request values (docs/costs.md, "POST /costs/fleet").
const (
	GroupLocation = "location"
	GroupDevice   = "device"
	GroupCustomer = "customer"

	OrderID         = "id"
	OrderCostDesc   = "cost_desc"
	OrderCostAsc    = "cost_asc"
	OrderEnergyDesc = "energy_desc"

	// FleetAggregationNone is the request's spelling of "one row per group".
	FleetAggregationNone = "NONE"
)

// Fleet request limits.
const (
	MaxFleetLocations = 10000
	MaxFleetLimit     = 10000
	DefaultFleetLimit = 1000
	maxFleetSkipped   = 100
)

// FleetRequest is the body of POST /costs/fleet.
type FleetRequest struct {
	Start, End    time.Time
	Direction     string
	Aggregation   string // NONE (default), DAY or MONTH
	GroupBy       string // location (default), device or customer
	CustomerID    string
	LocationIDs   []string
	LocationsSet  bool // location_ids was given (an empty list selects nothing)
	Order         string
	Limit         int  // rows per page, 1 to MaxFleetLimit; DefaultFleetLimit when not set
	LimitSet      bool // limit was given: 0 is then refused, not taken for the default
	StartingAfter string
	All           bool // every row in one answer (CSV): no paging
	one           oneScope
	// IncludeCharges adds each row's bill (fleet_charges.go); location and customer groups.
	IncludeCharges bool
}

// FleetCost is the fleet_cost response.
type FleetCost struct {
	Object      string            `json:"object"`
	LiveMode    bool              `json:"live_mode"`
	Direction   string            `json:"direction"`
	Aggregation string            `json:"aggregation"`
	GroupBy     string            `json:"group_by"`
	StartTime   catalog.Timestamp `json:"start_time"`
	EndTime     catalog.Timestamp `json:"end_time"`
	HasMore     bool              `json:"has_more"`
	NextCursor  *string           `json:"next_cursor"`
	Data        []FleetRow        `json:"data"`
	Skipped     FleetSkipped      `json:"skipped"`
	AccountID   string            `json:"account_id"`
	after       string            // the group of the first row after the page, when it has more
}

// FleetRow is one group's cost in one bucket.
type FleetRow struct {
	Object       string             `json:"object"`
	LocationID   string             `json:"location_id,omitempty"`
	DeviceID     string             `json:"device_id,omitempty"`
	CustomerID   string             `json:"customer_id,omitempty"`
	Date         string             `json:"date,omitempty"`
	StartTime    *catalog.Timestamp `json:"start_time,omitempty"`
	EndTime      *catalog.Timestamp `json:"end_time,omitempty"`
	CurrencyCode string             `json:"currency_code"`
	Energy       EnergyValue        `json:"energy"`
	Tariff       TariffValue        `json:"tariff"`
	Charges      *Charges           `json:"charges,omitempty"` // with include_charges
	key          fleetKey
	wh, money    float64 // unrounded, for ordering and sums
}

// FleetSkipped lists the objects with records in the window that cannot be priced: the
// whole answer's on a first page; on a later page by location id, those it covers (fleetPage).
type FleetSkipped struct {
	Count int           `json:"count"`
	Data  []SkippedItem `json:"data"`
}

// SkippedItem is one object left out of a fleet answer and why.
type SkippedItem struct {
	ID   string `json:"id"`
	Code string `json:"code"`
}

// fleetKey identifies a row: its group, date and currency.
type fleetKey struct {
	group, date, currency string
}

// Validate reports every problem of the request (kwhouse.Problems); Fleet fills in the
// defaults first.
func (r *FleetRequest) Validate() error {
	var p kwhouse.Problems
	if r.Direction != "IMPORT" && r.Direction != "EXPORT" {
		p.Add("invalid_value", "direction", "direction must be IMPORT or EXPORT")
	}
	if r.Aggregation != FleetAggregationNone && r.Aggregation != AggregationDay && r.Aggregation != AggregationMonth {
		p.Add("invalid_value", "aggregation", "aggregation must be NONE, DAY or MONTH")
	}
	if r.GroupBy != GroupLocation && r.GroupBy != GroupDevice && r.GroupBy != GroupCustomer {
		p.Add("invalid_value", "group_by", "group_by must be location, device or customer")
	}
	if r.Order != OrderID && r.Order != OrderCostDesc && r.Order != OrderCostAsc && r.Order != OrderEnergyDesc {
		p.Add("invalid_value", "order", "order must be id, cost_desc, cost_asc or energy_desc")
	}
	if r.Limit < 1 || r.Limit > MaxFleetLimit {
		p.Add("invalid_value", "limit", "limit must be between 1 and %d", MaxFleetLimit)
	}
	if len(r.LocationIDs) > MaxFleetLocations {
		p.Add("too_many_locations", "location_ids", "location_ids may name at most %d locations", MaxFleetLocations)
	}
	if r.CustomerID != "" && !kwhouse.ValidID(kwhouse.PrefixCustomer, r.CustomerID) {
		p.Add("invalid_value", "customer_id", "customer_id must be a customer id (cus_…)")
	}
	for _, id := range r.LocationIDs {
		if !kwhouse.ValidID(kwhouse.PrefixLocation, id) {
			p.Add("invalid_value", "location_ids", "%q is not a location id (loc_…)", id)
			break
		}
	}
	if _, err := parseCursor(r.StartingAfter); err != nil {
		p.AddErr(err)
	}
	checkWindow(&p, r.Start, r.End, MaxCostWindow, "400 days")
	p.AddErr(r.checkFleetCharges())
	return p.Err()
}

func (r *FleetRequest) defaults() {
	if r.Direction == "" {
		r.Direction = "IMPORT"
	}
	if r.Aggregation == "" {
		r.Aggregation = FleetAggregationNone
	}
	if r.GroupBy == "" {
		r.GroupBy = GroupLocation
	}
	if r.Order == "" {
		r.Order = OrderID
	}
	if r.Limit == 0 && !r.LimitSet {
		r.Limit = DefaultFleetLimit
	}
}

// Fleet prices the records of many locations or devices at once (POST /costs/fleet).
func (c *Pricer) Fleet(ctx context.Context, scope kwhouse.Scope, req FleetRequest) (FleetCost, error) {
	req.defaults()
	if err := req.Validate(); err != nil {
		return FleetCost{}, err
	}
	ctx = c.withPageAhead(ctx, scope, req) // a page by id: what lies ahead of its cursor, read meanwhile
	out := FleetCost{Object: "fleet_cost", LiveMode: scope.LiveMode, Direction: req.Direction, Aggregation: req.Aggregation,
		GroupBy: req.GroupBy, StartTime: catalog.Timestamp(req.Start), EndTime: catalog.Timestamp(req.End),
		Data: []FleetRow{}, Skipped: FleetSkipped{Data: []SkippedItem{}}, AccountID: scope.AccountID}
	// The locations and the scope's tariffs are read side by side, while the buckets this
	// process's earlier answers priced are written back (they are then read, not priced
	// again; a write-back slower than writeBackWait is not waited for: its days are priced).
	var locs map[string]catalog.Location
	var all tariffs.FleetTariffs
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { locs, err = c.fleetLocations(gctx, scope, req); return err })
	g.Go(func() (err error) { all, err = c.tariffs.OfFleet(gctx, scope); return err })
	g.Go(func() error {
		wctx, cancel := context.WithTimeout(gctx, writeBackWait)
		defer cancel()
		_ = c.WaitBucketWrites(wctx, scope)
		return nil
	})
	if err := g.Wait(); err != nil {
		return FleetCost{}, err
	}
	if len(locs) == 0 {
		return out, nil
	}
	plan := func(ids []string) map[string]tariffs.Plan { return all.Plans(ids, req.Start.Unix(), req.End.Unix()) }
	rows, skipped, err := c.fleetAnswer(ctx, scope, req, locs, plan)
	if err != nil {
		return FleetCost{}, err
	}
	out.Skipped.Count = len(skipped)
	out.Skipped.Data = skipped[:min(len(skipped), maxFleetSkipped)]
	out.Data, out.HasMore, out.NextCursor, out.after = pageFleet(rows, req)
	return out, nil
}

// fleetAnswer returns the sorted rows the request's page is cut from, and every object
// skipped: a page by id from the locations it needs (fleetPage), else every row. plan
// resolves the plans of some locations.
func (c *Pricer) fleetAnswer(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plan func(ids []string) map[string]tariffs.Plan) ([]FleetRow, []SkippedItem, error) {
	if pagedByID(req) {
		return c.fleetPage(ctx, scope, req, locs, plan)
	}
	rows, skipped, err := c.pricedRows(ctx, scope, req, locs, plan(slices.Collect(maps.Keys(locs))))
	if err != nil {
		return nil, nil, err
	}
	sortFleet(rows, req.Order)
	return rows, skipped, nil
}

// fleetLocations returns the request's locations by id: all of the scope, of a customer,
// or those named (every one must exist); with group_by customer, only customers' ones.
func (c *Pricer) fleetLocations(ctx context.Context, scope kwhouse.Scope, req FleetRequest) (map[string]catalog.Location, error) {
	if req.CustomerID != "" {
		if _, err := c.catalog.GetCustomer(ctx, scope, req.CustomerID); err != nil {
			if kwhouse.KindOf(err) == kwhouse.KindNotFound {
				return nil, kwhouse.Invalid("resource_missing", "customer_id", "no such customer: %s", req.CustomerID)
			}
			return nil, err
		}
	}
	all, err := c.catalog.LocationInfos(ctx, scope, req.CustomerID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]catalog.Location, len(all))
	for _, l := range all {
		if req.GroupBy != GroupCustomer || l.CustomerID != "" {
			byID[l.ID] = l
		}
	}
	if !req.LocationsSet {
		return byID, nil
	}
	out := make(map[string]catalog.Location, len(req.LocationIDs))
	for _, id := range req.LocationIDs {
		l, ok := byID[id]
		if !ok && req.CustomerID == "" && req.GroupBy != GroupCustomer {
			return nil, kwhouse.Invalid("resource_missing", "location_ids", "no such location: %s", id)
		}
		if ok {
			out[id] = l
		}
	}
	return out, nil
}

// sortFleet orders rows by req's order, ties by group id, date and currency (a row's key:
// no two rows share one, so the order is total).
func sortFleet(rows []FleetRow, order string) {
	sorted := true
	for i := 1; i < len(rows) && sorted; i++ {
		sorted = fleetCompare(&rows[i-1], &rows[i], order) <= 0
	}
	if sorted {
		return // rows from buckets served in id order
	}
	perm := make([]int32, len(rows))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int { return fleetCompare(&rows[a], &rows[b], order) })
	// Each row moves once, along the cycles of the permutation.
	for i := range perm {
		if perm[i] < 0 || int(perm[i]) == i {
			continue
		}
		tmp, j := rows[i], i
		for int(perm[j]) != i {
			next := int(perm[j])
			rows[j], perm[j] = rows[next], -1
			j = next
		}
		rows[j], perm[j] = tmp, -1
	}
}

// fleetLess is the order of rows; a cursor row compares the same way.
func fleetLess(a, b FleetRow, order string) bool { return fleetCompare(&a, &b, order) < 0 }

// fleetCompare is fleetLess as a three-way comparison (rows by pointer: 31,000 rows sorted
// by value copies took 49 ms a request).
func fleetCompare(a, b *FleetRow, order string) int {
	if order != OrderID {
		if c := cmp.Compare(orderValue(a, order), orderValue(b, order)); c != 0 {
			return c
		}
	}
	if c := strings.Compare(a.key.group, b.key.group); c != 0 {
		return c
	}
	if c := strings.Compare(a.key.date, b.key.date); c != 0 {
		return c
	}
	return strings.Compare(a.key.currency, b.key.currency)
}

// orderValue is the figure a row sorts by first (0 for id order); descending orders negate it.
func orderValue(r *FleetRow, order string) float64 {
	switch order {
	case OrderCostDesc:
		return -r.money
	case OrderCostAsc:
		return r.money
	case OrderEnergyDesc:
		return -r.wh
	}
	return 0
}

// pageFleet returns the page of sorted rows after the request's cursor, whether there are
// more, the cursor after it and the group of the first row after it.
func pageFleet(rows []FleetRow, req FleetRequest) ([]FleetRow, bool, *string, string) {
	from := 0
	if req.StartingAfter != "" {
		cur, _ := parseCursor(req.StartingAfter) // checked in Validate
		from = sort.Search(len(rows), func(i int) bool { return fleetLess(cur, rows[i], req.Order) })
	}
	rows = rows[from:]
	if rows == nil {
		rows = []FleetRow{} // never null in JSON
	}
	if req.All || len(rows) <= req.Limit {
		return rows, false, nil, ""
	}
	next := cursorOf(rows[req.Limit-1])
	return rows[:req.Limit], true, &next, rows[req.Limit].key.group
}
