package query

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/ingest"
)

// CarbonValue is FlatPeak's carbon object of a cost: grams CO2e and their confidence.
type CarbonValue struct {
	Value      Amount `json:"value"`
	Confidence Amount `json:"confidence"`
}

func carbonValue(w carbon.Weighed) *CarbonValue {
	return &CarbonValue{Value: Amount(w.Grams), Confidence: Amount(w.Confidence)}
}

var carbonRecordsStmt = chstore.Register("query.carbon_records", "cost_carbon.sql: the asked records of one scope with their local day")

// carbonRecord is one record to weigh.
type carbonRecord struct {
	rs, re     uint32
	wh, conf   float64
	tariffRate uint8
	day        uint32
}

// carbonKey names the cost row a record adds to: the record itself, or its local day.
type carbonKey struct {
	k, kend uint32
	tr      uint8
}

// weighCarbon sets the carbon of every cost row: each of its records weighed by the
// intensity series of the location's country (carbon.Weigh), summed as the rows sum the
// records' money. A LOCAL record draws nothing from the grid: 0 g.
func (c *Pricer) weighCarbon(ctx context.Context, a costArgs, loc catalog.Location, rows []costRow) error {
	recs, err := c.carbonRecords(ctx, a)
	if err != nil {
		return err
	}
	// A record starting in the window may reach a record span past its end.
	ivs, err := c.seriesIntervals(ctx, a.scope, loc, a.w0, a.w1+int64(ingest.MaxRecordSpan.Seconds()))
	if err != nil {
		return err
	}
	byKey := map[carbonKey]carbon.Weighed{}
	for _, r := range recs {
		key := carbonKey{k: r.rs, kend: r.re, tr: r.tariffRate}
		if a.daily {
			key = carbonKey{k: r.day}
		}
		sum, ok := byKey[key]
		if !ok {
			sum = carbon.None
		}
		byKey[key] = sum.Add(weighRecord(r, ivs))
	}
	for i := range rows {
		rows[i].Carbon = carbon.None
		if w, ok := byKey[carbonKey{k: rows[i].Key, kend: rows[i].KeyEnd, tr: rows[i].TariffRate}]; ok {
			rows[i].Carbon = w
		}
	}
	return nil
}

func weighRecord(r carbonRecord, ivs []carbon.Interval) carbon.Weighed {
	if r.tariffRate == uint8(ingest.Local) {
		return carbon.Weighed{Confidence: r.conf}
	}
	w := carbon.Weigh(int64(r.rs), int64(r.re), r.wh, ivs)
	w.Confidence = min(w.Confidence, r.conf)
	return w
}

// carbonRecords reads the records a's cost query prices (the instant record as given).
func (c *Pricer) carbonRecords(ctx context.Context, a costArgs) ([]carbonRecord, error) {
	if in := a.instant; in != nil {
		return []carbonRecord{{rs: uint32(in.Start), re: uint32(in.End), wh: in.EnergyWh, conf: in.Confidence,
			tariffRate: uint8(in.TariffRate)}}, nil
	}
	// The readings the cost query prices (readings.sql), untiered: of the asked direction,
	// from the window's start.
	one := oneScope{device: a.device, session: a.session}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "carbon_records", one.shape(pricingShape{Dedup: dedupArgMax})); err != nil {
		return nil, fmt.Errorf("render carbon records query: %w", err)
	}
	args := append(one.named(), chstore.Named("account", a.scope.AccountID), chstore.Named("live", a.scope.LiveByte()),
		chstore.Named("locs", chstore.Set([]string{a.location})), chstore.Named("dir", a.direction),
		chstore.Named("lookback", uint32(a.w0)), chstore.Named("w1", uint32(a.w1)), chstore.Named("tz", a.zone))
	args = append(args, numberedLocations([]string{a.location})...)
	rows, err := c.db.Query(ctx, carbonRecordsStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("carbon records: %w", err)
	}
	defer rows.Close()
	var out []carbonRecord
	for rows.Next() {
		var r carbonRecord
		if err := rows.Scan(&r.rs, &r.re, &r.wh, &r.conf, &r.tariffRate, &r.day); err != nil {
			return nil, fmt.Errorf("scan carbon record: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// seriesIntervals returns the intensities of the location's series over [from, to): the
// one it names, else its country's default.
func (c *Pricer) seriesIntervals(ctx context.Context, scope kwhouse.Scope, loc catalog.Location, from, to int64) ([]carbon.Interval, error) {
	series := loc.CarbonSeriesID
	if series == "" {
		var err error
		if series, err = c.carbon.DefaultFor(ctx, scope, countryOf(loc)); err != nil {
			return nil, err
		}
	}
	return c.carbon.Intervals(ctx, scope, series, from, to)
}

func countryOf(loc catalog.Location) string {
	if loc.PostalAddress == nil {
		return ""
	}
	return loc.PostalAddress.CountryCode
}
