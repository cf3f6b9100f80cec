package webhooks

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/query"
)

// Revision is the data of a cost.revised event: one object's energy and money of one
// direction and local day, before and after a change of its readings.
type Revision struct {
	LocationID   string    `json:"location_id"`
	DeviceID     string    `json:"device_id,omitempty"`
	Direction    string    `json:"direction"`
	Date         string    `json:"date"` // the local day, YYYY-MM-DD
	Timezone     string    `json:"timezone"`
	CurrencyCode string    `json:"currency_code"`
	Before       DayAmount `json:"before"`
	After        DayAmount `json:"after"`
}

// DayAmount is a day's energy and money, as the day items of POST /costs/interval show them.
type DayAmount struct {
	Energy query.EnergyValue `json:"energy"`
	Tariff query.TariffValue `json:"tariff"`
}

// Reviser emits cost.revised when a write of readings (Revising) or of prices
// (RevisingPrices) changes a local day that ended more than webhooks.revision_after ago:
// it prices the days a write touches before and after it, with the cost query of
// POST /costs/interval (aggregation DAY), and reports each (object, direction, day) whose
// energy or money changed. Days that had no readings before are new, not revised; days
// the object has no tariff to price are left out.
type Reviser struct {
	pricer  *query.Pricer
	catalog *catalog.Catalog
	docs    *docstore.Store
	db      *chstore.DB // the reading change records (RevisingPrices)
	after   time.Duration
	now     func() time.Time
	log     *slog.Logger
	// subs tells whether a scope has an endpoint taking cost.revised: a scope with none
	// pays nothing for its late readings (a backfill of history stays a plain write).
	subs subscribers
}

// NewReviser returns the reviser of the cost.revised events.
func NewReviser(pricer *query.Pricer, cat *catalog.Catalog, db *chstore.DB, cfg config.Webhooks, log *slog.Logger) *Reviser {
	docs := cat.Docs()
	return &Reviser{pricer: pricer, catalog: cat, docs: docs, db: db, after: cfg.RevisionAfter, now: docs.Now, log: log,
		subs: newSubscribers(docs, cfg.EndpointCacheTTL, log)}
}

// revisedSpan is one object's and direction's closed days a request touches.
type revisedSpan struct {
	object, location, device string
	direction                int8
	zone                     *time.Location
	days                     map[string]time.Time // local date → the day's start
	before                   map[string]query.CostItem
	currency, timezone       string
}

// Revising prices the closed days records touch before they are stored, and returns what
// prices them again and reports the changes once they are. A failure to price is logged
// and costs the events, never the readings.
func (r *Reviser) Revising(ctx context.Context, scope kwhouse.Scope, records []ingest.Record) (func(context.Context, bool), error) {
	if !r.subs.want(ctx, scope, EventRevised) {
		return func(context.Context, bool) {}, nil
	}
	spans := r.closedDays(ctx, scope, records)
	if len(spans) == 0 {
		return func(context.Context, bool) {}, nil
	}
	return r.revise(ctx, scope, spans)
}

// revise locks spans, prices them before the write, and returns what, once the write is
// done, prices them again and reports the changes: the one way readings and prices revise.
func (r *Reviser) revise(ctx context.Context, scope kwhouse.Scope, spans revisedSpans) (func(context.Context, bool), error) {
	unlock, err := r.lock(ctx, spans)
	if err != nil {
		return nil, err
	}
	for _, sp := range spans {
		sp.before = r.price(ctx, scope, sp)
	}
	return func(ctx context.Context, written bool) {
		defer unlock()
		if written {
			r.report(ctx, scope, spans)
		}
	}, nil
}

// closedDays groups the records' closed local days by object and direction. A record that
// starts less than revision_after ago cannot touch a closed day (its day ends after it
// starts), so the usual fresh readings cost no look-up at all.
func (r *Reviser) closedDays(ctx context.Context, scope kwhouse.Scope, records []ingest.Record) revisedSpans {
	now := r.now()
	edge := now.Add(-r.after).Unix()
	spans := revisedSpans{}
	zones := map[string]*time.Location{}
	for i := range records {
		rec := &records[i]
		if rec.Start > edge {
			continue
		}
		zone, ok := zones[rec.LocationID]
		if !ok {
			zone = r.zone(ctx, scope, rec.LocationID)
			zones[rec.LocationID] = zone
		}
		if zone == nil {
			continue
		}
		for day := localDay(rec.Start, zone); day.Unix() < rec.End; day = day.AddDate(0, 0, 1) {
			if !r.closed(day, now) {
				break // this day and the later ones are not closed
			}
			spans.add(rec.LocationID, rec.DeviceID, rec.Direction, zone, day)
		}
	}
	return spans
}

// closed reports whether the local day starting at day ended revision_after ago or more.
func (r *Reviser) closed(day, now time.Time) bool {
	return !day.AddDate(0, 0, 1).Add(r.after).After(now)
}

// revisedSpans are the closed days a change touches, by object and direction.
type revisedSpans map[string]*revisedSpan

// add notes a local day of the object (the device, when there is one, else the location).
func (s revisedSpans) add(location, device string, direction int8, zone *time.Location, day time.Time) {
	object := location
	if device != "" {
		object = device
	}
	key := object + "/" + ingest.DirectionName(direction)
	sp := s[key]
	if sp == nil {
		sp = &revisedSpan{object: object, location: location, device: device, direction: direction, zone: zone,
			days: map[string]time.Time{}}
		s[key] = sp
	}
	sp.days[day.Format(time.DateOnly)] = day
}

func localDay(unix int64, zone *time.Location) time.Time {
	t := time.Unix(unix, 0).In(zone)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, zone)
}

// zone is the location's time zone; nil when the location cannot be read (its records are
// refused or stored without events).
func (r *Reviser) zone(ctx context.Context, scope kwhouse.Scope, id string) *time.Location {
	l, err := r.catalog.LocationInfo(ctx, scope, id)
	if err != nil {
		return nil
	}
	z, err := catalog.LoadZone(l.Timezone)
	if err != nil {
		return nil
	}
	return z
}

// lock serialises revisions of the same locations (across processes), so one request's
// before and after are not interleaved with another's write.
func (r *Reviser) lock(ctx context.Context, spans revisedSpans) (func(), error) {
	locs := map[string]bool{}
	for _, sp := range spans {
		locs[sp.location] = true
	}
	names := make([]string, 0, len(locs))
	for l := range locs {
		names = append(names, l)
	}
	sort.Strings(names) // one order everywhere: no deadlock between two requests
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, l := range names {
		u, err := r.docs.Lock(ctx, "revise:"+l)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// maxPricedDays is the most local days one cost query prices: windows of at most
// query.MaxCostWindow, with room for a day made longer by a clock change.
const maxPricedDays = 399

// price returns the span's day items by local date (nil when they cannot be priced), in
// windows of at most maxPricedDays.
func (r *Reviser) price(ctx context.Context, scope kwhouse.Scope, sp *revisedSpan) map[string]query.CostItem {
	first, last := sp.bounds()
	end := last.AddDate(0, 0, 1)
	items := map[string]query.CostItem{}
	for from := first; from.Before(end); from = from.AddDate(0, 0, maxPricedDays) {
		to := from.AddDate(0, 0, maxPricedDays)
		if to.After(end) {
			to = end
		}
		out, err := r.pricer.Interval(ctx, scope, query.CostRequest{ObjectID: sp.object, Direction: ingest.DirectionName(sp.direction),
			Aggregation: query.AggregationDay, Start: from.UTC(), End: to.UTC()})
		if err != nil {
			if kwhouse.KindOf(err) != kwhouse.KindUnprocessable && kwhouse.KindOf(err) != kwhouse.KindInvalid {
				r.log.Warn("price days for cost.revised", "object", sp.object, "err", err)
			}
			return nil
		}
		sp.currency, sp.timezone = out.CurrencyCode, out.LocationTimezone
		for _, it := range out.Data {
			items[it.StartTime.Time().In(sp.zone).Format(time.DateOnly)] = it
		}
	}
	return items
}

func (sp *revisedSpan) bounds() (first, last time.Time) {
	for _, d := range sp.days {
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	return first, last
}

// report prices the spans again and stores a cost.revised event per changed day.
func (r *Reviser) report(ctx context.Context, scope kwhouse.Scope, spans revisedSpans) {
	for _, sp := range spans {
		if sp.before == nil {
			continue
		}
		after := r.price(ctx, scope, sp)
		for date := range sp.days {
			b, had := sp.before[date]
			a, has := after[date]
			if !had || !has || same(b, a) {
				continue
			}
			rev := Revision{LocationID: sp.location, DeviceID: sp.device, Direction: ingest.DirectionName(sp.direction),
				Date: date, Timezone: sp.timezone, CurrencyCode: sp.currency,
				Before: DayAmount{Energy: b.Energy, Tariff: b.Tariff}, After: DayAmount{Energy: a.Energy, Tariff: a.Tariff}}
			if _, err := catalog.RecordEvent(ctx, r.docs, scope, sp.object, EventRevised, rev); err != nil {
				r.log.Warn("store cost.revised", "object", sp.object, "date", date, "err", err)
			}
		}
	}
}

// same compares two days as the API shows them (6 decimals).
func same(a, b query.CostItem) bool {
	return a.Energy.ValueExact.Rounded() == b.Energy.ValueExact.Rounded() && a.Tariff.Value.Rounded() == b.Tariff.Value.Rounded()
}
