package query

import (
	"context"
	"fmt"
	"runtime"
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
	setCharges(req, rows, sums, bills, locs)
	return rows, skipped, nil
}

// setCharges sets each row's charges from bills, the charges of sums in their order
// (fleetCharges): a location row's are its sum's (rows are the sums in order, but for
// skipped locations); a customer row's add up its locations' of its date and currency.
func setCharges(req FleetRequest, rows []FleetRow, sums []fleetSum, bills []charges.Totals, locs map[string]catalog.Location) {
	cs := make([]Charges, len(rows))
	for i := range rows {
		rows[i].Charges = &cs[i]
	}
	if req.GroupBy == GroupCustomer {
		byKey := make(map[fleetKey]charges.Totals, len(rows))
		when := &bucketDates{req: req}
		for i, s := range sums {
			l := locs[s.Loc]
			k := fleetKey{group: l.CustomerID, date: when.of(s.Key, l.Timezone).date, currency: l.CurrencyCode}
			byKey[k] = addTotals(byKey[k], bills[i])
		}
		for i := range rows {
			cs[i] = chargesOf(byKey[rows[i].key])
		}
		return
	}
	j := 0
	for i := range rows {
		for sums[j].Loc != rows[i].LocationID {
			j++
		}
		cs[i] = chargesOf(bills[j])
		j++
	}
}

// fleetCharges prices the fleet and computes each location's charges over the request's
// buckets: the sums, by location in id order, and the charges of each. A location whose
// energy is taxed at one rate over the window is priced in the request's own buckets, as
// without charges; one whose energy passes to a tariff of another tax rate is priced per
// local day (from priced buckets where kept) and its days summed into the buckets, so that
// each day's energy is taxed by the tariff of that day, and a day inside which it changes
// by reading, as POST /costs/interval does. Demand peaks are kept per month while the
// month's readings are unchanged (demandPeaks), so a reading that raises a month's peak
// counts at once.
func (c *Pricer) fleetCharges(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]fleetSum, []charges.Totals, error) {
	asked, byDay, err := byTaxRates(req, locs, plans)
	if err != nil {
		return nil, nil, err
	}
	in, err := c.billInputs(ctx, scope, req, locs, plans, asked, byDay)
	if err != nil {
		return nil, nil, err
	}
	byLoc, dayLoc := groupByLocation(in.sums, in.days)
	split, err := c.fleetSplitEnergy(ctx, scope, req, locs, plans, dayLoc)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(byLoc))
	for id := range byLoc {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	each, err := billLocations(req, ids, func(id string, when *bucketDates, scratch *billArrays) (locationBill, error) {
		_, inBuckets := asked[id]
		return billLocation(req, locs[id], plans[id], in.owed[id], byLoc[id], inBuckets, split[id], when, scratch)
	})
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for _, lb := range each {
		n += len(lb.rolled)
	}
	bills := make([]charges.Totals, 0, n)
	for _, lb := range each {
		bills = append(bills, lb.totals...)
	}
	if len(byDay) == 0 && rolledInPlace(in.sums, each) {
		return in.sums, bills, nil
	}
	out := make([]fleetSum, 0, n)
	for _, lb := range each {
		out = append(out, lb.rolled...)
	}
	return out, bills, nil
}

// billInputs is what a fleet bill is computed from: the sums of the locations priced in
// the request's buckets, the days of those priced per local day, and what every location
// owes beside its energy (its demand peaks read into the pricer's memo).
type billInputs struct {
	sums, days []fleetSum
	owed       map[string]owedCharges
}

// billInputs prices the buckets while the charges are compiled and the demand peaks read
// (a new process reads the charging tariffs and compiles their charges: about 4 ms of Go
// for 1,000 locations, docs/benchmarks.md "Bill charges"); the peaks' month fingerprints
// come from the buckets' read where it has them (printsShare).
func (c *Pricer) billInputs(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan, asked, byDay map[string]catalog.Location) (billInputs, error) {
	var in billInputs
	daily := req
	daily.Aggregation = AggregationDay
	g, gctx := errgroup.WithContext(ctx)
	sumsCtx, peaksCtx := gctx, gctx
	if c.buckets != nil && req.Aggregation != AggregationDay && len(asked) > 0 {
		share := newPrintsShare()
		sumsCtx, peaksCtx = withPrintsShare(gctx, share), withPrintsShare(gctx, share)
	}
	g.Go(func() (err error) {
		defer printsShareOf(sumsCtx).close() // what the buckets did not publish, demand reads

		if len(asked) > 0 {
			in.sums, err = c.fleetSums(sumsCtx, scope, req, asked, plans)
		}
		return err
	})
	g.Go(func() (err error) {
		if len(byDay) > 0 {
			in.days, err = c.fleetSums(gctx, scope, daily, byDay, plans)
		}
		return err
	})
	g.Go(func() error {
		all := make([]string, 0, len(locs))
		for id := range locs {
			all = append(all, id)
		}
		o, need, err := owedOf(req, all, plans)
		if err != nil {
			return err
		}
		in.owed = o
		return c.demandPeaks(peaksCtx, scope, req.Direction, need, false)
	})
	return in, g.Wait()
}

// billLocations bills each location of ids (in that order) with bill, on as many workers
// as there are cores: each worker has its own bucket dates (rows share them) and arrays.
func billLocations(req FleetRequest, ids []string,
	bill func(string, *bucketDates, *billArrays) (locationBill, error)) ([]locationBill, error) {
	each := make([]locationBill, len(ids))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(ids)))
	g := errgroup.Group{}
	for w := range workers {
		g.Go(func() (err error) {
			when := &bucketDates{req: req}
			var scratch billArrays
			for i := w; i < len(ids) && err == nil; i += workers {
				each[i], err = bill(ids[i], when, &scratch)
			}
			return err
		})
	}
	return each, g.Wait()
}

// rolledInPlace says whether the locations' rows (in id order) are sums itself, location
// after location, as they are when every location's sums are its MONTH buckets in order
// (inMonths): a year of 1,000 locations' rows then need no copy (1.8 MB).
func rolledInPlace(sums []fleetSum, each []locationBill) bool {
	at := 0
	for _, lb := range each {
		if len(lb.rolled) == 0 {
			continue
		}
		if at+len(lb.rolled) > len(sums) || &sums[at] != &lb.rolled[0] {
			return false
		}
		at += len(lb.rolled)
	}
	return at == len(sums)
}

// byTaxRates parts locs into those whose energy is taxed at one rate over req's window
// (oneTaxRate: asked, priced in its buckets; locs itself when all are) and the others
// (byDay, priced by local day).
func byTaxRates(req FleetRequest, locs map[string]catalog.Location, plans map[string]tariffs.Plan) (
	asked, byDay map[string]catalog.Location, err error) {
	byDay = map[string]catalog.Location{}
	for id, l := range locs {
		one, err := oneTaxRate(plans[id], req.Direction, l.Timezone, req.Start, req.End)
		if err != nil {
			return nil, nil, fmt.Errorf("zone of %s: %w", id, err)
		}
		if !one {
			byDay[id] = l
		}
	}
	if len(byDay) == 0 {
		return locs, byDay, nil
	}
	asked = make(map[string]catalog.Location, len(locs)-len(byDay))
	for id, l := range locs {
		if _, ok := byDay[id]; !ok {
			asked[id] = l
		}
	}
	return asked, byDay, nil
}

// groupByLocation groups the sums in the request's buckets and the days of the locations
// priced by day by location (all), and the days apart (byDay). A location's one run of
// rows (they come by location) is taken as it is, not copied; rows of a location in two
// runs are copied together.
func groupByLocation(sums, days []fleetSum) (all, byDay map[string][]fleetSum) {
	all, byDay = map[string][]fleetSum{}, map[string][]fleetSum{}
	for _, rows := range [][]fleetSum{sums, days} {
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && rows[j].Loc == rows[i].Loc {
				j++
			}
			if had, ok := all[rows[i].Loc]; ok {
				all[rows[i].Loc] = append(had, rows[i:j]...) // had's capacity is its length: a copy
			} else {
				all[rows[i].Loc] = rows[i:j:j]
			}
			i = j
		}
	}
	for _, d := range days {
		byDay[d.Loc] = append(byDay[d.Loc], d)
	}
	return all, byDay
}

// locationBill is a location's rows (its sums in the request's buckets) with each row's
// charges, in the same order.
type locationBill struct {
	rolled []fleetSum
	totals []charges.Totals
}

// owedCharges are what a location's bill charges beyond energy: its charging tariffs and
// the months whose demand they bill (charges.DemandMonths of the request), with their
// peaks.
type owedCharges struct {
	tariffs []charges.Tariff
	months  []charges.TariffMonth
}

// owedOf is what each location of ids owes beyond energy over req's window (owedCharges),
// from its plan, and the months with demand charges among them, by location: the plan
// keeps its tariffs' charges and months; their copies here, one array for all, take this
// answer's peaks (demandPeaks).
func owedOf(req FleetRequest, ids []string, plans map[string]tariffs.Plan) (map[string]owedCharges, map[string][]charges.TariffMonth, error) {
	owed := make(map[string]owedCharges, len(ids))
	shared := make(map[string][]charges.TariffMonth, len(ids))
	n := 0
	for _, id := range ids {
		ts, ms, err := plans[id].Owed(req.Direction, req.Start, req.End, req.Aggregation == AggregationMonth)
		if err != nil {
			return nil, nil, fmt.Errorf("charges of %s: %w", id, err)
		}
		owed[id], shared[id], n = owedCharges{tariffs: ts}, ms, n+len(ms)
	}
	all := make([]charges.TariffMonth, 0, n)
	need := make(map[string][]charges.TariffMonth, len(shared))
	for id, ms := range shared {
		if len(ms) == 0 {
			continue
		}
		at := len(all)
		all = append(all, ms...)
		o := owed[id]
		o.months = all[at:len(all):len(all)]
		owed[id], need[id] = o, o.months
	}
	return owed, need, nil
}

// billArrays are a billing worker's arrays of a location's buckets and energy, reused
// location after location: charges.Compute keeps neither.
type billArrays struct {
	buckets []charges.Bucket
	energy  []charges.Energy
}

// billLocation sums a location's days into the request's buckets (inBuckets: its sums are
// in them already) and computes each bucket's charges; split holds the energy of its
// split days by reading (fleetSplitEnergy); when dates the buckets.
func billLocation(req FleetRequest, loc catalog.Location, plan tariffs.Plan, owed owedCharges,
	days []fleetSum, inBuckets bool, split splitMoney, when *bucketDates, scratch *billArrays) (locationBill, error) {
	zone, err := catalog.LoadZone(loc.Timezone)
	if err != nil {
		return locationBill{}, fmt.Errorf("zone of %s: %w", loc.ID, err)
	}
	rolled := inMonths(req, days, inBuckets)
	if rolled == nil {
		rolled = rollUp(req.Aggregation, days, zone)
		sort.Slice(rolled, func(i, j int) bool { return rolled[i].Key < rolled[j].Key })
	}
	creq := charges.Request{Tariffs: owed.tariffs, From: req.Start, To: req.End, MonthBuckets: req.Aggregation == AggregationMonth,
		Months: owed.months, Buckets: scratch.buckets[:0], Energy: scratch.energy[:0]}
	lb := locationBill{rolled: rolled}
	if req.Aggregation != FleetAggregationNone {
		for _, s := range rolled {
			w := when.of(s.Key, loc.Timezone)
			creq.Buckets = append(creq.Buckets, charges.Bucket{Start: w.start.Time(), End: w.end.Time()})
		}
	}
	src := sourcesOf(plan, req.Direction)
	for _, d := range days {
		creq.Energy = split.appendEnergy(creq.Energy, d.Key, d.MoneyCom, d.MoneyNon, src)
	}
	top, each := charges.Compute(creq)
	scratch.buckets, scratch.energy = creq.Buckets, creq.Energy
	lb.totals = each
	if req.Aggregation == FleetAggregationNone {
		lb.totals = make([]charges.Totals, len(rolled))
		for i := range lb.totals {
			lb.totals[i] = top
		}
	}
	return lb, nil
}

// inMonths is a location's sums sorted by month when they are in the request's MONTH
// buckets already (inBuckets), one per month, so that rolling them up would only copy
// them; else nil.
func inMonths(req FleetRequest, sums []fleetSum, inBuckets bool) []fleetSum {
	if !inBuckets || req.Aggregation != AggregationMonth {
		return nil
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i].Key < sums[j].Key })
	for i := 1; i < len(sums); i++ {
		if sums[i].Key == sums[i-1].Key || sums[i].Dev != sums[i-1].Dev {
			return nil
		}
	}
	return sums
}

func addTotals(a, b charges.Totals) charges.Totals {
	return charges.Totals{Energy: a.Energy + b.Energy, Standing: a.Standing + b.Standing, Demand: a.Demand + b.Demand,
		Tax: a.Tax + b.Tax, Total: a.Total + b.Total}
}
