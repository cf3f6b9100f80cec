package tariffs

import (
	"sync"

	"github.com/kwhouse/kwhouse"
)

// yearKey names one stored calendar year of rate periods: tariff_rates rows belong to a
// scope, so two accounts with alike tariffs (one RatesID) each store their own.
type yearKey struct {
	scope kwhouse.Scope
	id    string // RatesID
	year  int
}

// expandedYears remembers which years are stored. A tariff's schedule never changes
// after creation, so a stored year stays valid.
type expandedYears struct {
	mu sync.Mutex
	m  map[yearKey]bool
}

func newExpandedYears() *expandedYears { return &expandedYears{m: map[yearKey]bool{}} }

func (e *expandedYears) has(k yearKey) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

func (e *expandedYears) add(k yearKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k] = true
}

// yearFlights lets one request expand and store a year while concurrent requests that
// need the same year wait for it instead of repeating the work. The request that claims
// a year does the work under its own context: if it ends, the work stops, and the
// waiters find the year still missing and claim it themselves.
type yearFlights struct {
	mu sync.Mutex
	m  map[yearKey]*flight
}

// flight is one request's expansion of the years it claimed; done closes when it ends.
type flight struct {
	done chan struct{}
}

func newYearFlights() *yearFlights { return &yearFlights{m: map[yearKey]*flight{}} }

// claim splits keys into those nobody is expanding, now the caller's in flight f (nil
// when there are none), and the flights of others that have the rest.
func (y *yearFlights) claim(keys []yearKey) (f *flight, owned []yearKey, others []*flight) {
	y.mu.Lock()
	defer y.mu.Unlock()
	seen := map[*flight]bool{}
	for _, k := range keys {
		if o, ok := y.m[k]; ok {
			if !seen[o] {
				seen[o] = true
				others = append(others, o)
			}
			continue
		}
		if f == nil {
			f = &flight{done: make(chan struct{})}
		}
		y.m[k] = f
		owned = append(owned, k)
	}
	return f, owned, others
}

// land ends flight f, which had the keys owned.
func (y *yearFlights) land(f *flight, owned []yearKey) {
	y.mu.Lock()
	defer y.mu.Unlock()
	for _, k := range owned {
		delete(y.m, k)
	}
	close(f.done)
}
