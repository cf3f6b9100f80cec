package query

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/tariffs"
)

// checkFleetCharges refuses include_charges for device groups: charges belong to a
// location's bill.
func (r *FleetRequest) checkFleetCharges() error {
	if r.IncludeCharges && r.GroupBy == GroupDevice {
		return kwhouse.Invalid("invalid_value", "include_charges", "include_charges needs group_by location or customer: charges belong to a location's bill")
	}
	return nil
}

// fleetCharges prices the fleet per local day (from priced buckets where kept), sums the
// days into the request's buckets, and computes each location's charges over them: the
// sums, and the charges by row key (group, date, currency). A tariff changing inside a
// month taxes each day's energy by the tariff of that day, as POST /costs/interval does.
// Demand charges are measured per request from each location's readings of the whole
// months (demandReadings), so a reading that raises a month's peak counts at once.
func (c *Pricer) fleetCharges(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]fleetSum, map[fleetKey]charges.Totals, error) {
	daily := req
	daily.Aggregation = AggregationDay
	all := make([]string, 0, len(locs))
	for id := range locs {
		all = append(all, id)
	}
	// The days are priced while the charging tariffs and demand readings are read.
	var days []fleetSum
	var ts map[string][]charges.Tariff
	var readings map[string][]charges.Reading
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		days, err = c.fleetSums(gctx, scope, daily, locs, plans)
		return err
	})
	g.Go(func() (err error) {
		if ts, err = c.tariffs.FleetChargesOf(gctx, scope, all, req.Direction); err != nil {
			return err
		}
		readings, err = c.fleetDemandReadings(gctx, scope, req, locs, plans, ts)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	byLoc := map[string][]fleetSum{}
	for _, d := range days {
		byLoc[d.Loc] = append(byLoc[d.Loc], d)
	}
	ids := make([]string, 0, len(byLoc))
	for id := range byLoc {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var sums []fleetSum
	bills := map[fleetKey]charges.Totals{}
	for _, id := range ids {
		rolled, err := c.locationBill(req, locs[id], plans[id], ts[id], readings[id], byLoc[id], bills)
		if err != nil {
			return nil, nil, err
		}
		sums = append(sums, rolled...)
	}
	return sums, bills, nil
}

// locationBill sums a location's days into the request's buckets and adds their charges
// to bills under each row's key.
func (c *Pricer) locationBill(req FleetRequest, loc catalog.Location, plan tariffs.Plan, ts []charges.Tariff,
	readings []charges.Reading, days []fleetSum, bills map[fleetKey]charges.Totals) ([]fleetSum, error) {
	zone, err := catalog.LoadZone(loc.Timezone)
	if err != nil {
		return nil, fmt.Errorf("zone of %s: %w", loc.ID, err)
	}
	rolled := rollUp(req.Aggregation, days, zone)
	sort.Slice(rolled, func(i, j int) bool { return rolled[i].Key < rolled[j].Key })
	creq := charges.Request{Tariffs: ts, From: req.Start, To: req.End, MonthBuckets: req.Aggregation == AggregationMonth,
		Readings: readings}
	dates := make([]string, len(rolled))
	for i, s := range rolled {
		w := bucketTimes(req, s.Key, loc.Timezone)
		dates[i] = w.date
		if req.Aggregation != FleetAggregationNone {
			creq.Buckets = append(creq.Buckets, charges.Bucket{Start: w.start.Time(), End: w.end.Time()})
		}
	}
	for _, d := range days {
		creq.Energy = append(creq.Energy, energyAt(d.Key, d.MoneyCom, d.MoneyNon, plan, req.Direction)...)
	}
	top, each := charges.Compute(creq)
	group := loc.ID
	if req.GroupBy == GroupCustomer {
		group = loc.CustomerID
	}
	for i := range rolled {
		t := top
		if req.Aggregation != FleetAggregationNone {
			t = each[i]
		}
		k := fleetKey{group: group, date: dates[i], currency: loc.CurrencyCode}
		bills[k] = addTotals(bills[k], t)
	}
	return rolled, nil
}

func addTotals(a, b charges.Totals) charges.Totals {
	return charges.Totals{Energy: a.Energy + b.Energy, Standing: a.Standing + b.Standing, Demand: a.Demand + b.Demand,
		Tax: a.Tax + b.Tax, Total: a.Total + b.Total}
}

// fleetDemandReadings reads the whole months' readings of each location whose tariffs
// have demand charges, one location's query at a time per fleetParallel.
func (c *Pricer) fleetDemandReadings(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan, ts map[string][]charges.Tariff) (map[string][]charges.Reading, error) {
	out := map[string][]charges.Reading{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for id, list := range ts {
		if !hasDemand(list) {
			continue
		}
		a := costArgs{scope: scope, location: id, direction: req.Direction, plan: plans[id], zone: locs[id].Timezone}
		g.Go(func() error {
			rs, err := c.demandReadings(gctx, a, list, req.Start, req.End)
			mu.Lock()
			out[id] = rs
			mu.Unlock()
			return err
		})
	}
	return out, g.Wait()
}

func hasDemand(ts []charges.Tariff) bool {
	for _, t := range ts {
		if len(t.Demand) > 0 {
			return true
		}
	}
	return false
}
