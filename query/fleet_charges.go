package query

import (
	"context"
	"fmt"
	"sort"

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

// pricedRows prices the locations locs into req's rows, with their charges when asked,
// and lists the objects skipped.
func (c *Pricer) pricedRows(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]FleetRow, []SkippedItem, error) {
	if !req.IncludeCharges {
		sums, err := c.fleetSums(ctx, scope, req, locs, plans)
		if err != nil {
			return nil, nil, err
		}
		rows, skipped := fleetRows(req, sums, locs, plans)
		return rows, skipped, nil
	}
	sums, bills, err := c.fleetCharges(ctx, scope, req, locs, plans)
	if err != nil {
		return nil, nil, err
	}
	rows, skipped := fleetRows(req, sums, locs, plans)
	for i := range rows {
		rows[i].Charges = chargesOf(bills[rows[i].key])
	}
	return rows, skipped, nil
}

// fleetCharges prices the fleet and computes each location's charges over the request's
// buckets: the sums, and the charges by row key (group, date, currency). A location whose
// energy is taxed at one rate over the window is priced in the request's own buckets, as
// without charges; one whose energy passes to a tariff of another tax rate is priced per
// local day (from priced buckets where kept) and its days summed into the buckets, so that
// each day's energy is taxed by the tariff of that day, and a day inside which it changes
// by reading, as POST /costs/interval does. Demand peaks are kept per month while the
// month's readings are unchanged (demandPeaks), so a reading that raises a month's peak
// counts at once.
func (c *Pricer) fleetCharges(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]fleetSum, map[fleetKey]charges.Totals, error) {
	daily := req
	daily.Aggregation = AggregationDay
	all := make([]string, 0, len(locs))
	byDay, asked := map[string]catalog.Location{}, map[string]catalog.Location{}
	for id, l := range locs {
		all = append(all, id)
		zone, err := catalog.LoadZone(l.Timezone)
		if err != nil {
			return nil, nil, fmt.Errorf("zone of %s: %w", id, err)
		}
		if !oneTaxRate(plans[id], req.Direction, zone, req.Start, req.End) {
			byDay[id] = l
		} else {
			asked[id] = l
		}
	}
	// The buckets are priced while the charging tariffs and their demand peaks are read.
	var days, sums []fleetSum
	var ts map[string][]charges.Tariff
	var peaks locationPeaks
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if len(asked) > 0 {
			sums, err = c.fleetSums(gctx, scope, req, asked, plans)
		}
		return err
	})
	g.Go(func() (err error) {
		if len(byDay) > 0 {
			days, err = c.fleetSums(gctx, scope, daily, byDay, plans)
		}
		return err
	})
	g.Go(func() (err error) {
		if ts, err = c.tariffs.FleetChargesOf(gctx, scope, all, req.Direction); err != nil {
			return err
		}
		need := make(map[string][]charges.TariffMonth, len(ts))
		for id, lts := range ts {
			need[id] = charges.DemandMonths(lts, req.Start, req.End, req.Aggregation == AggregationMonth)
		}
		peaks, err = c.demandPeaks(gctx, scope, req.Direction, need)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	byLoc, dayLoc := map[string][]fleetSum{}, map[string][]fleetSum{}
	for _, d := range sums {
		byLoc[d.Loc] = append(byLoc[d.Loc], d)
	}
	for _, d := range days {
		byLoc[d.Loc] = append(byLoc[d.Loc], d)
		dayLoc[d.Loc] = append(dayLoc[d.Loc], d)
	}
	ids := make([]string, 0, len(byLoc))
	for id := range byLoc {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	split, err := c.fleetSplitEnergy(ctx, scope, req, locs, plans, dayLoc)
	if err != nil {
		return nil, nil, err
	}
	bills := map[fleetKey]charges.Totals{}
	var out []fleetSum
	for _, id := range ids {
		rolled, lb, err := locationBill(req, locs[id], plans[id], ts[id], peaks[id], byLoc[id], split[id])
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rolled...)
		for k, t := range lb {
			bills[k] = addTotals(bills[k], t)
		}
	}
	return out, bills, nil
}

// locationBill sums a location's days (or sums already in the request's buckets) into the
// request's buckets and returns them with their charges under each row's key; split holds
// the energy of its split days by reading (fleetSplitEnergy).
func locationBill(req FleetRequest, loc catalog.Location, plan tariffs.Plan, ts []charges.Tariff,
	peaks map[charges.PeakKey][]float64, days []fleetSum, split splitMoney) ([]fleetSum, map[fleetKey]charges.Totals, error) {
	zone, err := catalog.LoadZone(loc.Timezone)
	if err != nil {
		return nil, nil, fmt.Errorf("zone of %s: %w", loc.ID, err)
	}
	rolled := rollUp(req.Aggregation, days, zone)
	sort.Slice(rolled, func(i, j int) bool { return rolled[i].Key < rolled[j].Key })
	creq := charges.Request{Tariffs: ts, From: req.Start, To: req.End, MonthBuckets: req.Aggregation == AggregationMonth,
		Peaks: peaks, Buckets: make([]charges.Bucket, 0, len(rolled)), Energy: make([]charges.Energy, 0, 2*len(days))}
	dates := make([]string, len(rolled))
	for i, s := range rolled {
		w := bucketTimes(req, s.Key, loc.Timezone)
		dates[i] = w.date
		if req.Aggregation != FleetAggregationNone {
			creq.Buckets = append(creq.Buckets, charges.Bucket{Start: w.start.Time(), End: w.end.Time()})
		}
	}
	for _, d := range days {
		creq.Energy = append(creq.Energy, split.energy(d.Key, d.MoneyCom, d.MoneyNon, plan, req.Direction)...)
	}
	top, each := charges.Compute(creq)
	group := loc.ID
	if req.GroupBy == GroupCustomer {
		group = loc.CustomerID
	}
	bills := make(map[fleetKey]charges.Totals, len(rolled))
	for i := range rolled {
		t := top
		if req.Aggregation != FleetAggregationNone {
			t = each[i]
		}
		k := fleetKey{group: group, date: dates[i], currency: loc.CurrencyCode}
		bills[k] = addTotals(bills[k], t)
	}
	return rolled, bills, nil
}

func addTotals(a, b charges.Totals) charges.Totals {
	return charges.Totals{Energy: a.Energy + b.Energy, Standing: a.Standing + b.Standing, Demand: a.Demand + b.Demand,
		Tax: a.Tax + b.Tax, Total: a.Total + b.Total}
}
