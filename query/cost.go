// Package query answers the read side: energy cost of meter records priced against
// tariffs, in ClickHouse. Each query is a small builder over embedded SQL templates.
package query

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"text/template"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/tariffs"
)

//go:embed *.sql
var sqlFiles embed.FS

// templates hold the SQL; the only templated parts are fixed fragments (which bucket,
// the hour-bucket expression), never values: values are bound with chstore.Named.
var templates = template.Must(template.New("sql").Funcs(template.FuncMap{
	// hours lists the UTC hour numbers a range [a, b) of Unix seconds touches.
	// (No lambda captures a column: 18.16 cannot resolve captures next to a JOIN.)
	"hours": func(a, b string) string {
		n := fmt.Sprintf("toUInt32(intDiv(%[2]s - 1, 3600) - intDiv(%[1]s, 3600) + 1)", a, b)
		first := fmt.Sprintf("toUInt32(intDiv(%s, 3600))", a)
		return fmt.Sprintf("arrayMap((x, f) -> toUInt32(x + f), range(%[1]s), arrayResize([%[2]s], %[1]s, %[2]s))", n, first)
	},
	// bandMoney is the money of wh Wh counted over [cum - wh, cum) of a tier period: the
	// part inside each band [lo, hi) at the band's price per kWh (the one tier rule). The
	// lambda takes cum and wh as arrays: 18.16 cannot capture columns there.
	"bandMoney": func(hi, price, cum, wh string) string {
		return fmt.Sprintf("arraySum(arrayMap((h, l, p, c, w) -> greatest(0., least(c, h) - greatest(c - w, l)) * p, "+
			"%[1]s, arrayPopBack(arrayPushFront(%[1]s, 0.)), %[2]s, arrayResize([%[3]s], length(%[1]s), %[3]s), "+
			"arrayResize([%[4]s], length(%[1]s), %[4]s))) / 1000", hi, price, cum, wh)
	},
	// counterEnds is where a tier counter stands after each of a tier period's items, in
	// counter order: start (the sum of the pieces before the window, which precede every
	// piece of it) plus the running sum of field wh of the items. 18.16's lambdas cannot
	// capture columns, so start enters as the running sum's first term.
	"counterEnds": func(items, wh, start string) string {
		return fmt.Sprintf("arrayPopFront(arrayCumSum(arrayPushFront(arrayMap(x -> x.%s, %s), %s)))", wh, items, start)
	},
}).ParseFS(sqlFiles, "*.sql"))

var (
	costStmt            = chstore.Register("query.cost", "cost.sql: records priced and summed per key")
	deviceLocationsStmt = chstore.Register("query.device_locations", `SELECT DISTINCT location_id FROM meter_records
		WHERE account_id = ? AND live_mode = ? AND device_id = ? AND direction = ?
		  AND start_time >= toDateTime(?) AND start_time < toDateTime(?) LIMIT 2`)
	// session_reference_id is not in the sorting key: this reads the account's records.
	sessionStmt = chstore.Register("query.session", `SELECT location_id, device_id, min(start_time), max(start_time), max(end_time)
		FROM meter_records WHERE account_id = ? AND live_mode = ? AND session_reference_id = ? AND direction = ?
		GROUP BY location_id, device_id LIMIT 2`)
)

// Pricer answers every question about prices: the cost of meter records (interval,
// session, instant, fleet), price timelines and slots.
type Pricer struct {
	db        *chstore.DB
	tariffs   *tariffs.Service
	catalog   *catalog.Catalog
	carbon    *carbon.Store
	now       func() time.Time
	timelines *tariffs.EpochMemo[priceSpan]
	// costArrays holds the arrays of recent cost windows (cost_arrays.go).
	costArrays *tariffs.EpochMemo[costArrays]
	// segmentRows holds the segments of recent JOIN windows (segment_rows.go).
	segmentRows *tariffs.EpochMemo[segmentCols]
	// joinOnly prices every window through the JOINs of cost.sql and fleet.sql (tests
	// compare the paths).
	joinOnly bool
	// finalFrom is the number of locations from which fleet_arrays.sql deduplicates with FINAL.
	finalFrom int
	// dedupFirst deduplicates readings in every fleet query instead of only where a first,
	// undeduplicated read found two versions of one (tests compare both ways).
	dedupFirst bool
	// hints remembers scopes whose first fleet reads found most locations dirty (fleet_hints.go).
	hints *dirtyHints
	// buckets keeps priced fleet buckets in ClickHouse (buckets.go; nil: every fleet
	// bucket is priced afresh).
	buckets *bucketStore
	// maxRawItems bounds the records of an unaggregated interval answer (SetMaxRawItems).
	maxRawItems int
}

// NewPricer returns a Pricer.
func NewPricer(db *chstore.DB, t *tariffs.Service, c *catalog.Catalog, cs *carbon.Store, now func() time.Time) *Pricer {
	return &Pricer{db: db, tariffs: t, catalog: c, carbon: cs, now: now, timelines: newTimelineCache(t),
		costArrays: tariffs.NewEpochMemo[costArrays](t, costArraysCacheSize), finalFrom: fleetFinalFrom,
		segmentRows: tariffs.NewEpochMemo[segmentCols](t, segmentRowsCacheSize), hints: newDirtyHints(),
		buckets: &bucketStore{versions: clockVersions{now: time.Now}}, maxRawItems: DefaultMaxRawItems}
}

// costRow is one row of cost.sql.
type costRow struct {
	Key, KeyEnd        uint32
	TariffRate         uint8 // 1 IMPORT, 2 EXPORT, 3 LOCAL per record; 0 for a day
	Session, Reference string
	Energy, Money      float64
	MoneyCommodity     float64
	MoneyNonCommodity  float64
	Confidence         float64
	NImport, NExport   uint64
	Carbon             carbon.Weighed // filled in Go when carbon is asked for
}

// costArgs are the arguments of one cost query: the scope, the records asked for, the
// plan that prices them and how they are bucketed; named() binds them.
type costArgs struct {
	scope     kwhouse.Scope
	location  string
	device    string
	direction string
	session   string
	w0, w1    int64
	plan      tariffs.Plan
	zone      string
	daily     bool
	instant   *ingest.Record // priced from the request instead of the table
	maxRows   int            // more rows than this: errTooManyItems (0: no bound)
}

func (a costArgs) named() []any {
	pb := bindPlans(map[string]tariffs.Plan{a.location: a.plan})
	live := a.scope.LiveByte()
	in := a.instant
	if in == nil {
		in = &ingest.Record{}
	}
	return append([]any{
		chstore.Named("i_rs", uint32(in.Start)), chstore.Named("i_re", uint32(in.End)),
		chstore.Named("i_e", in.EnergyWh), chstore.Named("i_rc", in.Confidence), chstore.Named("i_tr", int32(in.TariffRate)),
		chstore.Named("i_sess", in.SessionRef), chstore.Named("i_ref", in.RecordRef),
		chstore.Named("account", a.scope.AccountID), chstore.Named("live", live),
		chstore.Named("location", a.location), chstore.Named("device", a.device),
		chstore.Named("dir", a.direction), chstore.Named("session", a.session),
		chstore.Named("w0", uint32(a.w0)), chstore.Named("w1", uint32(a.w1)),
		chstore.Named("lookback", uint32(max(a.plan.Lookback, 0))),
		chstore.Named("range_from_pad", uint32(max(a.plan.RangeStart-32*86400, 0))),
		chstore.Named("range_to", uint32(a.plan.RangeEnd)),
		chstore.Named("active", pb.active[a.location]), chstore.Named("tz", a.zone),
	}, pb.named()...)
}

// planBindings are the tariffs of several locations' plans as the arrays the "periods"
// and "segments" templates of cost_segments.sql read.
type planBindings struct {
	tids, markets           []string
	srcTid, srcLoc          []string
	srcComp, srcFrom, srcTo []uint32
	srcConf                 []float64
	active                  map[string][]int32 // per location: 0 and the components with tariffs
}

// bindPlans lists the sources of plans (by location).
func bindPlans(plans map[string]tariffs.Plan) planBindings {
	var pb planBindings
	pb.active = make(map[string][]int32, len(plans))
	seen := map[string]bool{}
	for loc, p := range plans {
		active := []int32{0}
		for _, comp := range allComponents {
			list := p.Sources[comp]
			if len(list) > 0 {
				active = append(active, int32(comp))
			}
			for _, s := range list {
				pb.srcTid, pb.srcLoc = append(pb.srcTid, s.Tariff.RatesID()), append(pb.srcLoc, loc)
				pb.srcComp, pb.srcConf = append(pb.srcComp, uint32(comp)), append(pb.srcConf, s.Confidence)
				pb.srcFrom, pb.srcTo = append(pb.srcFrom, uint32(s.From)), append(pb.srcTo, uint32(s.To))
			}
		}
		pb.active[loc] = active
		pb.tids = append(pb.tids, p.RatesIDs...)
		for _, m := range p.Markets {
			if !seen[m] {
				seen[m] = true
				pb.markets = append(pb.markets, m)
			}
		}
	}
	return pb
}

// named binds the arrays; an empty list would be untyped in SQL, so a value that
// matches nothing stands in for it.
func (pb planBindings) named() []any {
	orNone := func(l []string) []string {
		if len(l) == 0 {
			return []string{"-"}
		}
		return l
	}
	if len(pb.srcTid) == 0 {
		pb.srcTid, pb.srcLoc, pb.srcComp, pb.srcFrom, pb.srcTo, pb.srcConf = []string{"-"}, []string{"-"}, []uint32{0}, []uint32{0}, []uint32{0}, []float64{0.5}
	}
	return []any{chstore.Named("tids", chstore.Set(orNone(pb.tids))), chstore.Named("markets", chstore.Set(orNone(pb.markets))),
		chstore.Named("src_tid", pb.srcTid), chstore.Named("src_loc", pb.srcLoc), chstore.Named("src_comp", pb.srcComp),
		chstore.Named("src_from", pb.srcFrom), chstore.Named("src_to", pb.srcTo), chstore.Named("src_conf", pb.srcConf)}
}

// costShape picks the parts of cost.sql a query needs.
type costShape struct {
	Daily, Instant, Markets, Tiered, Arrays bool
	ExtSegments                             bool // the JOIN reads its segments from the external table _segs
	Refs                                    bool // records' session and record references are needed
	Comps                                   []componentArrays
	ActBits                                 uint16 // bit 1 << (n - 1): component n has tariffs (arrays)
}

func (c *Pricer) run(ctx context.Context, a costArgs) ([]costRow, error) {
	shape := costShape{Daily: a.daily, Instant: a.instant != nil, Markets: len(a.plan.Markets) > 0, Tiered: a.plan.Tiered,
		Refs: !a.daily || a.session != ""}
	args := a.named()
	if !a.plan.Tiered && !c.joinOnly {
		arrays, err := c.arraySegments(ctx, a)
		if err != nil {
			return nil, err
		}
		if arrays.ok {
			shape.Arrays, shape.Comps = true, arrays.comps
			// Components with tariffs, whether or not they have segments in the window (a
			// market without prices leaves its records unpriced, confidence 0, as the JOIN does).
			shape.ActBits = a.plan.TariffBits()
			args = append(args, arrays.named()...)
		}
	}
	if !shape.Arrays {
		// The JOIN reads the stored rate periods, priced once per plan and window (segment_rows).
		if err := c.tariffs.EnsureRates(ctx, a.scope, a.plan); err != nil {
			return nil, err
		}
		segs, err := c.segmentTable(ctx, a)
		if err != nil {
			return nil, err
		}
		ctx, shape.ExtSegments = chstore.WithExternal(ctx, segs), true
	}
	var buf bytes.Buffer
	name := "cost"
	if shape.Arrays {
		name = "cost_arrays"
	}
	if err := templates.ExecuteTemplate(&buf, name, shape); err != nil {
		return nil, fmt.Errorf("render cost query: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := c.db.Query(ctx, costStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("cost query: %w", err)
	}
	defer rows.Close()
	var out []costRow
	for rows.Next() {
		if a.maxRows > 0 && len(out) == a.maxRows {
			cancel() // the query stops; the rows read so far are dropped
			return nil, errTooManyItems(a.maxRows, a.session)
		}
		var r costRow
		if err := rows.Scan(&r.Key, &r.KeyEnd, &r.TariffRate, &r.Session, &r.Reference, &r.Energy, &r.Money, &r.MoneyCommodity,
			&r.MoneyNonCommodity, &r.Confidence, &r.NImport, &r.NExport); err != nil {
			return nil, fmt.Errorf("scan cost row: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
