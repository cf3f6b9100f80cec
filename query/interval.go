package query

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
)

// Aggregations of a cost response.
const (
	AggregationNone  = ""
	AggregationDay   = "DAY"
	AggregationMonth = "MONTH"
)

// MaxCostWindow is the longest window one cost request may price.
const MaxCostWindow = 400 * 24 * time.Hour

// CostRequest asks for the cost of a scope's records starting in [Start, End).
type CostRequest struct {
	ObjectID    string // loc_… (location-level records) or dev_… (that device's records)
	Direction   string
	Aggregation string
	CostFlags
	IncludeCharges bool // the bill's charges (charges.go); location ids only
	Start, End     time.Time
	Session        string // only records of this session_reference_id, when set
}

// CostFlags add detail to a cost answer.
type CostFlags struct {
	IncludeTariff bool // rate and components on every tariff object
	IncludeCarbon bool // carbon objects and carbon_units (docs/costs.md, "Carbon intensity")
}

// Amount is money or energy, written with at most 6 decimals.
type Amount float64

// MarshalJSON implements json.Marshaler; an amount that is not a finite number (JSON
// has none) is an error.
func (a Amount) MarshalJSON() ([]byte, error) { return a.AppendText(nil) }

// AppendText appends the amount as its JSON is to b (CSV cells are written so too).
func (a Amount) AppendText(b []byte) ([]byte, error) {
	if math.IsNaN(float64(a)) || math.IsInf(float64(a), 0) {
		return nil, fmt.Errorf("amount %v is not a finite number", float64(a))
	}
	micros := a.micros()
	if math.Abs(micros) < 1e15 {
		// Below 10⁹ two amounts a millionth apart are two floats, so the digits of the whole
		// millionths are the float's shortest form, as strconv writes it: written from the
		// integer, a 31,000-row CSV takes about a quarter less CPU (BenchmarkFleetCSV).
		return appendMicros(b, int64(micros)), nil
	}
	return strconv.AppendFloat(b, micros/1e6, 'f', -1, 64), nil
}

// appendMicros appends n millionths as a decimal: no trailing zeros, no point for a
// whole number, no "-0".
func appendMicros(b []byte, n int64) []byte {
	if n < 0 {
		b, n = append(b, '-'), -n
	}
	b = strconv.AppendInt(b, n/1e6, 10)
	f := n % 1e6
	if f == 0 {
		return b
	}
	d := [7]byte{'.'}
	for i := 6; i > 0; i-- {
		d[i], f = byte('0'+f%10), f/10
	}
	end := 7
	for d[end-1] == '0' {
		end--
	}
	return append(b, d[:end]...)
}

// Rounded is the amount as the API shows it: 6 decimals, a tie rounded away from zero.
func (a Amount) Rounded() float64 {
	// Money is rate × kWh, so a day's exact value often ends in a 5 at the 7th decimal; a
	// float sum of it lands a few ulps either side depending on the order of its terms
	// (a cluster's shards add in another order than one server). Snapping to nano-units
	// first makes such a tie round up in every order.
	return a.micros() / 1e6
}

// micros is the amount in whole millionths, a tie rounded away from zero (Rounded).
func (a Amount) micros() float64 { return math.Round(math.Round(float64(a)*1e9) / 1e3) }

// EnergyValue is {"value": whole Wh, "value_exact": Wh}: FlatPeak declares value an
// integer; value_exact keeps the unrounded energy that money is computed from (docs/api.md).
type EnergyValue struct {
	Value      int64  `json:"value"`
	ValueExact Amount `json:"value_exact"`
}

// maxWholeWh is where whole Wh stop fitting value (an int64): 2^63.
const maxWholeWh = 1 << 63

// Check reports an energy whose whole Wh do not fit value, or that is not a number.
func (e EnergyValue) Check() error {
	if !(math.Abs(float64(e.ValueExact)) < maxWholeWh) {
		return fmt.Errorf("energy %v Wh is out of range", float64(e.ValueExact))
	}
	return nil
}

// MarshalJSON implements json.Marshaler: an energy out of range (Check) is an error.
func (e EnergyValue) MarshalJSON() ([]byte, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	exact, err := e.ValueExact.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := append(strconv.AppendInt([]byte(`{"value":`), e.Value, 10), `,"value_exact":`...)
	return append(append(b, exact...), '}'), nil
}

// energyOf rounds wh half away from zero for value and keeps it whole for value_exact.
func energyOf(wh float64) EnergyValue {
	return EnergyValue{Value: int64(math.Round(wh)), ValueExact: Amount(wh)}
}

// TariffValue is the money of an item or total.
type TariffValue struct {
	Value      Amount      `json:"value"`
	Confidence Amount      `json:"confidence"`
	Rate       *Amount     `json:"rate,omitempty"`
	Components *Components `json:"components,omitempty"`
}

// Components split money into commodity and non-commodity parts.
type Components struct {
	Commodity    Amount `json:"commodity"`
	NonCommodity Amount `json:"non_commodity"`
}

// CostItem is one record or one local day/month.
type CostItem struct {
	StartTime          catalog.Timestamp `json:"start_time"`
	EndTime            catalog.Timestamp `json:"end_time"`
	SessionReferenceID string            `json:"session_reference_id,omitempty"`
	RecordReferenceID  string            `json:"record_reference_id,omitempty"`
	Energy             EnergyValue       `json:"energy"`
	Tariff             TariffValue       `json:"tariff"`
	Carbon             *CarbonValue      `json:"carbon,omitempty"`  // with include_carbon
	Charges            *Charges          `json:"charges,omitempty"` // with include_charges
}

// EnergyCost is the energy_cost response.
type EnergyCost struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	ObjectID         string            `json:"object_id"`
	LiveMode         bool              `json:"live_mode"`
	Direction        string            `json:"direction"`
	Aggregation      *string           `json:"aggregation"`
	LocationTimezone string            `json:"location_timezone"`
	CurrencyCode     string            `json:"currency_code"`
	EnergyUnits      string            `json:"energy_units"`
	StartTime        catalog.Timestamp `json:"start_time"`
	EndTime          catalog.Timestamp `json:"end_time"`
	CarbonUnits      string            `json:"carbon_units,omitempty"` // with include_carbon
	Energy           EnergyValue       `json:"energy"`
	Tariff           TariffValue       `json:"tariff"`
	Carbon           *CarbonValue      `json:"carbon,omitempty"`
	Charges          *Charges          `json:"charges,omitempty"` // with include_charges
	Data             []CostItem        `json:"data"`
	AccountID        string            `json:"account_id"`
}

func (r *CostRequest) defaults() {
	if r.Direction == "" {
		r.Direction = "IMPORT"
	}
}

// validate reports every problem of the request (kwhouse.Problems).
func (r *CostRequest) validate() error {
	var p kwhouse.Problems
	if r.Direction != "IMPORT" && r.Direction != "EXPORT" {
		p.Add("invalid_value", "direction", "direction must be IMPORT or EXPORT")
	}
	if r.Aggregation != AggregationNone && r.Aggregation != AggregationDay && r.Aggregation != AggregationMonth {
		p.Add("invalid_value", "aggregation", "aggregation must be DAY or MONTH (or absent for raw records)")
	}
	checkWindow(&p, r.Start, r.End, MaxCostWindow, "400 days")
	p.AddErr(r.checkCharges())
	return p.Err()
}

// checkWindow checks a request window [start, end) of at most max (named by maxText). A
// zero bound is one the request did not give; a bound given as the zero time itself is
// refused before (CheckBound).
func checkWindow(p *kwhouse.Problems, start, end time.Time, max time.Duration, maxText string) {
	startErr, endErr := CheckBound("start_time", start), CheckBound("end_time", end)
	switch {
	case start.IsZero():
		p.Add("parameter_missing", "start_time", "start_time is required")
	case startErr != nil:
		p.AddErr(startErr)
	case end.IsZero():
		p.Add("parameter_missing", "end_time", "end_time is required")
	case endErr != nil:
		p.AddErr(endErr)
	case !end.After(start):
		p.Add("invalid_window", "end_time", "end_time must be after start_time")
	case end.Sub(start) > max:
		p.Add("window_too_long", "end_time", "a window may span at most %s", maxText)
	}
}

// CheckBound refuses a window bound (param start_time or end_time) outside the years
// 1971 to 2105, where ClickHouse's DateTime and the tariff calendar reach.
func CheckBound(param string, t time.Time) error {
	if y := t.UTC().Year(); y < 1971 || y > 2105 {
		return kwhouse.Invalid("invalid_value", param, "%s must lie between 1971 and 2105", param)
	}
	return nil
}

// Interval prices the records of a location or device (POST /costs/interval/{id}).
func (c *Pricer) Interval(ctx context.Context, scope kwhouse.Scope, req CostRequest) (EnergyCost, error) {
	req.defaults()
	if err := req.validate(); err != nil {
		return EnergyCost{}, err
	}
	args := costArgs{scope: scope, direction: req.Direction, session: req.Session, w0: req.Start.Unix(), w1: req.End.Unix(),
		daily: req.Aggregation != AggregationNone}
	if !args.daily {
		args.maxRows = c.maxRawItems
	}
	loc, err := c.resolveScope(ctx, scope, req, &args)
	if err != nil {
		return EnergyCost{}, err
	}
	out := c.newResponse(scope, req, loc)
	if args.location == "" {
		return out, nil // a device without records in the window
	}
	zone, err := catalog.LoadZone(loc.Timezone)
	if err != nil {
		return EnergyCost{}, fmt.Errorf("zone of %s: %w", loc.ID, err)
	}
	args.zone = loc.Timezone
	if args.plan, err = c.tariffs.Plan(ctx, scope, args.location, args.w0, args.w1); err != nil {
		return EnergyCost{}, err
	}
	bill := c.startCharges(ctx, args, req) // its reads run beside the cost query
	rows, err := c.priceOne(ctx, args)
	if err != nil {
		return EnergyCost{}, err
	}
	if err := checkTariffs(rows, args); err != nil {
		return EnergyCost{}, err
	}
	if req.IncludeCarbon {
		if err := c.weighCarbon(ctx, args, loc, rows); err != nil {
			return EnergyCost{}, err
		}
	}
	out.Data = items(rows, req, zone)
	out.total(rows, req.CostFlags)
	if req.IncludeCharges {
		if err := bill.add(ctx, c, args, zone, req, rows, &out); err != nil {
			return EnergyCost{}, err
		}
	}
	return out, nil
}

// resolveScope finds the location whose tariffs price the request and sets the record filter.
func (c *Pricer) resolveScope(ctx context.Context, scope kwhouse.Scope, req CostRequest, a *costArgs) (catalog.Location, error) {
	switch {
	case kwhouse.ValidID(kwhouse.PrefixLocation, req.ObjectID):
		a.location = req.ObjectID
		return c.catalog.LocationInfo(ctx, scope, req.ObjectID)
	case kwhouse.ValidID(kwhouse.PrefixDevice, req.ObjectID):
		if _, err := c.catalog.DeviceInfo(ctx, scope, req.ObjectID); err != nil {
			return catalog.Location{}, err
		}
		a.device = req.ObjectID
		locs, err := c.deviceLocations(ctx, scope, req)
		if err != nil || len(locs) == 0 {
			return catalog.Location{Timezone: "UTC"}, err
		}
		if len(locs) > 1 {
			return catalog.Location{}, kwhouse.Invalid("ambiguous_location", "id",
				"device %s has records at several locations in this window (%s, %s): ask per location", req.ObjectID, locs[0], locs[1])
		}
		a.location = locs[0]
		return c.catalog.LocationInfo(ctx, scope, locs[0])
	}
	return catalog.Location{}, kwhouse.NotFound("id", req.ObjectID)
}

// deviceLocations lists the locations of a device's records in the window (at most 2).
func (c *Pricer) deviceLocations(ctx context.Context, scope kwhouse.Scope, req CostRequest) ([]string, error) {
	live := scope.LiveByte()
	rows, err := c.db.Query(ctx, deviceLocationsStmt,
		scope.AccountID, live, req.ObjectID, req.Direction, uint32(req.Start.Unix()), uint32(req.End.Unix()))
	if err != nil {
		return nil, fmt.Errorf("locations of device %s: %w", req.ObjectID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("scan location: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (c *Pricer) newResponse(scope kwhouse.Scope, req CostRequest, loc catalog.Location) EnergyCost {
	out := EnergyCost{ID: kwhouse.NewID(kwhouse.PrefixCost), Object: "energy_cost", ObjectID: req.ObjectID,
		LiveMode: scope.LiveMode, Direction: req.Direction, LocationTimezone: loc.Timezone, CurrencyCode: loc.CurrencyCode,
		EnergyUnits: "WH", StartTime: catalog.Timestamp(req.Start), EndTime: catalog.Timestamp(req.End),
		Data: []CostItem{}, AccountID: scope.AccountID, Tariff: TariffValue{Confidence: 1}}
	if req.Aggregation != AggregationNone {
		agg := req.Aggregation
		out.Aggregation = &agg
	}
	if req.IncludeTariff {
		out.Tariff.Rate, out.Tariff.Components = new(Amount), &Components{}
	}
	if req.IncludeCarbon {
		out.CarbonUnits, out.Carbon = carbon.Units, carbonValue(carbon.None)
	}
	return out
}

// checkTariffs refuses to price records of a tariff_rate the location has no tariff of.
func checkTariffs(rows []costRow, a costArgs) error {
	var imp, exp uint64
	for _, r := range rows {
		imp, exp = imp+r.NImport, exp+r.NExport
	}
	dir := a.plan.Missing(imp, exp)
	if dir == "" {
		return nil
	}
	n := imp
	if dir == "EXPORT" {
		n = exp
	}
	return &kwhouse.Error{Kind: kwhouse.KindUnprocessable, Code: "no_tariff_connected", Param: "direction",
		Message: fmt.Sprintf("location %s has no %s tariff to price %d record(s) with tariff_rate %s", a.location, dir, n, dir)}
}

// items maps rows to response items: records as they are; days with their local
// boundaries; months folded from days.
func items(rows []costRow, req CostRequest, zone *time.Location) []CostItem {
	out := []CostItem{}
	var acc []costRow
	for _, r := range rows {
		if req.Aggregation == AggregationMonth {
			t := time.Unix(int64(r.Key), 0).In(zone)
			r.Key = uint32(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, zone).Unix())
			if n := len(acc); n > 0 && acc[n-1].Key == r.Key {
				acc[n-1] = fold(acc[n-1], r)
				continue
			}
		}
		acc = append(acc, r)
	}
	for _, r := range acc {
		start := time.Unix(int64(r.Key), 0).UTC()
		end := time.Unix(int64(r.KeyEnd), 0).UTC()
		switch req.Aggregation {
		case AggregationDay:
			t := start.In(zone)
			end = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, zone)
		case AggregationMonth:
			t := start.In(zone)
			end = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, zone)
		}
		it := CostItem{StartTime: catalog.Timestamp(start), EndTime: catalog.Timestamp(end), SessionReferenceID: r.Session,
			RecordReferenceID: r.Reference, Energy: energyOf(r.Energy),
			Tariff: TariffValue{Value: Amount(r.Money), Confidence: Amount(r.Confidence)}}
		if req.IncludeTariff {
			it.Tariff.Rate = rateOf(r.Money, r.Energy)
			it.Tariff.Components = &Components{Commodity: Amount(r.MoneyCommodity), NonCommodity: Amount(r.MoneyNonCommodity)}
		}
		if req.IncludeCarbon {
			it.Carbon = carbonValue(r.Carbon)
		}
		out = append(out, it)
	}
	return out
}

func fold(a, b costRow) costRow {
	a.Energy += b.Energy
	a.Money += b.Money
	a.MoneyCommodity += b.MoneyCommodity
	a.MoneyNonCommodity += b.MoneyNonCommodity
	a.Confidence = math.Min(a.Confidence, b.Confidence)
	a.NImport += b.NImport
	a.NExport += b.NExport
	a.Carbon = a.Carbon.Add(b.Carbon)
	return a
}

// total sets the top-level figures from the unrounded rows.
func (e *EnergyCost) total(rows []costRow, flags CostFlags) {
	t := costRow{Confidence: 1, Carbon: carbon.None}
	for _, r := range rows {
		t = fold(t, r)
	}
	e.Energy = energyOf(t.Energy)
	e.Tariff.Value, e.Tariff.Confidence = Amount(t.Money), Amount(t.Confidence)
	if flags.IncludeTariff {
		e.Tariff.Rate = rateOf(t.Money, t.Energy)
		e.Tariff.Components = &Components{Commodity: Amount(t.MoneyCommodity), NonCommodity: Amount(t.MoneyNonCommodity)}
	}
	if flags.IncludeCarbon {
		e.Carbon = carbonValue(t.Carbon)
	}
}

// rateOf is money per kWh, 0 without energy.
func rateOf(money, wh float64) *Amount {
	r := Amount(0)
	if wh != 0 {
		r = Amount(money / (wh / 1000))
	}
	return &r
}
