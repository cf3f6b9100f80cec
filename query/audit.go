package query

import (
	"context"
	"math"
	"reflect"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// TariffRateAudit is FlatPeak's TariffRateAudit: the price timeline of a location, each
// period with how its price came about.
type TariffRateAudit struct {
	LocationAnswer
	Request       AuditRequestEcho  `json:"request"`
	MarketSources []string          `json:"market_sources"`
	Data          []AuditItem       `json:"data"`
	TimeCreated   catalog.Timestamp `json:"time_created"`
	AccountID     string            `json:"account_id"`
}

// AuditRequestEcho repeats an audit request.
type AuditRequestEcho struct {
	Direction string            `json:"direction"`
	StartTime catalog.Timestamp `json:"start_time"`
	EndTime   catalog.Timestamp `json:"end_time"`
}

// AuditItem is one stretch of constant price and constant explanation.
type AuditItem struct {
	ValidFrom  catalog.Timestamp `json:"valid_from"`
	ValidTo    catalog.Timestamp `json:"valid_to"`
	TariffRate AuditRate         `json:"tariff_rate"`
}

// AuditRate is the price of a stretch, by component.
type AuditRate struct {
	Commodity    *AuditComponent `json:"commodity,omitempty"` // import or export commodity
	NonCommodity *AuditComponent `json:"non_commodity,omitempty"`
	Total        Amount          `json:"total"`
	Confidence   Amount          `json:"confidence"`
}

// AuditComponent explains one component's price. FlatPeak's fields: market (the market
// price), fixed (a schedule tariff's price, or a market tariff's surcharge_fixed),
// percentage (surcharge_percentage), tier (the kWh the applied band starts at: the
// timeline prices the first band) and aggregate (the component's price). The rest are
// kwhouse's own.
type AuditComponent struct {
	Market     *Amount `json:"market,omitempty"`
	Fixed      *Amount `json:"fixed,omitempty"`
	Percentage *Amount `json:"percentage,omitempty"`
	Tier       Amount  `json:"tier"`
	Aggregate  Amount  `json:"aggregate"`

	TariffID           string      `json:"tariff_id"`
	Entry              string      `json:"entry"` // the schedule entry: schedule[0].days_and_hours[1].hours[2]
	MarketID           string      `json:"market_id,omitempty"`
	MarketPriceMissing bool        `json:"market_price_missing,omitempty"` // priced 0 with confidence 0
	Contract           string      `json:"contract"`                       // in_contract or extrapolated
	DistanceDays       *int64      `json:"contract_distance_days,omitempty"`
	Confidence         Amount      `json:"confidence"`
	ConfidenceRule     string      `json:"confidence_rule"`
	Bands              []AuditBand `json:"bands,omitempty"` // a tiered rate's bands
}

// AuditBand is one band of a tiered rate.
type AuditBand struct {
	FromKWh             Amount  `json:"from_kwh"`
	ToKWh               *Amount `json:"to_kwh"`
	Fixed               *Amount `json:"fixed,omitempty"`
	SurchargeFixed      *Amount `json:"surcharge_fixed,omitempty"`
	SurchargePercentage *Amount `json:"surcharge_percentage,omitempty"`
}

// Contract states of an audited price.
const (
	InContract   = "in_contract"
	Extrapolated = "extrapolated"
)

// Audit answers GET /tariffs/audit/{location_id}: the timeline of Rates, cut also
// wherever the tariff, schedule entry, contract step or market interval behind a price
// changes, each stretch explained component by component. Final prices and confidences
// are the timeline's own.
func (c *Pricer) Audit(ctx context.Context, scope kwhouse.Scope, req RatesRequest) (TariffRateAudit, error) {
	tr := timelineRequest{scope: scope, locationID: req.LocationID, direction: req.Direction, start: req.Start, end: req.End}
	loc, periods, err := c.timeline(ctx, tr)
	if err != nil {
		return TariffRateAudit{}, err
	}
	w0, w1 := req.Start.Unix(), req.End.Unix()
	plan, err := c.tariffs.PlanPrices(ctx, scope, loc.ID, w0, w1)
	if err != nil {
		return TariffRateAudit{}, err
	}
	dir := directionOr(req.Direction)
	out := TariffRateAudit{LocationAnswer: newLocationAnswer("tra_", "tariff_rate_audit", scope, loc, dir), MarketSources: []string{},
		Request:     AuditRequestEcho{Direction: dir, StartTime: catalog.Timestamp(req.Start), EndTime: catalog.Timestamp(req.End)},
		TimeCreated: catalog.Timestamp(c.now()), AccountID: scope.AccountID, Data: []AuditItem{}}
	comps := map[int][]explainedSource{}
	for _, comp := range componentsOf(dir, plan) {
		if comps[comp], err = c.explainSources(ctx, scope, plan.Sources[comp], w0, w1); err != nil {
			return TariffRateAudit{}, err
		}
	}
	out.MarketSources = marketsOf(comps)
	for _, cut := range auditCuts(periods, comps, w0, w1) {
		p := periodAt(periods, cut[0])
		rate := AuditRate{Total: Amount(p.Rate), Confidence: Amount(p.Confidence)}
		for comp, list := range comps {
			ac := explainAt(list, cut[0], p, comp)
			if comp == tariffs.CompImportNonCommodity {
				rate.NonCommodity = ac
			} else {
				rate.Commodity = ac
			}
		}
		it := AuditItem{ValidFrom: unixTS(cut[0]), ValidTo: unixTS(cut[1]), TariffRate: rate}
		if n := len(out.Data); n > 0 && reflect.DeepEqual(out.Data[n-1].TariffRate, rate) && time.Time(out.Data[n-1].ValidTo).Equal(time.Time(it.ValidFrom)) {
			out.Data[n-1].ValidTo = it.ValidTo
			continue
		}
		out.Data = append(out.Data, it)
	}
	return out, nil
}

// explainedSource is a source of one component with its schedule stretches and, for a
// market tariff, its market's prices.
type explainedSource struct {
	src     tariffs.Source
	stretch []tariffs.Explained
	market  []tariffs.MarketInterval
}

func (c *Pricer) explainSources(ctx context.Context, scope kwhouse.Scope, srcs []tariffs.Source, w0, w1 int64) ([]explainedSource, error) {
	var out []explainedSource
	for _, s := range srcs {
		a, b := max(s.From, w0), min(s.To, w1)
		if a >= b {
			continue
		}
		es := explainedSource{src: s}
		var err error
		if es.stretch, err = s.Tariff.Explain(ctx, a, b); err != nil {
			return nil, err
		}
		if s.Tariff.MarketRates {
			if es.market, err = c.tariffs.MarketPrices(ctx, scope, s.Tariff.MarketID, a, b); err != nil {
				return nil, err
			}
		}
		es.src.From, es.src.To = a, b
		out = append(out, es)
	}
	return out, nil
}

func marketsOf(comps map[int][]explainedSource) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, list := range comps {
		for _, es := range list {
			if id := es.src.Tariff.MarketID; es.src.Tariff.MarketRates && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	sort.Strings(out)
	return out
}

// auditCuts are the stretches of [w0, w1) between every change of price, source,
// schedule stretch and market interval.
func auditCuts(periods []RatePeriod, comps map[int][]explainedSource, w0, w1 int64) [][2]int64 {
	cuts := map[int64]bool{w0: true, w1: true}
	for _, p := range periods {
		cuts[p.Start], cuts[p.End] = true, true
	}
	for _, list := range comps {
		for _, es := range list {
			cuts[es.src.From], cuts[es.src.To] = true, true
			for _, st := range es.stretch {
				cuts[st.Start], cuts[st.End] = true, true
			}
			for _, m := range es.market {
				cuts[m.Start], cuts[m.End] = true, true
			}
		}
	}
	points := make([]int64, 0, len(cuts))
	for t := range cuts {
		if t >= w0 && t <= w1 {
			points = append(points, t)
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	out := make([][2]int64, 0, len(points))
	for i := 0; i+1 < len(points); i++ {
		out = append(out, [2]int64{points[i], points[i+1]})
	}
	return out
}

func periodAt(periods []RatePeriod, t int64) RatePeriod {
	i := sort.Search(len(periods), func(k int) bool { return periods[k].End > t })
	if i < len(periods) && periods[i].Start <= t {
		return periods[i]
	}
	return RatePeriod{}
}

// explainAt explains component comp at t, whose timeline period is p.
func explainAt(list []explainedSource, t int64, p RatePeriod, comp int) *AuditComponent {
	i := sort.Search(len(list), func(k int) bool { return list[k].src.To > t })
	if i == len(list) || list[i].src.From > t {
		return nil
	}
	es := list[i]
	tf := es.src.Tariff
	ac := &AuditComponent{TariffID: tf.ID, Confidence: Amount(es.src.Confidence), Aggregate: Amount(p.Commodity)}
	if comp == tariffs.CompImportNonCommodity {
		ac.Aggregate = Amount(p.NonCommodity)
	}
	explainContract(ac, tf, t)
	j := sort.Search(len(es.stretch), func(k int) bool { return es.stretch[k].End > t })
	if j == len(es.stretch) || es.stretch[j].Start > t {
		return ac
	}
	st := es.stretch[j]
	ac.Entry, ac.Bands = st.Entry, auditBands(st.Bands, tf.MarketRates)
	if !tf.MarketRates {
		ac.Fixed = amountPtr(st.Bands.Fixed[0])
		return ac
	}
	ac.MarketID = tf.MarketID
	ac.Fixed, ac.Percentage = amountPtr(st.Bands.SurFix[0]), amountPtr(st.Bands.SurPct[0])
	k := sort.Search(len(es.market), func(k int) bool { return es.market[k].End > t })
	if k == len(es.market) || es.market[k].Start > t {
		ac.MarketPriceMissing, ac.Confidence = true, 0
		ac.ConfidenceRule = "0: no market price for this time"
		return ac
	}
	m := es.market[k]
	ac.Market = amountPtr(m.Price)
	if m.Confidence < es.src.Confidence {
		ac.Confidence = Amount(m.Confidence)
		ac.ConfidenceRule = "the market price's own confidence, below the contract's"
	}
	return ac
}

// explainContract states whether t lies inside the tariff's contract or is priced from
// the nearest one, with the confidence rule of tariffs.ExtrapolatedConfidence.
func explainContract(ac *AuditComponent, tf *tariffs.Tariff, t int64) {
	cs, ce := tf.Contract()
	if t >= cs && t < ce {
		ac.Contract, ac.ConfidenceRule = InContract, "1: inside the contract"
		return
	}
	d := cs - t
	if t >= ce {
		d = t - ce
	}
	days := d / 86400
	ac.Contract, ac.DistanceDays = Extrapolated, &days
	ac.ConfidenceRule = "max(0.2, 0.8 − 0.2 × ⌊d / 90 days⌋), d the distance to the contract"
}

// auditBands lists a tiered rate's bands: their prices (schedule tariffs) or surcharges
// (market tariffs).
func auditBands(b tariffs.Bands, market bool) []AuditBand {
	if len(b.UpperWh) < 2 {
		return nil
	}
	out := make([]AuditBand, len(b.UpperWh))
	from := 0.0
	for i, hi := range b.UpperWh {
		out[i] = AuditBand{FromKWh: Amount(from / 1000)}
		if !math.IsInf(hi, 1) {
			out[i].ToKWh = amountPtr(hi / 1000)
		}
		if market {
			out[i].SurchargeFixed, out[i].SurchargePercentage = amountPtr(b.SurFix[i]), amountPtr(b.SurPct[i])
		} else {
			out[i].Fixed = amountPtr(b.Fixed[i])
		}
		from = hi
	}
	return out
}

func amountPtr(v float64) *Amount {
	a := Amount(v)
	return &a
}
