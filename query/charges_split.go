package query

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/tariffs"
)

// splitMoney is the energy money of a location's split days by reading, keyed by the day.
type splitMoney map[uint32][]charges.Energy

// energy is the energy money of the day row starting at key with money com and non: its
// readings' when the day is split (for the first of its rows; the others add nothing, the
// readings holding all of the day), else energyAt's. It consumes s.
func (s splitMoney) energy(key uint32, com, non float64, plan tariffs.Plan, direction string) []charges.Energy {
	if e, ok := s[key]; ok {
		s[key] = nil
		return e
	}
	return energyAt(key, com, non, plan, direction)
}

// splitParallel is how many split days' records are priced at once (fleetCharges).
const splitParallel = 2

// splitEnergy is the energy money of a location's split days (splitDays: local days of
// zone, keyed by their start), by reading: each reading's money is taxed by the tariff
// pricing it at the reading's start, as an answer without aggregation taxes it. a prices
// the location's whole answer.
func (c *Pricer) splitEnergy(ctx context.Context, a costArgs, zone *time.Location, split []uint32) (splitMoney, error) {
	if len(split) == 0 {
		return nil, nil
	}
	out := make(splitMoney, len(split))
	for _, d := range split {
		b := a
		b.daily, b.maxRows, b.instant = false, 0, nil
		b.w0, b.w1 = max(a.w0, int64(d)), min(a.w1, dayAfter(d, zone))
		rows, err := c.priceOne(ctx, b)
		if err != nil {
			return nil, err
		}
		out[d] = energyByTariff(rows, a.plan, a.direction, nil)
	}
	return out, nil
}

// splitDays lists the days (keys of local days of zone) inside which a component of the
// energy passes to a tariff of another tax_percentage (taxChanges): a contract changing
// mid-day. Their energy is taxed by reading (splitEnergy), every other day's by the
// tariff at the day's start.
func splitDays(days []uint32, zone *time.Location, plan tariffs.Plan, direction string) []uint32 {
	changes := taxChanges(plan, direction)
	if len(changes) == 0 {
		return nil
	}
	var out []uint32
	for _, d := range days {
		end := dayAfter(d, zone)
		for _, x := range changes {
			if x > int64(d) && x < end {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// taxChanges are the instants (Unix seconds) where a component of a direction's energy
// passes from one tariff to another of a different tax_percentage.
func taxChanges(plan tariffs.Plan, direction string) []int64 {
	var out []int64
	cc, nc := energyComponents(direction)
	for _, comp := range []int{cc, nc} {
		ss := plan.Sources[comp]
		for i := 1; i < len(ss); i++ {
			if taxOf(ss[i].Tariff) != taxOf(ss[i-1].Tariff) {
				out = append(out, ss[i].From)
			}
		}
	}
	return out
}

// taxOf is a tariff's tax_percentage (0 when it has none).
func taxOf(t *tariffs.Tariff) float64 {
	if t.TaxPercentage == nil {
		return 0
	}
	return *t.TaxPercentage
}

// oneTaxRate says the energy of a plan's direction is taxed at one rate per component
// over [from, to), or from two days before (a local day's start): no tax change there.
func oneTaxRate(plan tariffs.Plan, direction string, from, to time.Time) bool {
	for _, x := range taxChanges(plan, direction) {
		if x > from.Unix()-2*86400 && x < to.Unix() {
			return false
		}
	}
	return true
}

// dayAfter is the start (Unix seconds) of the local day of zone after the one starting at d.
func dayAfter(d uint32, zone *time.Location) int64 {
	t := time.Unix(int64(d), 0).In(zone)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, zone).Unix()
}

// fleetSplitEnergy is splitEnergy for each location of a fleet answer over req's window,
// from its days (byLoc), with splitParallel queries at once.
func (c *Pricer) fleetSplitEnergy(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan, byLoc map[string][]fleetSum) (map[string]splitMoney, error) {
	out := make(map[string]splitMoney)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(splitParallel)
	for id, days := range byLoc {
		zone, err := catalog.LoadZone(locs[id].Timezone)
		if err != nil {
			return nil, fmt.Errorf("zone of %s: %w", id, err)
		}
		keys := make([]uint32, len(days))
		for i, d := range days {
			keys[i] = d.Key
		}
		split := splitDays(keys, zone, plans[id], req.Direction)
		if len(split) == 0 {
			continue
		}
		a := costArgs{scope: scope, location: id, direction: req.Direction, w0: req.Start.Unix(), w1: req.End.Unix(),
			plan: plans[id], zone: locs[id].Timezone}
		g.Go(func() error {
			e, err := c.splitEnergy(gctx, a, zone, split)
			mu.Lock()
			out[id] = e
			mu.Unlock()
			return err
		})
	}
	return out, g.Wait()
}
