package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Charges is a cost's bill: energy (the tariff value), standing and demand charges, tax
// and their total, in major units (docs/costs.md, "Bill charges").
type Charges struct {
	Energy   Amount `json:"energy"`
	Standing Amount `json:"standing"`
	Demand   Amount `json:"demand"`
	Tax      Amount `json:"tax"`
	Total    Amount `json:"total"`
}

func chargesOf(t charges.Totals) Charges {
	return Charges{Energy: Amount(t.Energy), Standing: Amount(t.Standing), Demand: Amount(t.Demand),
		Tax: Amount(t.Tax), Total: Amount(t.Total)}
}

var (
	demandReadingsStmt = chstore.Register("query.demand_readings", "cost_demand.sql: the readings of whole local months, for demand charges")
	demandReadingsSQL  = renderShape("demand_readings", demandShape)
)

// checkCharges refuses include_charges for a device: charges belong to a location's bill.
func (r *CostRequest) checkCharges() error {
	if r.IncludeCharges && kwhouse.ValidID(kwhouse.PrefixDevice, r.ObjectID) {
		return kwhouse.Invalid("invalid_value", "include_charges", "include_charges needs a location id: charges belong to a location's bill")
	}
	return nil
}

// pendingCharges are a location's charging tariffs and demand peaks, read while its cost
// query runs.
type pendingCharges struct {
	done    chan struct{}
	tariffs []charges.Tariff
	months  []charges.TariffMonth // with their peaks
	err     error
}

// startCharges starts reading what the charges of an interval answer need (nil when
// charges are not asked for). A caller that returns before add leaves the reads to end
// with its context.
func (c *Pricer) startCharges(ctx context.Context, a costArgs, req CostRequest) *pendingCharges {
	if !req.IncludeCharges {
		return nil
	}
	p := &pendingCharges{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var months []charges.TariffMonth
		if p.tariffs, months, p.err = a.plan.Owed(a.direction, req.Start, req.End, req.Aggregation == AggregationMonth); p.err != nil {
			return
		}
		p.months = slices.Clone(months) // their peaks are set here
		p.err = c.demandPeaks(ctx, a.scope, a.direction, map[string][]charges.TariffMonth{a.location: p.months}, false)
	}()
	return p
}

// add sets the charges of an interval answer (its items are out.Data, built from rows;
// rows are local days of zone, or records without aggregation).
func (p *pendingCharges) add(ctx context.Context, c *Pricer, a costArgs, zone *time.Location, req CostRequest, rows []costRow, out *EnergyCost) error {
	<-p.done
	if p.err != nil {
		return p.err
	}
	days := make([]uint32, len(rows))
	for i, r := range rows {
		days[i] = r.Key
		if !a.daily {
			days[i] = dayOf(r.Key, zone)
		}
	}
	split, err := c.splitEnergy(ctx, a, zone, splitDays(days, zone, a.plan, a.direction))
	if err != nil {
		return err
	}
	creq := charges.Request{Tariffs: p.tariffs, From: req.Start, To: req.End, MonthBuckets: req.Aggregation == AggregationMonth,
		Energy: energyByTariff(rows, a.plan, a.direction, split, !a.daily, zone), Months: p.months}
	if req.Aggregation != AggregationNone {
		for _, it := range out.Data {
			creq.Buckets = append(creq.Buckets, charges.Bucket{Start: it.StartTime.Time(), End: it.EndTime.Time()})
		}
	}
	top, each := charges.Compute(creq)
	all := make([]Charges, len(each)+1)
	all[0] = chargesOf(top)
	out.Charges = &all[0]
	for i := range each {
		all[i+1] = chargesOf(each[i])
		out.Data[i].Charges = &all[i+1]
	}
	return nil
}

// energyByTariff is the energy money of rows (local days of zone, or readings) by the
// tariff that prices it (appendEnergyAt), the days of split by their readings' parts
// (splitMoney).
func energyByTariff(rows []costRow, plan tariffs.Plan, direction string, split splitMoney, readings bool, zone *time.Location) []charges.Energy {
	out := make([]charges.Energy, 0, 2*len(rows))
	src := sourcesOf(plan, direction)
	for _, r := range rows {
		if readings {
			out = split.appendReadingEnergy(out, r.Key, zone, r.MoneyCommodity, r.MoneyNonCommodity, src)
			continue
		}
		out = split.appendEnergy(out, r.Key, r.MoneyCommodity, r.MoneyNonCommodity, src)
	}
	return out
}

// energyComponents are the components of a direction's energy money: commodity and
// non-commodity.
func energyComponents(direction string) (cc, nc int) {
	if direction == tariffs.Export {
		return tariffs.CompExportCommodity, tariffs.CompImportNonCommodity
	}
	return tariffs.CompImportCommodity, tariffs.CompImportNonCommodity
}

// energySources are the sources of a direction's energy components in a plan: commodity
// and non-commodity (energyComponents), looked up once per location.
type energySources struct{ com, non []tariffs.Source }

func sourcesOf(plan tariffs.Plan, direction string) energySources {
	cc, nc := energyComponents(direction)
	return energySources{com: plan.Sources[cc], non: plan.Sources[nc]}
}

// appendEnergyAt appends to dst the money of a row starting at key (a local day's start
// for days, a reading's start for readings) split into its commodity and non-commodity
// parts, each charged by the tariff of that component at key (src), which taxes it. A
// day whose readings a tariff of another tax rate cuts is split into its readings
// instead (splitEnergy).
func appendEnergyAt(dst []charges.Energy, key uint32, com, non float64, src energySources) []charges.Energy {
	at := time.Unix(int64(key), 0)
	return append(dst, charges.Energy{At: at, TariffID: sourceAt(src.com, int64(key)), Money: com},
		charges.Energy{At: at, TariffID: sourceAt(src.non, int64(key)), Money: non})
}

// sourceAt is the id of the tariff that prices instant t among a component's sources
// (sorted, not overlapping): the one covering t, else the nearest; "" without sources.
func sourceAt(ss []tariffs.Source, t int64) string {
	if len(ss) == 0 {
		return ""
	}
	for _, s := range ss {
		if t < s.To {
			return s.Tariff.ID
		}
	}
	return ss[len(ss)-1].Tariff.ID
}

// demandReadings reads the readings of locs (location level, direction dir) starting in
// [lo, hi): each location's (in the order of locs) sorted by start, so that each month is
// measured from its own (charges.MonthReadings).
func (c *Pricer) demandReadings(ctx context.Context, scope kwhouse.Scope, locs []string, dir string, lo, hi time.Time) ([][]charges.Reading, error) {
	out := make([][]charges.Reading, len(locs))
	if len(locs) == 0 || lo.IsZero() {
		return out, nil
	}
	args := append(numberedLocations(locs), chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("locs", chstore.Set(locs)), chstore.Named("dir", dir),
		chstore.Named("lookback", uint32(lo.Unix())), chstore.Named("w1", uint32(hi.Unix())))
	rows, err := c.db.Query(ctx, demandReadingsStmt.With(demandReadingsSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("demand readings: %w", err)
	}
	defer rows.Close()
	var all []demandRow
	var li, rs, re uint32
	var wh float64
	dest := []any{&li, &rs, &re, &wh}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan demand readings: %w", err)
		}
		if li == 0 || int(li) > len(locs) {
			return nil, fmt.Errorf("demand readings: a reading of location number %d of %d", li, len(locs))
		}
		all = append(all, demandRow{key: uint64(li)<<32 | uint64(rs), end: re, wh: wh})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("demand readings: %w", err)
	}
	return byLocation(all, out), nil
}

// demandRow is a reading as read: its location's number and start (key: number << 32 |
// start, Unix seconds), end and energy.
type demandRow struct {
	key uint64
	end uint32
	wh  float64
}

// byLocation sorts rows by location and start and sets each location's readings in out
// (out[number-1]), all parts of one slice.
func byLocation(rows []demandRow, out [][]charges.Reading) [][]charges.Reading {
	slices.SortFunc(rows, func(a, b demandRow) int { return cmp.Compare(a.key, b.key) })
	readings := make([]charges.Reading, len(rows))
	for i, r := range rows {
		readings[i] = charges.Reading{Start: time.Unix(int64(uint32(r.key)), 0), End: time.Unix(int64(r.end), 0), Wh: r.wh}
	}
	for i := 0; i < len(rows); {
		j, li := i, rows[i].key>>32
		for j < len(rows) && rows[j].key>>32 == li {
			j++
		}
		out[li-1] = readings[i:j:j]
		i = j
	}
	return out
}

// demandShape reads the readings of demand charges: location level, the asked direction,
// the latest version of each by argMax (cost_demand.sql).
var demandShape = pricingShape{Dedup: dedupArgMax}
