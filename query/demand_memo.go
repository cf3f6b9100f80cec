package query

import (
	"sync"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/charges"
)

// peakMemo holds the demand peaks this Pricer read from demand_peaks or measured, each
// under the reach fingerprint it was measured under, so that an answer whose months'
// fingerprints now (read for every answer: demandPeaks) are those serves their peaks
// without reading demand_peaks again. It is demand_peaks' rule, not another one: peaks are
// served only while their fingerprint is the current one, and a month whose readings
// changed is read or measured as before. Reading a year of 1,000 locations' kept peaks
// cost ClickHouse about 10 ms of CPU per answer (docs/costs.md, "Bill charges").
type peakMemo struct {
	mu sync.Mutex
	m  map[peakMemoKey]memoPeaks
}

// peakMemoLimit bounds the months a memo holds (about 120 bytes each): past it, it starts
// afresh. A year of 10,000 locations is 120,000.
const peakMemoLimit = 1 << 18

// peakMemoKey names a tariff month of a location in one scope and direction.
type peakMemoKey struct {
	scope kwhouse.Scope
	dir   string
	loc   string
	month int64 // its start, Unix seconds
	key   string
}

// memoPeaks are a month's peaks and the reach fingerprint they hold under. The peaks are
// never written to once kept (TariffMonth.Peaks shares them).
type memoPeaks struct {
	seen  uint64
	peaks []float64
}

func memoKeyOf(scope kwhouse.Scope, dir, loc string, m *charges.TariffMonth) peakMemoKey {
	return peakMemoKey{scope: scope, dir: dir, loc: loc, month: m.Month.Start.Unix(), key: m.Tariff.Key}
}

// serve sets the peaks of the months of need (by location) held under the fingerprints
// now (prints) and returns the others, by location.
func (p *peakMemo) serve(scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth, prints demandPrints) map[string][]*charges.TariffMonth {
	misses := map[string][]*charges.TariffMonth{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for loc, ms := range need {
		lp := prints.at(loc)
		for i := range ms {
			m := &ms[i]
			if e, ok := p.m[memoKeyOf(scope, dir, loc, m)]; ok && e.seen == lp.of(reachOf(loc, *m)) {
				m.Peaks = e.peaks
				continue
			}
			misses[loc] = append(misses[loc], m)
		}
	}
	return misses
}

// keep holds the peaks of the months of got (by location) under the fingerprints now.
func (p *peakMemo) keep(scope kwhouse.Scope, dir string, got map[string][]*charges.TariffMonth, prints demandPrints) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for loc, ms := range got {
		lp := prints.at(loc)
		for _, m := range ms {
			if m.Peaks == nil {
				continue
			}
			if p.m == nil || len(p.m) >= peakMemoLimit {
				p.m = map[peakMemoKey]memoPeaks{}
			}
			p.m[memoKeyOf(scope, dir, loc, m)] = memoPeaks{seen: lp.of(reachOf(loc, *m)), peaks: m.Peaks}
		}
	}
}
