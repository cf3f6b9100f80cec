// Package tariffs owns tariff elements and markets: the schedule grammar and its
// validation, expansion of schedules into UTC rate periods (time zones, DST), market
// price series, and which tariff prices which time (contracts and extrapolation).
package tariffs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
)

// Document kinds of this package.
const (
	KindTariff = "tariff"
	KindMarket = "market"
)

// Directions and types of tariff elements.
const (
	Import       = "IMPORT"
	Export       = "EXPORT"
	Commodity    = "COMMODITY"
	NonCommodity = "NON_COMMODITY"
)

// Tariff is a tariff element (object "tariff").
type Tariff struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	LocationID        string            `json:"location_id"`
	LiveMode          bool              `json:"live_mode"`
	IsLinked          bool              `json:"is_linked"`
	ConnectionType    string            `json:"connection_type"`
	Direction         string            `json:"direction"`
	Type              string            `json:"type"`
	Status            string            `json:"status"`
	Timezone          string            `json:"timezone"`
	DisplayName       string            `json:"display_name,omitempty"`
	ProviderID        string            `json:"provider_id,omitempty"`
	MarketRates       bool              `json:"market_rates"`
	MarketID          string            `json:"market_id,omitempty"`
	TierPeriod        string            `json:"tier_period"`
	ContractStartDate catalog.Timestamp `json:"contract_start_date"`
	ContractEndDate   catalog.Timestamp `json:"contract_end_date"`
	Schedule          Schedule          `json:"schedule"`
	StandingCharge    *float64          `json:"standing_charge,omitempty"` // docs/costs.md, "Bill charges"
	DemandCharges     []DemandCharge    `json:"demand_charges,omitempty"`
	TaxPercentage     *float64          `json:"tax_percentage,omitempty"`
	TimeCreated       catalog.Timestamp `json:"time_created"`
	AccountID         string            `json:"account_id"`
}

// Contract returns the contract as Unix seconds [start, end).
func (t *Tariff) Contract() (int64, int64) {
	return t.ContractStartDate.Time().Unix(), t.ContractEndDate.Time().Unix()
}

// Input is the body of POST /tariffs/elements.
type Input struct {
	LocationID        string             `json:"location_id"`
	Direction         string             `json:"direction"`
	Type              string             `json:"type"`
	DisplayName       *string            `json:"display_name"`
	ProviderID        *string            `json:"provider_id"`
	MarketRates       *bool              `json:"market_rates"`
	MarketID          *string            `json:"market_id"`
	Timezone          *string            `json:"timezone"`
	TierPeriod        *string            `json:"tier_period"`
	ContractStartDate *catalog.Timestamp `json:"contract_start_date"`
	ContractEndDate   *catalog.Timestamp `json:"contract_end_date"`
	Schedule          Schedule           `json:"schedule"`
	StandingCharge    *float64           `json:"standing_charge"`
	DemandCharges     []DemandCharge     `json:"demand_charges"`
	TaxPercentage     *float64           `json:"tax_percentage"`
}

// Update is the body of PATCH /tariffs/elements/{id}. Only display_name and
// contract_end_date change; market_rates and contract_start_date are immutable and
// accepted only with the stored value, since a client generated from FlatPeak's document
// always sends market_rates (its schema gives it a default).
type Update struct {
	DisplayName       *string            `json:"display_name"`
	ContractEndDate   *catalog.Timestamp `json:"contract_end_date"`
	MarketRates       *bool              `json:"market_rates"`
	ContractStartDate *catalog.Timestamp `json:"contract_start_date"`
}

// checkImmutable refuses a change of a field that PATCH cannot change.
func (u *Update) checkImmutable(t *Tariff) error {
	var p kwhouse.Problems
	if u.MarketRates != nil && *u.MarketRates != t.MarketRates {
		p.Add("immutable_field", "market_rates", "market_rates cannot be changed; create a new tariff element")
	}
	if u.ContractStartDate != nil && !u.ContractStartDate.Time().Equal(t.ContractStartDate.Time()) {
		p.Add("immutable_field", "contract_start_date", "contract_start_date cannot be changed; create a new tariff element")
	}
	return p.Err()
}

// Service keeps tariffs, markets and their rates.
type Service struct {
	docs     *docstore.Store
	catalog  *catalog.Catalog
	db       *chstore.DB
	now      func() time.Time
	years    *expandedYears
	flights  *yearFlights              // years being expanded now, shared by concurrent requests
	expanded atomic.Uint64             // calendar years computed (ExpandedYears)
	lists    *EpochMemo[[]Tariff]      // location tariff lists by pricing epoch (readTariffs)
	all      *docstore.Decoded[Tariff] // every tariff of a scope, by document version (ofScope)
	plans    *lru.Cache[string, Plan]  // fleet plans by location, range and tariff versions (FleetTariffs.Plans)
	epochs   docstore.Cache            // where pricing epochs live (SetEpochCache); nil: the document cache
	// revisions is told of price writes before they are made (SetRevisions).
	revisions PriceRevisions
}

// NewService returns a Service; the catalog shows its tariffs once given it
// (catalog.SetTariffView).
func NewService(db *chstore.DB, docs *docstore.Store, cat *catalog.Catalog, now func() time.Time) *Service {
	s := &Service{docs: docs, catalog: cat, db: db, now: now, years: newExpandedYears(), flights: newYearFlights()}
	s.lists = NewEpochMemo[[]Tariff](s, tariffListCacheSize)
	s.all = docstore.NewDecoded(docs, KindTariff, decodeTariff)
	s.plans, _ = lru.New[string, Plan](fleetPlansCacheSize)
	return s
}

// maxContract bounds a contract's length: its rates are expanded year by year.
const maxContract = 30 * 366 * 24 * time.Hour

// validate reports every problem of in on its own (kwhouse.Problems).
func (in *Input) validate() error {
	var p kwhouse.Problems
	p.ID("location_id", kwhouse.PrefixLocation, in.LocationID, true)
	if in.Direction != Import && in.Direction != Export {
		p.Add("invalid_value", "direction", "direction must be IMPORT or EXPORT")
	}
	switch {
	case in.Type != Commodity && in.Type != NonCommodity:
		p.Add("invalid_value", "type", "type must be COMMODITY or NON_COMMODITY")
	case in.Type == NonCommodity && in.Direction == Export:
		p.Add("unsupported_combination", "type", "NON_COMMODITY tariffs are import only")
	}
	if in.ContractStartDate == nil {
		p.Add("parameter_missing", "contract_start_date", "contract_start_date is required")
	}
	if in.ContractEndDate == nil {
		p.Add("parameter_missing", "contract_end_date", "contract_end_date is required")
	}
	if in.ContractStartDate != nil && in.ContractEndDate != nil {
		p.AddErr(checkContract(in.ContractStartDate.Time(), in.ContractEndDate.Time()))
	}
	in.validateOptional(&p)
	in.validateCharges(&p)
	return p.Err()
}

// validateOptional checks the fields a tariff may leave out.
func (in *Input) validateOptional(p *kwhouse.Problems) {
	for _, f := range []struct {
		param string
		v     *string
	}{{"display_name", in.DisplayName}, {"provider_id", in.ProviderID}} {
		if f.v != nil && len([]rune(*f.v)) > catalog.MaxStringLen {
			p.Add("string_too_long", f.param, "at most %d characters", catalog.MaxStringLen)
		}
	}
	if in.ProviderID != nil {
		p.ID("provider_id", kwhouse.PrefixProvider, *in.ProviderID, false)
	}
	if in.TierPeriod != nil && *in.TierPeriod != TierMonth && *in.TierPeriod != TierDay {
		p.Add("invalid_value", "tier_period", "tier_period must be MONTH or DAY")
	}
	if in.Timezone != nil && !catalog.ValidZone(*in.Timezone) {
		p.Add("invalid_timezone", "timezone", "%q is not a time zone kwhouse accepts: an IANA zone such as Europe/London, Etc/GMT-1 or UTC", *in.Timezone)
	}
	market := in.MarketRates != nil && *in.MarketRates
	switch {
	case !market && in.MarketID != nil && *in.MarketID != "":
		p.Add("invalid_value", "market_id", "market_id needs market_rates: true")
	case !market && len(in.Schedule) == 0:
		p.Add("parameter_missing", "schedule", "a tariff without market rates needs a schedule")
	}
}

func checkContract(start, end time.Time) error {
	switch {
	case !end.After(start):
		return kwhouse.Invalid("invalid_contract", "contract_end_date", "contract_end_date must be after contract_start_date")
	case end.Sub(start) > maxContract:
		return kwhouse.Invalid("invalid_contract", "contract_end_date", "a contract may run at most 30 years")
	case start.Year() < 1971 || end.Year() > 2105:
		return kwhouse.Invalid("invalid_contract", "contract_start_date", "contracts must lie between 1971 and 2105")
	}
	return nil
}

// marketSchedule prices every instant at the market price with no surcharge.
func marketSchedule() Schedule {
	zero := 0.0
	return Schedule{{Months: []string{"All"}, DaysAndHours: []DaysAndHour{{Days: []DayName{"All"},
		Hours: []HourRange{{ValidFrom: "00:00:00", ValidTo: "00:00:00", Rate: []Band{{SurchargeFixed: &zero, SurchargePercentage: &zero}}}}}}}}
}

// Create validates and stores a tariff element and emits tariff.create.
func (s *Service) Create(ctx context.Context, scope kwhouse.Scope, in Input) (Tariff, error) {
	if err := in.validate(); err != nil {
		return Tariff{}, err
	}
	loc, err := s.catalog.LocationInfo(ctx, scope, in.LocationID) // only its zone is needed
	if err != nil {
		if kwhouse.KindOf(err) == kwhouse.KindNotFound {
			return Tariff{}, kwhouse.Invalid("resource_missing", "location_id", "no such location: %s", in.LocationID)
		}
		return Tariff{}, err
	}
	t, err := s.draft(ctx, scope, in, loc)
	if err != nil {
		return Tariff{}, err
	}
	// One write: the tariff and its event. Its rate periods are expanded into tariff_rates
	// only for the years a query reading them needs (EnsureRates), so a create is fast,
	// a 5xx leaves nothing behind, and storage grows with priced years, not contract years.
	if err := s.save(ctx, scope, &t, "tariff.create", true); err != nil {
		return Tariff{}, err
	}
	return t, nil
}

func (s *Service) newTariff(scope kwhouse.Scope, in Input, loc catalog.Location) Tariff {
	now := s.now()
	t := Tariff{ID: kwhouse.NewID(kwhouse.PrefixTariff), Object: "tariff", LocationID: in.LocationID, LiveMode: scope.LiveMode,
		ConnectionType: "MANUAL", Direction: in.Direction, Type: in.Type, Status: catalog.StatusConnected,
		Timezone: loc.Timezone, TierPeriod: TierMonth, ContractStartDate: *in.ContractStartDate,
		ContractEndDate: *in.ContractEndDate, Schedule: in.Schedule, TimeCreated: catalog.Timestamp(now), AccountID: scope.AccountID}
	if in.Timezone != nil {
		t.Timezone = *in.Timezone
	}
	if in.TierPeriod != nil {
		t.TierPeriod = *in.TierPeriod
	}
	t.StandingCharge, t.TaxPercentage = in.StandingCharge, in.TaxPercentage
	if len(in.DemandCharges) > 0 {
		t.DemandCharges = withDefaults(in.DemandCharges)
	}
	if in.DisplayName != nil {
		t.DisplayName = *in.DisplayName
	}
	if in.ProviderID != nil {
		t.ProviderID = *in.ProviderID
	}
	if in.MarketRates != nil && *in.MarketRates {
		t.MarketRates = true
		if in.MarketID != nil {
			t.MarketID = *in.MarketID
		}
		if len(t.Schedule) == 0 {
			t.Schedule = marketSchedule()
		}
	}
	return t
}

// save stores t after checking, under a lock, that no other tariff of the same location,
// direction and type has a contract overlapping it.
// A create (created) may find the location still fresh (fresh.go) and skip reading its
// tariffs.
func (s *Service) save(ctx context.Context, scope kwhouse.Scope, t *Tariff, event string, created bool) error {
	unlock, err := s.docs.Lock(ctx, fmt.Sprintf("tariff:%s:%t:%s:%s:%s", scope.AccountID, scope.LiveMode, t.LocationID, t.Direction, t.Type))
	if err != nil {
		return kwhouse.Unavailable("the tariff lock", err)
	}
	defer unlock()
	others, err := s.mayOverlap(ctx, scope, t, created)
	if err != nil {
		return err
	}
	if err := overlapping(t, others); err != nil {
		return err
	}
	ch, err := tariffChange(scope, t, event)
	if err != nil {
		return err
	}
	return s.priceWrite(ctx, scope, PriceChange{Locations: []string{t.LocationID}, Every: true}, func() error {
		return catalog.Commit(ctx, s.docs, scope, ch)
	})
}

// priceWrite makes a tariff write that changes prices as ch says: told to the revisions
// before, then the write, the end of the pricing epoch and the change records, also after
// a failure (a write answered 503 may still have landed).
func (s *Service) priceWrite(ctx context.Context, scope kwhouse.Scope, ch PriceChange, write func() error) error {
	done, err := s.revising(ctx, scope, ch)
	if err != nil {
		return err
	}
	err = write()
	s.endEpoch(ctx, scope)
	err = errors.Join(err, s.mark(ctx, scope, ch))
	done(ctx, err == nil)
	return err
}

// Get returns a tariff element.
func (s *Service) Get(ctx context.Context, scope kwhouse.Scope, id string) (Tariff, error) {
	var t Tariff
	d, err := s.docs.Get(ctx, scope, KindTariff, id)
	if err != nil {
		return t, err
	}
	return t, d.DecodeBody(&t)
}

// ListQuery filters tariff elements.
type ListQuery struct {
	catalog.ListQuery
	LocationID, Direction, Type string
}

// List lists a location's tariff elements (every location's when LocationID is empty),
// newest first.
func (s *Service) List(ctx context.Context, scope kwhouse.Scope, q ListQuery) ([]Tariff, bool, error) {
	f := map[docstore.Column]string{}
	if q.Direction != "" {
		f[docstore.ColDirection] = q.Direction
	}
	if q.Type != "" {
		f[docstore.ColTariffType] = q.Type
	}
	lq := docstore.ListQuery{Filters: f, Limit: q.Limit, StartingAfter: q.StartingAfter, EndingBefore: q.EndingBefore}
	if q.LocationID != "" { // none: the account's tariffs at every location
		lq.Fixed = map[docstore.Column]string{docstore.ColLocationID: q.LocationID} // a tariff never moves
	}
	docs, more, err := s.docs.List(ctx, scope, KindTariff, lq)
	if err != nil {
		return nil, false, err
	}
	out := make([]Tariff, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}

// ofLocation returns every tariff of a location.
func (s *Service) ofLocation(ctx context.Context, scope kwhouse.Scope, locationID string) ([]Tariff, error) {
	var all []Tariff
	q := ListQuery{LocationID: locationID}
	q.Limit = 100
	for {
		page, more, err := s.List(ctx, scope, q)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if !more {
			return all, nil
		}
		q.StartingAfter = page[len(page)-1].ID
	}
}

// UpdateElement changes display_name and contract_end_date.
func (s *Service) UpdateElement(ctx context.Context, scope kwhouse.Scope, id string, u Update) (Tariff, error) {
	t, err := s.Get(ctx, scope, id)
	if err != nil {
		return t, err
	}
	if err := u.checkImmutable(&t); err != nil {
		return t, err
	}
	if u.DisplayName != nil {
		if len([]rune(*u.DisplayName)) > catalog.MaxStringLen {
			return t, kwhouse.Invalid("string_too_long", "display_name", "at most %d characters", catalog.MaxStringLen)
		}
		t.DisplayName = *u.DisplayName
	}
	if u.ContractEndDate != nil {
		if err := checkContract(t.ContractStartDate.Time(), u.ContractEndDate.Time()); err != nil {
			return t, err
		}
		t.ContractEndDate = *u.ContractEndDate
	}
	return t, s.save(ctx, scope, &t, "tariff.update", false)
}

// Delete removes a tariff element.
func (s *Service) Delete(ctx context.Context, scope kwhouse.Scope, id string) error {
	d, err := s.docs.Get(ctx, scope, KindTariff, id)
	if err != nil {
		return err
	}
	var t Tariff
	if err := d.DecodeBody(&t); err != nil {
		return err
	}
	d.Deleted = true
	return s.priceWrite(ctx, scope, PriceChange{Locations: []string{t.LocationID}, Every: true}, func() error {
		return catalog.Commit(ctx, s.docs, scope, catalog.Change{Doc: d, EventType: "tariff.delete", EventData: t})
	})
}

// OnLocationDelete deletes a location's tariffs with it.
func (s *Service) OnLocationDelete(ctx context.Context, scope kwhouse.Scope, locationID string) ([]catalog.Change, error) {
	ts, err := s.ofLocation(ctx, scope, locationID)
	if err != nil {
		return nil, err
	}
	var out []catalog.Change
	for _, t := range ts {
		d, err := s.docs.Get(ctx, scope, KindTariff, t.ID)
		if err != nil {
			return nil, err
		}
		d.Deleted = true
		out = append(out, catalog.Change{Doc: d, EventType: "tariff.delete", EventData: t})
	}
	if len(out) > 0 {
		s.endEpoch(ctx, scope) // before the commit; the deleted location's timeline is 404 after it
	}
	if err := s.dropBuckets(ctx, scope, locationID); err != nil {
		return nil, err
	}
	return out, nil
}

// LocationTariffs implements catalog.TariffView: the element ids and slot states.
func (s *Service) LocationTariffs(ctx context.Context, scope kwhouse.Scope, locationID string) (catalog.LocationTariffs, error) {
	ts, err := s.readTariffs(ctx, scope, locationID)
	if err != nil {
		return catalog.LocationTariffs{}, err
	}
	lt := catalog.LocationTariffs{ElementIDs: []string{}, Status: catalog.DisconnectedStatus(), Detail: map[string]*catalog.StatusDetail{}}
	now := s.now().Unix()
	for i := range ts {
		t := &ts[i]
		lt.ElementIDs = append(lt.ElementIDs, t.ID)
		cs, ce := t.Contract()
		if now < cs || now >= ce {
			continue
		}
		state := catalog.StatusConnected
		if t.MarketRates {
			if ok, err := s.hasPriceAt(ctx, scope, t.MarketID, now); err != nil {
				return lt, err
			} else if !ok {
				state = catalog.StatusError
			}
		}
		slot := slotOf(t)
		setSlot(&lt.Status, slot, state)
		end := t.ContractEndDate
		lt.Detail[slot] = &catalog.StatusDetail{Status: state, ConnectionType: t.ConnectionType,
			Tariff: &catalog.StatusTariff{ID: t.ID, DisplayName: t.DisplayName, StructureType: structureOf(t), ContractEndDate: &end}}
	}
	return lt, nil
}

func slotOf(t *Tariff) string {
	switch {
	case t.Type == NonCommodity:
		return "non_commodity_import"
	case t.Direction == Export:
		return "commodity_export"
	}
	return "commodity_import"
}

func setSlot(st *catalog.TariffStatus, slot, state string) {
	switch slot {
	case "commodity_import":
		st.CommodityImport = state
	case "commodity_export":
		st.CommodityExport = state
	case "non_commodity_import":
		st.NonCommodityImport = state
	}
}

// structureOf names the shape of a tariff's rates, as the reference's location status does.
func structureOf(t *Tariff) string {
	if t.MarketRates {
		return "MARKET"
	}
	rules, err := t.Schedule.compile(false)
	if err != nil || len(rules) == 0 {
		return "FIXED"
	}
	for _, r := range rules[1:] {
		if !r.bands.equal(rules[0].bands) {
			return "TIME_OF_DAY"
		}
	}
	if len(rules[0].bands.Fixed) > 1 {
		return "TIERED"
	}
	return "FIXED"
}
