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
	src     []Tariff // the location's tariffs, in the order read
	mu      sync.Mutex
	tariffs map[string]compiledCharges // by direction
	months  map[monthsKey][]charges.TariffMonth
}

type compiledCharges struct {
	tariffs []charges.Tariff
	err     error
}

// monthsKey names a DemandMonths list: the direction, the window (Unix nanoseconds) and
// whether the buckets are months.
type monthsKey struct {
	direction    string
	from, to     int64
	monthBuckets bool
}

func newPlanCharges(src []Tariff) *planCharges {
	return &planCharges{src: src}
}

// Charges returns what the plan's tariffs of direction charge beyond energy (those that
// charge nothing more are left out), in the order the tariffs were read. The slice is
// shared with the plan's other users: it must not be modified.
func (p Plan) Charges(direction string) ([]charges.Tariff, error) {
	if p.charges == nil {
		return nil, nil
	}
	p.charges.mu.Lock()
	defer p.charges.mu.Unlock()
	c := p.charges.compiled(direction)
	return c.tariffs, c.err
}

// DemandMonths is charges.DemandMonths of the plan's charging tariffs of direction over
// [from, to), listed once per plan and window. The months are shared: a caller copies
// them before setting their peaks.
func (p Plan) DemandMonths(direction string, from, to time.Time, monthBuckets bool) ([]charges.TariffMonth, error) {
	if p.charges == nil {
		return nil, nil
	}
	p.charges.mu.Lock()
	defer p.charges.mu.Unlock()
	c := p.charges.compiled(direction)
	if c.err != nil || len(c.tariffs) == 0 {
		return nil, c.err
	}
	k := monthsKey{direction: direction, from: from.UnixNano(), to: to.UnixNano(), monthBuckets: monthBuckets}
	ms, ok := p.charges.months[k]
	if !ok {
		ms = charges.DemandMonths(c.tariffs, from, to, monthBuckets)
		if p.charges.months == nil {
			p.charges.months = map[monthsKey][]charges.TariffMonth{}
		}
		p.charges.months[k] = ms
	}
	return ms, nil
}

// compiled is the charging tariffs of direction, compiled on first use; p.mu is held.
func (p *planCharges) compiled(direction string) compiledCharges {
	c, ok := p.tariffs[direction]
	if !ok {
		c.tariffs, c.err = chargesOf(p.src, direction)
		if p.tariffs == nil {
			p.tariffs = map[string]compiledCharges{}
		}
		p.tariffs[direction] = c
	}
	return c
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
