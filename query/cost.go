// Package query answers the read side: energy cost of meter records priced against
// tariffs, in ClickHouse. Each query is a small builder over embedded SQL templates.
package query

import (
	"embed"
	"fmt"
	"strings"
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
	// hours lists the UTC hour numbers a range [a, b) of Unix seconds touches (none when
	// b ≤ a: current ClickHouse evaluates it on rows a filter drops, where 18.16 did not).
	// (No lambda captures a column: 18.16 cannot resolve captures next to a JOIN.)
	"hours": func(a, b string) string {
		n := fmt.Sprintf("toUInt32(greatest(intDiv(%[2]s - 1, 3600) - intDiv(%[1]s, 3600) + 1, 0))", a, b)
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
	// pieceWh is the energy of the part of a record [rs, re) of e Wh that lies in secs of
	// its seconds: records are spread evenly over their time.
	"pieceWh": pieceWh,
	// dayWeight and reachMonths are the fingerprint pieces the schema's views render too
	// (chstore.DayWeight, chstore.ReachMonths).
	"dayWeight":   chstore.DayWeight,
	"reachMonths": chstore.ReachMonths,
	// untieredMoney is the money of a record [rs, re) of e Wh whose seconds inside price
	// segments, each times its price per kWh, sum to secsPrice: records are spread evenly
	// over their time (the one untiered rule; tiered money is bandMoney's).
	"untieredMoney": func(e, secsPrice string) string {
		return fmt.Sprintf("%s / (re - rs) * (%s) / 1000", e, secsPrice)
	},
	// integral is the running sum of price × seconds of component n's timeline from its
	// start to second t of segment i<n><end> (cost_arrays.go: base): differences of it are
	// what a record's seconds × prices sum to.
	"integral": func(n int, end, t string) string {
		return fmt.Sprintf("(arrayElement(s%[1]d_base, i%[1]d%[2]s) + arrayElement(s%[1]d_price, i%[1]d%[2]s) * (%[3]s - @t0))", n, end, t)
	},
	// findArgs are the arguments of arrays_find: component ca, in bucket b, compared by cmp.
	"findArgs": func(ca componentArrays, b, cmp string) findArgs {
		return findArgs{N: ca.N, Steps: ca.Steps, B: b, Cmp: cmp}
	},
	// uncovered is 0 when a component with tariffs (bit n - 1 of act for component n)
	// covers fewer seconds (cov1, cov2: import; cov3: export) than the records it prices
	// last (impLen, expLen), else 1: time without a price (a missing market price) is
	// priced 0 with confidence 0. Segments of one component never overlap, so covered
	// seconds fall short of record seconds exactly then, summed over any set of records.
	"uncovered": func(act, impLen, cov1, cov2, expLen, cov3 string) string {
		return uncovered(act, []coverage{{1, impLen, cov1}, {2, impLen, cov2}, {3, expLen, cov3}})
	},
	// repeats is 1 when two of a group's rows (those where cond holds, all when it is "")
	// have one key: fewer distinct keys than rows. A hash set of each group's keys costs
	// 18.16 less than sorting them (a fleet month's 900 untiered locations replayed on one
	// thread, 32-bit keys: by DAY about 15 ms of user and 25 ms of system CPU less, by
	// MONTH about 25 and 30 ms less; 64-bit ones, the tiered query's, about the same).
	"repeats": func(key, cond string) string {
		if cond == "" {
			return fmt.Sprintf("toUInt8(count() != uniqExact(%s))", key)
		}
		return fmt.Sprintf("toUInt8(countIf(%[2]s) != uniqExactIf(%[1]s, %[2]s))", key, cond)
	},
	// counterEnds is where a tier counter stands after each of a tier period's items, in
	// counter order: start (the sum of the pieces before the window, which precede every
	// piece of it) plus the running sum of field wh of the items. 18.16's lambdas cannot
	// capture columns, so start enters as the running sum's first term.
	"counterEnds": func(items, wh, start string) string {
		return fmt.Sprintf("arrayPopFront(arrayCumSum(arrayPushFront(arrayMap(x -> x.%s, %s), %s)))", wh, items, start)
	},
}).ParseFS(sqlFiles, "*.sql"))

// findArgs are what arrays_find renders: component N's segment of a second in bucket B.
type findArgs struct {
	N     int
	Steps []int
	B     string
	Cmp   string
}

func pieceWh(e, secs string) string { return fmt.Sprintf("%s * %s / (re - rs)", e, secs) }

// coverage is one component's part of uncovered: its number n (bit n - 1 of the tariff
// bits), the seconds of the records it prices and the seconds its segments cover.
type coverage struct {
	n               int
	length, covered string
}

// uncovered is the one rule of time a component leaves unpriced (the template function of
// the same name): 0 when a component in terms has tariffs (act) and covers fewer seconds
// than its records last, else 1. Terms that cannot hold are left out by the caller; none
// left is 1.
func uncovered(act string, terms []coverage) string {
	if len(terms) == 0 {
		return "1."
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = fmt.Sprintf("(bitAnd(%s, %d) != 0 AND %s > %s)", act, 1<<(t.n-1), t.length, t.covered)
	}
	return "if(" + strings.Join(parts, " OR ") + ", 0., 1.)"
}

var (
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
	// joinOnly prices every window through the JOIN of fleet.sql (tests compare the paths).
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
	// wholeStale is the most stale demand months an answer measures whole
	// (wholeStaleMonths; tests set 0 to measure every kept one from its changed days).
	wholeStale int
	// answers is the shared fleet answer cache (answer_cache.go; nil: off).
	answers *answerCache
}

// NewPricer returns a Pricer.
func NewPricer(db *chstore.DB, t *tariffs.Service, c *catalog.Catalog, cs *carbon.Store, now func() time.Time) *Pricer {
	return &Pricer{db: db, tariffs: t, catalog: c, carbon: cs, now: now, timelines: newTimelineCache(t),
		costArrays: tariffs.NewEpochMemo[costArrays](t, costArraysCacheSize), finalFrom: fleetFinalFrom,
		segmentRows: tariffs.NewEpochMemo[segmentCols](t, segmentRowsCacheSize), hints: newDirtyHints(),
		buckets: &bucketStore{versions: clockVersions{now: time.Now}}, maxRawItems: DefaultMaxRawItems, wholeStale: wholeStaleMonths}
}

// costRow is one row of an interval, session or instant answer: a reading or a local day.
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

// costArgs are what one location's cost question asks (interval, session, instant): the
// scope, the records, the plan that prices them and how they are bucketed.
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

// named binds what the "segments" of one location's plan read (segment_rows).
func (a costArgs) named() []any {
	return append(bindPlans(map[string]tariffs.Plan{a.location: a.plan}).named(),
		chstore.Named("account", a.scope.AccountID), chstore.Named("live", a.scope.LiveByte()),
		chstore.Named("range_from_pad", uint32(max(a.plan.RangeStart-32*86400, 0))),
		chstore.Named("range_to", uint32(a.plan.RangeEnd)))
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

// pricingShape picks the parts of the cost templates a query needs (fleet.sql,
// fleet_arrays.sql, readings.sql, cost_segments.sql).
type pricingShape struct {
	Aggregation              string // NONE, DAY, MONTH, or RECORD: a row per reading
	Devices, Tiered, Markets bool
	Device                   bool              // one device's readings (@device)
	ExtSegments              bool              // fleet.sql: the segments come as the external table _segs
	Dedup                    string            // how versions of a reading become one: dedupNone, dedupArgMax, dedupFinal
	Comps                    []componentArrays // fleet_arrays.sql: the packed timelines
	Refs                     bool              // each reading's session and record references (RECORD)
	Session                  bool              // only the readings of @session are priced
	Instant                  bool              // the request's record (@i_*) is priced as if stored
	Cluster                  bool              // meter_records is distributed: readings.sql adds the arrays after reading
}

// Uncovered is uncovered for fleet_arrays.sql (act: the group's tariff bits): a component
// can leave a second unpriced only where some packed timeline has its tariffs and not
// every timeline prices its every second (Gapless), so the others' sums are not taken.
func (s pricingShape) Uncovered(act string) string {
	var terms []coverage
	for _, c := range s.Comps {
		if !c.Tariffed || (c.Present && c.Gapless) {
			continue
		}
		covered := "0"
		if c.Present {
			covered = fmt.Sprintf("sumIf(cov%d, tr = %d)", c.N, c.Rate())
		}
		terms = append(terms, coverage{c.N, fmt.Sprintf("sumIf(re - rs, tr = %d)", c.Rate()), covered})
	}
	return uncovered(act, terms)
}

// Summed is sum, the aggregate of component n's per-record column in fleet_arrays.sql,
// or zero, the constant that column is, when no packed timeline has component n.
func (s pricingShape) Summed(n int, sum, zero string) string {
	for _, c := range s.Comps {
		if c.N == n && c.Present {
			return sum
		}
	}
	return zero
}

// numberedLocations binds what gives every reading its location's number li (fleet_li,
// readings.sql): ids in order, numbered from 1. Every statement that reads the readings
// binds it, whether or not it reads li.
func numberedLocations(ids []string) []any {
	numbers := make([]uint32, len(ids))
	for i := range numbers {
		numbers[i] = uint32(i + 1)
	}
	return []any{chstore.Named("act_loc", ids), chstore.Named("act_n", numbers)}
}
