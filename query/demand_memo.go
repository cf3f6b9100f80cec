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
//
// The months are held by location (a few tariffs' months each, scanned), so an answer
// looks up each location once rather than each month under a key of four strings: a year
// of 1,000 locations is 1,000 lookups, not 12,000.
type peakMemo struct {
	mu sync.Mutex
	m  map[memoScope]map[string][]memoPeaks
	n  int // months held
}

// peakMemoLimit bounds the months a memo holds (about 120 bytes each): past it, it starts
// afresh. A year of 10,000 locations is 120,000.
const peakMemoLimit = 1 << 18

// memoScope names the months of one scope and direction.
type memoScope struct {
	scope kwhouse.Scope
	dir   string
}

// memoPeaks are a tariff month's peaks and the reach fingerprint they hold under. Neither
// the entries of a location nor the peaks are written to once held (keep replaces a
// location's entries; TariffMonth.Peaks shares the peaks).
type memoPeaks struct {
	tariffMonth
	seen  uint64
	peaks []float64
}

// held is the months the memo holds of each location of need (none: absent).
func (p *peakMemo) held(scope kwhouse.Scope, dir string, need map[string][]charges.TariffMonth) map[string][]memoPeaks {
	p.mu.Lock()
	defer p.mu.Unlock()
	byLoc := p.m[memoScope{scope, dir}]
	out := make(map[string][]memoPeaks, len(need))
	for loc := range need {
		if hs := byLoc[loc]; hs != nil {
			out[loc] = hs
		}
	}
	return out
}

// keep holds the peaks of the months got under their fingerprints now.
func (p *peakMemo) keep(scope kwhouse.Scope, dir string, got []peakMonth) {
	if len(got) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || p.n+len(got) > peakMemoLimit {
		p.m, p.n = map[memoScope]map[string][]memoPeaks{}, 0
	}
	s := memoScope{scope, dir}
	byLoc := p.m[s]
	if byLoc == nil {
		byLoc = make(map[string][]memoPeaks, len(got)/12+1)
		p.m[s] = byLoc
	}
	for i := 0; i < len(got); {
		j := i + 1
		for j < len(got) && got[j].loc == got[i].loc {
			j++
		}
		old := byLoc[got[i].loc]
		hs := make([]memoPeaks, 0, len(old)+j-i)
		for _, h := range old {
			if !replaced(h, got[i:j]) {
				hs = append(hs, h)
			}
		}
		for _, g := range got[i:j] {
			if g.m.Peaks == nil {
				continue
			}
			hs = append(hs, memoPeaks{tariffMonth: tariffMonthOf(g.m), seen: g.now, peaks: g.m.Peaks})
		}
		p.n += len(hs) - len(old)
		byLoc[got[i].loc] = hs
		i = j
	}
}

// replaced says whether h is a month of got (one location's).
func replaced(h memoPeaks, got []peakMonth) bool {
	for _, g := range got {
		if tariffMonthOf(g.m) == h.tariffMonth {
			return true
		}
	}
	return false
}
