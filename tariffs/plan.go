package tariffs

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// Components of a price: which records they price (by tariff_rate) and which tariffs.
const (
	CompImportCommodity    = 1
	CompImportNonCommodity = 2
	CompExportCommodity    = 3
)

// Plan says which tariffs price each component of a location's records over a range, with
// every needed rate period stored.
type Plan struct {
	Sources    map[int][]Source // by component
	RatesIDs   []string         // of the tariffs' rate periods in tariff_rates (Tariff.RatesID)
	Markets    []string
	HasImport  bool // the location has an import tariff of some type
	HasExport  bool
	Tiered     bool  // some tariff has more than one band: tier counters must run
	Lookback   int64 // Unix second from which records run the tier counters of the window
	RangeStart int64 // Unix second from which rate periods are needed
	RangeEnd   int64 // Unix second until which rate periods are needed
	tariffs    []*Tariff
	priceKey   string       // PriceKey, computed with the plan
	charges    *planCharges // Owed: its charges and demand months, compiled on first use
}

// EnsureRates makes sure the stored rate periods (tariff_rates) cover the plan's range:
// only the queries that read them need it (a schedule tariff's cost segments are
// computed from the schedule instead).
func (s *Service) EnsureRates(ctx context.Context, scope kwhouse.Scope, p Plan) error {
	return s.ensureExpanded(ctx, scope, p.tariffs, p.RangeStart-32*86400, p.RangeEnd)
}

// maxRecordSpan mirrors the ingest limit: a record starting in a window may end this much later.
const maxRecordSpan = 31 * 86400

// Plan resolves the tariffs of locationID for records starting in [w0, w1).
func (s *Service) Plan(ctx context.Context, scope kwhouse.Scope, locationID string, w0, w1 int64) (Plan, error) {
	return s.plan(ctx, scope, locationID, w0, w1, w1+maxRecordSpan, true)
}

// PlanPrices resolves the tariffs that price the instants of [w0, w1): no tier lookback and
// no room for records reaching past w1 (price timelines and slots).
func (s *Service) PlanPrices(ctx context.Context, scope kwhouse.Scope, locationID string, w0, w1 int64) (Plan, error) {
	return s.plan(ctx, scope, locationID, w0, w1, w1, false)
}

func (s *Service) plan(ctx context.Context, scope kwhouse.Scope, locationID string, w0, w1, end int64, counters bool) (Plan, error) {
	ts, err := s.readTariffs(ctx, scope, locationID)
	if err != nil {
		return Plan{}, err
	}
	return planOf(ts, w0, end, counters), nil
}

// FleetTariffs are every tariff of a scope, to plan many locations from (OfFleet).
type FleetTariffs struct {
	all   []docstore.Versioned[Tariff]
	plans *lru.Cache[string, Plan]
}

// OfFleet reads every tariff of a scope, for planning many locations at once.
func (s *Service) OfFleet(ctx context.Context, scope kwhouse.Scope) (FleetTariffs, error) {
	all, err := s.all.AllVersioned(ctx, scope)
	if err != nil {
		return FleetTariffs{}, fmt.Errorf("tariffs of the fleet: %w", err)
	}
	return FleetTariffs{all: all, plans: s.plans}, nil
}

// Plans resolves the tariffs of many locations for records starting in [w0, w1), as Plan
// does for each. A plan depends only on its tariffs and range, so it is kept under the
// versions of its tariffs (a fleet's pages plan the same locations again and again).
func (f FleetTariffs) Plans(locationIDs []string, w0, w1 int64) map[string]Plan {
	byLocation := make(map[string][]docstore.Versioned[Tariff], len(locationIDs))
	for _, id := range locationIDs {
		byLocation[id] = nil
	}
	for _, t := range f.all {
		if list, ok := byLocation[t.Value.LocationID]; ok {
			byLocation[t.Value.LocationID] = append(list, t)
		}
	}
	out := make(map[string]Plan, len(byLocation))
	span := strconv.FormatInt(w0, 10) + "-" + strconv.FormatInt(w1, 10)
	var key []byte
	for id, list := range byLocation {
		key = append(append(append(key[:0], id...), '|'), span...)
		for _, t := range list {
			key = strconv.AppendUint(append(append(append(key, '|'), t.ID...), '@'), t.Version, 10)
		}
		if p, ok := f.plans.Get(string(key)); ok {
			out[id] = p
			continue
		}
		ts := make([]Tariff, len(list))
		for i, t := range list {
			ts[i] = t.Value
		}
		out[id] = planOf(ts, w0, w1+maxRecordSpan, true)
		f.plans.Add(string(key), out[id])
	}
	return out
}

// EnsureFleetRates makes sure the stored rate periods cover every plan's range (EnsureRates
// for many plans, written in one batch).
func (s *Service) EnsureFleetRates(ctx context.Context, scope kwhouse.Scope, plans map[string]Plan) error {
	var ts []*Tariff
	from, to := int64(math.MaxInt64), int64(0)
	for _, p := range plans {
		ts = append(ts, p.tariffs...)
		if len(p.tariffs) > 0 {
			from, to = min(from, p.RangeStart-32*86400), max(to, p.RangeEnd)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return s.ensureExpanded(ctx, scope, ts, from, to)
}

// planOf builds the plan of one location's tariffs ts for records starting from w0 and
// reaching until end; counters says whether tier counters must run.
func planOf(ts []Tariff, w0, end int64, counters bool) Plan {
	p := Plan{Sources: map[int][]Source{}, Lookback: w0, charges: newPlanCharges(ts)}
	byComp := map[int][]*Tariff{}
	markets := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		comp := componentOf(t)
		byComp[comp] = append(byComp[comp], t)
		p.RatesIDs = append(p.RatesIDs, t.RatesID())
		if t.MarketRates {
			markets[t.MarketID] = true
		}
		p.HasImport = p.HasImport || t.Direction == Import
		p.HasExport = p.HasExport || t.Direction == Export
		if t.tiered() {
			p.Tiered = true
		}
		if ls := lookbackOf(t, w0); ls < p.Lookback {
			p.Lookback = ls
		}
	}
	if !p.Tiered || !counters {
		p.Lookback = w0 // no counter to run: nothing before the window matters
	}
	for m := range markets {
		p.Markets = append(p.Markets, m)
	}
	p.RangeStart, p.RangeEnd = p.Lookback, end
	for comp, list := range byComp {
		p.Sources[comp] = sources(list, p.RangeStart, end)
		p.tariffs = append(p.tariffs, list...)
	}
	p.priceKey = priceKeyOf(p.Sources)
	return p
}

func componentOf(t *Tariff) int {
	switch {
	case t.Direction == Export:
		return CompExportCommodity
	case t.Type == NonCommodity:
		return CompImportNonCommodity
	}
	return CompImportCommodity
}

// LookbackFrom is the tier lookback of the plan's records starting from w0, at or after
// the start of the window the plan was made for (the stale days of a window priced
// again): where the tier periods containing w0 began, less a day, as a plan made for w0
// would have it. Never earlier than the plan's own lookback.
func (p Plan) LookbackFrom(w0 int64) int64 {
	if w0 <= p.Lookback || !p.Tiered {
		return p.Lookback
	}
	out := w0
	for _, t := range p.tariffs {
		out = min(out, lookbackOf(t, w0))
	}
	return max(out, p.Lookback)
}

// lookbackOf is where the tier period containing w0 began in t's zone, less a day for
// records that straddle that start. Records starting before it only run counters.
func lookbackOf(t *Tariff, w0 int64) int64 {
	loc, err := catalog.LoadZone(t.Timezone)
	if err != nil {
		return w0
	}
	lt := time.Unix(w0, 0).In(loc)
	day := floorDiv(lt.Unix()+int64(offsetOf(lt)), 86400)
	return tierStartOf(day, t.TierPeriod, loc) - 86400
}

func offsetOf(t time.Time) int {
	_, off := t.Zone()
	return off
}

// tiered reports whether any rate of t has more than one band.
func (t *Tariff) tiered() bool {
	for _, e := range t.Schedule {
		for _, dh := range e.DaysAndHours {
			for _, h := range dh.Hours {
				if len(h.Rate) > 1 {
					return true
				}
			}
		}
	}
	return false
}

// PriceKey names what the plan prices with: for each component, its sources' rate
// periods (RatesID), spans and confidences. Locations whose plans have equal keys pay the
// same price at every instant of the range, so their price segments may be shared.
func (p Plan) PriceKey() string { return p.priceKey }

func priceKeyOf(sources map[int][]Source) string {
	var b strings.Builder
	for _, comp := range []int{CompImportCommodity, CompImportNonCommodity, CompExportCommodity} {
		fmt.Fprintf(&b, "%d:", comp)
		for _, s := range sources[comp] {
			fmt.Fprintf(&b, "%s/%d/%d/%g;", s.Tariff.RatesID(), s.From, s.To, s.Confidence)
		}
	}
	return b.String()
}

// TariffBits has bit 1 << (n - 1) set for each component n the plan has tariffs of: time
// such a component leaves unpriced lowers a record's confidence to 0.
func (p Plan) TariffBits() uint16 {
	var bits uint16
	for comp, list := range p.Sources {
		if len(list) > 0 {
			bits |= 1 << (comp - 1)
		}
	}
	return bits
}

// Missing names the direction of records the plan cannot price — nImport records with
// tariff_rate IMPORT but no import tariff, or nExport EXPORT ones but no export tariff —
// or "" when it prices them all.
func (p Plan) Missing(nImport, nExport uint64) string {
	switch {
	case nImport > 0 && !p.HasImport:
		return "IMPORT"
	case nExport > 0 && !p.HasExport:
		return "EXPORT"
	}
	return ""
}
