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
// energy passes from one tariff to another of a different tax_percentage: a contract
// changing mid-day. Their energy is taxed by reading (splitEnergy), every other day's by
// the tariff at the day's start.
func splitDays(days []uint32, zone *time.Location, plan tariffs.Plan, direction string, ts []charges.Tariff) []uint32 {
	pct := make(map[string]float64, len(ts))
	for _, t := range ts {
		pct[t.ID] = t.TaxPercent
	}
	var changes []int64
	cc, nc := energyComponents(direction)
	for _, comp := range []int{cc, nc} {
		ss := plan.Sources[comp]
		for i := 1; i < len(ss); i++ {
			if pct[ss[i].Tariff.ID] != pct[ss[i-1].Tariff.ID] {
				changes = append(changes, ss[i].From)
			}
		}
	}
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

// dayAfter is the start (Unix seconds) of the local day of zone after the one starting at d.
func dayAfter(d uint32, zone *time.Location) int64 {
	t := time.Unix(int64(d), 0).In(zone)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, zone).Unix()
}

// fleetSplitEnergy is splitEnergy for each location of a fleet answer over req's window,
// from its days (byLoc), with splitParallel queries at once.
func (c *Pricer) fleetSplitEnergy(ctx context.Context, scope kwhouse.Scope, req FleetRequest, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan, ts map[string][]charges.Tariff, byLoc map[string][]fleetSum) (map[string]splitMoney, error) {
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
		split := splitDays(keys, zone, plans[id], req.Direction, ts[id])
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
