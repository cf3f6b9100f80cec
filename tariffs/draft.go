package tariffs

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// draft checks a new tariff of loc past what in says on its own: its market, and that
// its schedule is within the size limits, compiles and prices every hour.
func (s *Service) draft(ctx context.Context, scope kwhouse.Scope, in Input, loc catalog.Location) (Tariff, error) {
	t := s.newTariff(scope, in, loc)
	var err error
	if t.MarketRates && t.MarketID == "" {
		// No market_id: the account's default market of the location's country (docs/costs.md, "Markets").
		if t.MarketID, err = s.defaultMarketOf(ctx, scope, loc); err != nil {
			return Tariff{}, err
		}
	}
	if t.MarketRates {
		if _, err := s.docs.Get(ctx, scope, KindMarket, t.MarketID); err != nil {
			if kwhouse.KindOf(err) == kwhouse.KindNotFound {
				return Tariff{}, kwhouse.Invalid("resource_missing", "market_id", "no such market: %s", t.MarketID)
			}
			return Tariff{}, err
		}
	}
	if err := t.Schedule.checkSize(); err != nil {
		return Tariff{}, err
	}
	rules, err := t.Schedule.compile(t.MarketRates)
	if err != nil {
		return Tariff{}, err
	}
	return t, checkComplete(rules)
}

// overlapping is the conflict of t with another tariff of its location, direction and
// type whose contract overlaps t's (nil when there is none).
func overlapping(t *Tariff, others []Tariff) error {
	cs, ce := t.Contract()
	for _, o := range others {
		os, oe := o.Contract()
		if o.ID != t.ID && o.Direction == t.Direction && o.Type == t.Type && cs < oe && os < ce {
			return kwhouse.Conflict("overlapping_contract", "contract_start_date",
				"%s %s tariff %s already covers %s–%s", o.Direction, o.Type, o.ID,
				o.ContractStartDate.Time().Format(time.RFC3339), o.ContractEndDate.Time().Format(time.RFC3339))
		}
	}
	return nil
}

// tariffChange is the stored document of t and the event that reports it.
func tariffChange(scope kwhouse.Scope, t *Tariff, event string) (catalog.Change, error) {
	doc := docstore.Doc{Kind: KindTariff, ID: t.ID, Scope: scope, CreatedUS: t.TimeCreated.Time().UnixMicro(),
		Fields: docstore.Fields{LocationID: t.LocationID, Direction: t.Direction, TariffType: t.Type}}
	doc, err := docstore.WithBody(doc, t)
	if err != nil {
		return catalog.Change{}, err
	}
	return catalog.Change{Doc: doc, EventType: event, EventData: t}, nil
}

// DraftTariffs checks the tariffs of a location that is being created with them (loc is
// a draft, not yet stored) the way POST /tariffs/elements checks each, overlapping
// contracts among them included, and returns the changes that store them. The error
// names the first tariff that cannot be created by its index in ins.
func (s *Service) DraftTariffs(ctx context.Context, scope kwhouse.Scope, loc catalog.Location, ins []Input) ([]catalog.Change, error) {
	drafted := make([]Tariff, 0, len(ins))
	changes := make([]catalog.Change, 0, len(ins))
	for i, in := range ins {
		in.LocationID = loc.ID
		var t Tariff
		err := in.validate()
		if err == nil {
			t, err = s.draft(ctx, scope, in, loc)
		}
		if err == nil {
			err = overlapping(&t, drafted)
		}
		var ch catalog.Change
		if err == nil {
			ch, err = tariffChange(scope, &t, "tariff.create")
		}
		if err != nil {
			return nil, &IndexedError{Index: i, Err: err}
		}
		drafted, changes = append(drafted, t), append(changes, ch)
	}
	return changes, nil
}

// IndexedError is the problem of the tariff at Index of a batch.
type IndexedError struct {
	Index int
	Err   error
}

func (e *IndexedError) Error() string { return fmt.Sprintf("tariffs[%d]: %v", e.Index, e.Err) }

// Unwrap returns the tariff's own problem.
func (e *IndexedError) Unwrap() error { return e.Err }

// Committed is called after drafted tariffs were committed (or the commit failed: a write
// answered with an error may still have landed): it ends the scope's pricing epoch.
func (s *Service) Committed(ctx context.Context, scope kwhouse.Scope) { s.endEpoch(ctx, scope) }

// Check reports the problems of in that do not depend on its location — every rule of
// Create but the location's existence, its market and overlapping contracts — so that a
// caller that must create the location first can refuse a bad tariff before it does.
func (in Input) Check() error {
	in.LocationID = kwhouse.PrefixLocation + "000000000000000000000000" // the caller's to check
	if err := in.validate(); err != nil {
		return err
	}
	market := in.MarketRates != nil && *in.MarketRates
	if market && len(in.Schedule) == 0 {
		return nil
	}
	rules, err := in.Schedule.compile(market)
	if err != nil {
		return err
	}
	return checkComplete(rules)
}
