package tariffs

import (
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/charges"
)

// planCharges is what a plan's tariffs charge beyond energy, compiled on first use and
// kept with the plan: a fleet plan is kept under its tariffs' versions and window
// (FleetTariffs.Plans), so a tariff version is compiled once per window, not once per
// answer (a year by MONTH of 1,000 locations compiled about 4 ms of Go and read the
// scope's tariff versions again; docs/costs.md, "Bill charges").
type planCharges struct {
	src []Tariff // the location's tariffs, in the order read
	mu  sync.Mutex
	dir [2]*compiledCharges // IMPORT, EXPORT
}

// compiledCharges are the charging tariffs of one direction, and the months whose demand
// they bill over the last window asked (a plan is made for one window).
type compiledCharges struct {
	tariffs []charges.Tariff
	err     error
	window  monthsKey
	months  []charges.TariffMonth
	listed  bool
}

// monthsKey names a DemandMonths list: the window (Unix nanoseconds) and whether the
// buckets are months.
type monthsKey struct {
	from, to     int64
	monthBuckets bool
}

func newPlanCharges(src []Tariff) *planCharges {
	return &planCharges{src: src}
}

// Owed returns what the plan's tariffs of direction charge beyond energy (those that
// charge nothing more are left out, the others in the order the tariffs were read) and
// charges.DemandMonths of them over [from, to), compiled and listed once per plan and
// window. Both are shared with the plan's other users: a caller copies the months before
// setting their peaks.
func (p Plan) Owed(direction string, from, to time.Time, monthBuckets bool) ([]charges.Tariff, []charges.TariffMonth, error) {
	if p.charges == nil {
		return nil, nil, nil
	}
	i := 0
	if direction == Export {
		i = 1
	}
	window := monthsKey{from: from.UnixNano(), to: to.UnixNano(), monthBuckets: monthBuckets}
	p.charges.mu.Lock()
	defer p.charges.mu.Unlock()
	c := p.charges.dir[i]
	if c == nil {
		c = &compiledCharges{}
		c.tariffs, c.err = chargesOf(p.charges.src, direction)
		p.charges.dir[i] = c
	}
	if c.err != nil || len(c.tariffs) == 0 {
		return c.tariffs, nil, c.err
	}
	if !c.listed || c.window != window {
		c.window, c.listed = window, true
		c.months = charges.DemandMonths(c.tariffs, from, to, monthBuckets)
	}
	return c.tariffs, c.months, nil
}

func chargesOf(ts []Tariff, direction string) ([]charges.Tariff, error) {
	var out []charges.Tariff
	for i := range ts {
		if ts[i].Direction != direction || !ts[i].HasCharges() {
			continue
		}
		c, err := ts[i].Charges()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
