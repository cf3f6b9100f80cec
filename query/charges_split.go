package query

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/charges"
	"github.com/kwhouse/kwhouse/tariffs"
)

// splitMoney is the energy money of a location's split days by reading part, keyed by
// the day.
type splitMoney map[uint32][]charges.Energy

// appendEnergy appends to dst the energy money of the day row starting at key with money
// com and non: its readings' parts when the day is split (for the first of its rows; the
// others add nothing, the parts holding all of the day), else appendEnergyAt's. It
// consumes s.
func (s splitMoney) appendEnergy(dst []charges.Energy, key uint32, com, non float64, src energySources) []charges.Energy {
	if e, ok := s[key]; ok {
		s[key] = nil
		return append(dst, e...)
	}
	return appendEnergyAt(dst, key, com, non, src)
}

// appendReadingEnergy is appendEnergy for a reading starting at key (an answer without
// aggregation): its split day's parts (for the day's first reading), else
// appendEnergyAt's.
func (s splitMoney) appendReadingEnergy(dst []charges.Energy, key uint32, zone *time.Location, com, non float64,
	src energySources) []charges.Energy {
	if d := dayOf(key, zone); len(s) > 0 {
		if _, ok := s[d]; ok {
			return s.appendEnergy(dst, d, com, non, src)
		}
	}
	return appendEnergyAt(dst, key, com, non, src)
}

// splitParallel is how many split days' records are priced at once (fleetCharges).
const splitParallel = 2

// splitEnergy is the energy money of a location's split days (splitDays: local days of
// zone, keyed by their start), by reading part: a reading's money is cut at each change
// of tax rate inside its day (readingParts), and each part is taxed by the tariff
// pricing it. a prices the location's whole answer.
func (c *Pricer) splitEnergy(ctx context.Context, a costArgs, zone *time.Location, split []uint32) (splitMoney, error) {
	if len(split) == 0 {
		return nil, nil
	}
	changes := taxChanges(a.plan, a.direction)
	out := make(splitMoney, len(split))
	for _, d := range split {
		b := a
		b.daily, b.maxRows, b.instant = false, 0, nil
		b.w0, b.w1 = max(a.w0, int64(d)), min(a.w1, dayAfter(d, zone))
		var cuts []int64
		for _, x := range changes {
			if cutsDay(x, int64(d), dayAfter(d, zone)) {
				cuts = append(cuts, x)
			}
		}
		parts, err := c.readingParts(ctx, b, cuts)
		if err != nil {
			return nil, err
		}
		out[d] = parts
	}
	return out, nil
}

// readingKey names a reading among an answer's rows without aggregation.
type readingKey struct {
	start, end uint32
	rate       uint8
	session    string
	reference  string
}

type readingMoney struct{ com, non float64 }

// readingParts prices the readings of a (without aggregation) whole and up to each cut
// (tariffs.Plan.Until: the part of each reading before the cut, priced as the whole
// plan prices it), and returns the money of each part between two cuts, by component,
// charged to the tariff pricing that component at the part's start: a reading straddling
// a change of tariff is split by time as its energy is priced.
func (c *Pricer) readingParts(ctx context.Context, a costArgs, cuts []int64) ([]charges.Energy, error) {
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	whole, order, err := c.moneyByReading(ctx, a)
	if err != nil {
		return nil, err
	}
	before := make([]map[readingKey]readingMoney, len(cuts))
	for i, x := range cuts {
		b := a
		b.plan = a.plan.Until(x)
		if before[i], _, err = c.moneyByReading(ctx, b); err != nil {
			return nil, err
		}
	}
	cc, nc := energyComponents(a.direction)
	var out []charges.Energy
	for _, k := range order {
		at, from := time.Unix(int64(k.start), 0), int64(k.start)
		var done readingMoney
		for i := 0; i <= len(cuts); i++ {
			upTo := whole[k]
			if i < len(cuts) {
				upTo = before[i][k]
			}
			if i > 0 {
				from = max(int64(k.start), cuts[i-1])
			}
			if com, non := upTo.com-done.com, upTo.non-done.non; com != 0 || non != 0 {
				out = append(out, charges.Energy{At: at, TariffID: sourceAt(a.plan.Sources[cc], from), Money: com},
					charges.Energy{At: at, TariffID: sourceAt(a.plan.Sources[nc], from), Money: non})
			}
			done = upTo
		}
	}
	return out, nil
}

// moneyByReading prices a (without aggregation) and sums its money by reading, in the
// order the readings first come.
func (c *Pricer) moneyByReading(ctx context.Context, a costArgs) (map[readingKey]readingMoney, []readingKey, error) {
	rows, err := c.priceOne(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[readingKey]readingMoney, len(rows))
	var order []readingKey
	for _, r := range rows {
		k := readingKey{r.Key, r.KeyEnd, r.TariffRate, r.Session, r.Reference}
		m, seen := out[k]
		if !seen {
			order = append(order, k)
		}
		out[k] = readingMoney{m.com + r.MoneyCommodity, m.non + r.MoneyNonCommodity}
	}
	return out, order, nil
}

// splitDays lists the days (keys of local days of zone) whose readings a change of a
// component of the energy to a tariff of another tax_percentage (taxChanges) cuts
// (cutsDay): a contract changing inside the day or at its end. Their energy is taxed by
// reading (splitEnergy), every other day's by the tariff at the day's start.
func splitDays(days []uint32, zone *time.Location, plan tariffs.Plan, direction string) []uint32 {
	changes := taxChanges(plan, direction)
	if len(changes) == 0 {
		return nil
	}
	var out []uint32
	for _, d := range days {
		end := dayAfter(d, zone)
		for _, x := range changes {
			if cutsDay(x, int64(d), end) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// cutsDay says a change of tariff at x (Unix seconds) cuts the readings of the local day
// [d, end): x inside the day, or at its end, which a reading starting in the day and
// crossing the next midnight straddles (a contract changing at midnight). A change at
// the day's start cuts none of its readings: they all start after it.
func cutsDay(x, d, end int64) bool {
	return x > d && x <= end
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
// over the local days of zone (a time zone's name) that [from, to) touches (from two days
// before from, a local day's start): no tax change cuts their readings (cutsDay), so no
// day of the window is split (splitDays). The zone is loaded only for a plan with tax
// changes.
func oneTaxRate(plan tariffs.Plan, direction, zone string, from, to time.Time) (bool, error) {
	changes := taxChanges(plan, direction)
	if len(changes) == 0 {
		return true, nil
	}
	z, err := catalog.LoadZone(zone)
	if err != nil {
		return false, err
	}
	lo, hi := from.Unix()-2*86400, dayAfter(dayOf(uint32(to.Unix()-1), z), z)
	for _, x := range changes {
		if cutsDay(x, lo, hi) {
			return false, nil
		}
	}
	return true, nil
}

// dayOf is the start (Unix seconds) of the local day of zone containing t.
func dayOf(t uint32, zone *time.Location) uint32 {
	l := time.Unix(int64(t), 0).In(zone)
	return uint32(time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, zone).Unix())
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
