package query

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/tariffs"
)

// aggregationRecord buckets a fleet query by reading: the rows of an interval answer
// without aggregation (never a fleet request's: Validate refuses it).
const aggregationRecord = "RECORD"

// oneScope narrows a fleet query to what an interval, session or instant question asks of
// one location (the zero value asks nothing more of a fleet): /costs/interval is a
// one-location fleet, so every answer is priced by the same queries.
type oneScope struct {
	device  string         // one device's readings ("": the location's own, or the fleet's)
	session string         // only this session's readings
	instant *ingest.Record // the request's record, priced as if stored
	refs    bool           // each reading's session and record references (RECORD rows)
	maxRows int            // more rows than this: errTooManyItems (0: no bound)
}

// shape adds the scope's parts to a query's shape.
func (o oneScope) shape(s pricingShape) pricingShape {
	s.Device, s.Devices = o.device != "", s.Devices || o.device != ""
	s.Session, s.Instant, s.Refs = o.session != "", o.instant != nil, o.refs
	return s
}

// named binds what the scope's parts read.
func (o oneScope) named() []any {
	in := o.instant
	if in == nil {
		in = &ingest.Record{}
	}
	return []any{chstore.Named("device", o.device), chstore.Named("session", o.session),
		chstore.Named("location", in.LocationID),
		chstore.Named("i_rs", uint32(in.Start)), chstore.Named("i_re", uint32(in.End)),
		chstore.Named("i_e", in.EnergyWh), chstore.Named("i_rc", in.Confidence), chstore.Named("i_tr", int32(in.TariffRate)),
		chstore.Named("i_sess", in.SessionRef), chstore.Named("i_ref", in.RecordRef)}
}

// priceOne prices one location's question as a fleet of that one location: by reading, or
// by local day (months are folded from days in Go), always deduplicated (one location's
// readings are few: argMax at once, not after a first read). An instant record is priced
// by the JOIN, which runs its tier counter over the stored readings before it.
func (c *Pricer) priceOne(ctx context.Context, a costArgs) ([]costRow, error) {
	if err := c.tariffs.EnsureRates(ctx, a.scope, a.plan); err != nil {
		return nil, err
	}
	req := FleetRequest{Start: time.Unix(a.w0, 0).UTC(), End: time.Unix(a.w1, 0).UTC(), Direction: a.direction,
		Aggregation: AggregationDay, GroupBy: GroupLocation,
		one: oneScope{device: a.device, session: a.session, instant: a.instant, maxRows: a.maxRows}}
	if !a.daily {
		req.Aggregation, req.one.refs = aggregationRecord, true
	}
	b := fleetBatch{zone: a.zone, tiered: a.plan.Tiered, ids: []string{a.location}}
	plans := map[string]tariffs.Plan{a.location: a.plan}
	tasks := []fleetTask{{batch: b}}
	if a.instant != nil {
		req.End = req.Start // stored readings before the record run its counter
	} else {
		var err error
		if tasks, err = c.fleetTasks(ctx, a.scope, b, plans); err != nil {
			return nil, err
		}
	}
	var rows []costRow
	for _, t := range tasks {
		sums, err := c.fleetQuery(ctx, a.scope, req, t, t.batch.ids, dedupArgMax, plans)
		if err != nil {
			return nil, err
		}
		for _, s := range sums {
			rows = append(rows, costRow{Key: s.Key, KeyEnd: s.KeyEnd, TariffRate: s.TariffRate, Session: s.Session,
				Reference: s.Reference, Energy: s.Energy, Money: s.Money, MoneyCommodity: s.MoneyCom,
				MoneyNonCommodity: s.MoneyNon, Confidence: s.Confidence, NImport: s.NImport, NExport: s.NExport})
		}
	}
	return rows, nil
}
