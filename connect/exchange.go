package connect

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/onboard"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Exchanged is FlatPeak's ConnectToken: what a completed session connected.
type Exchanged struct {
	ID                  string            `json:"id"`
	Object              string            `json:"object"`
	LiveMode            bool              `json:"live_mode"`
	CustomerID          string            `json:"customer_id,omitempty"`
	LocationID          string            `json:"location_id"`
	LocationReferenceID string            `json:"location_reference_id"`
	TariffID            string            `json:"tariff_id"` // kwhouse's own
	IsTariffProcessed   bool              `json:"is_tariff_processed"`
	CompleteAction      string            `json:"complete_action"`
	TimeCreated         catalog.Timestamp `json:"time_created"`
	TimeExpiry          catalog.Timestamp `json:"time_expiry"`
}

// Exchange trades a completed token for what it connected, once: an unknown, expired or
// already exchanged token is 404, one whose page is not completed 422.
func (s *Service) Exchange(ctx context.Context, scope kwhouse.Scope, id string) (Exchanged, error) {
	if id == "" {
		return Exchanged{}, kwhouse.Invalid("parameter_missing", "connect_token", "connect_token is required")
	}
	unlock, err := s.docs.Lock(ctx, "connect/"+id)
	if err != nil {
		return Exchanged{}, err
	}
	defer unlock()
	t, err := s.load(ctx, scope, id)
	if err != nil {
		return Exchanged{}, err
	}
	switch t.State {
	case StatePending:
		return Exchanged{}, &kwhouse.Error{Kind: kwhouse.KindUnprocessable, Code: "connect_incomplete", Param: "connect_token",
			Message: "the customer has not completed this connect session"}
	case StateExchanged:
		return Exchanged{}, &kwhouse.Error{Kind: kwhouse.KindNotFound, Code: "token_used", Param: "connect_token",
			Message: fmt.Sprintf("connect token %s was already exchanged", id)}
	}
	t.State = StateExchanged
	if err := s.save(ctx, scope, t); err != nil {
		return Exchanged{}, err
	}
	ref, err := s.locationReference(ctx, scope, t.LocationID)
	if err != nil {
		return Exchanged{}, err
	}
	return Exchanged{ID: t.ID, Object: "connect_token", LiveMode: t.LiveMode, CustomerID: t.CustomerID, LocationID: t.LocationID,
		LocationReferenceID: ref, TariffID: t.TariffID, IsTariffProcessed: true, CompleteAction: "SAVE",
		TimeCreated: t.TimeCreated, TimeExpiry: t.TimeExpiry}, nil
}

func (s *Service) locationReference(ctx context.Context, scope kwhouse.Scope, id string) (string, error) {
	loc, err := s.catalog.LocationInfo(ctx, scope, id)
	return loc.ReferenceID, err
}

// ImportInput is FlatPeak's ConnectImport body.
type ImportInput struct {
	Session ImportSession `json:"session"`
	Tariff  ImportTariff  `json:"tariff"`
}

// ImportSession says where the tariff goes.
type ImportSession struct {
	Direction           string                 `json:"direction"`
	Type                string                 `json:"type"`
	CustomerID          string                 `json:"customer_id"`
	CustomerReferenceID string                 `json:"customer_reference_id"`
	LocationID          string                 `json:"location_id"`
	LocationReferenceID string                 `json:"location_reference_id"`
	Disconnect          bool                   `json:"disconnect"`
	PostalAddress       *catalog.PostalAddress `json:"postal_address"`
}

// ImportTariff is the tariff: FIXED and TIME_OF_DAY take data (a schedule), MARKET
// follows the location's country's default market with the data's surcharges.
type ImportTariff struct {
	ProviderID string `json:"provider_id"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Contract   *struct {
		StartDate *catalog.Timestamp `json:"start_date"`
		EndDate   *catalog.Timestamp `json:"end_date"`
	} `json:"contract"`
	Data tariffs.Schedule `json:"data"`
}

// Batch imports one session's tariff without the page: onto location_id, or onto the
// location of location_reference_id, created as `kwhouse import` creates a row's.
func (s *Service) Batch(ctx context.Context, scope kwhouse.Scope, in ImportInput) (Exchanged, error) {
	tin, err := in.tariffInput()
	if err != nil {
		return Exchanged{}, err
	}
	se := in.Session
	loc := se.LocationID
	if loc == "" {
		if loc, err = s.importLocation(ctx, scope, se, tin); err != nil {
			return Exchanged{}, err
		}
	} else {
		tin.LocationID = loc
		if _, err := s.tariffs.Create(ctx, scope, tin); err != nil {
			return Exchanged{}, err
		}
	}
	now := catalog.Timestamp(s.now().UTC().Truncate(time.Second))
	ref, err := s.locationReference(ctx, scope, loc)
	if err != nil {
		return Exchanged{}, err
	}
	return Exchanged{ID: kwhouse.NewID(PrefixToken), Object: "connect_token", LiveMode: scope.LiveMode, CustomerID: se.CustomerID,
		LocationID: loc, LocationReferenceID: ref, IsTariffProcessed: true, CompleteAction: "SAVE", TimeCreated: now, TimeExpiry: now}, nil
}

// tariffInput checks the session and turns the tariff into a POST /tariffs/elements body.
func (in ImportInput) tariffInput() (tariffs.Input, error) {
	var p kwhouse.Problems
	se, tf := in.Session, in.Tariff
	if se.LocationID == "" && se.LocationReferenceID == "" {
		p.Add("parameter_missing", "session.location_reference_id", "give session.location_id or session.location_reference_id")
	}
	if se.Disconnect || se.CustomerReferenceID != "" {
		p.Add("unsupported_field", "session", "disconnect and customer_reference_id are not supported")
	}
	switch tf.Type {
	case "FIXED", "TIME_OF_DAY", "MARKET":
	default:
		p.Add("invalid_value", "tariff.type", "tariff.type must be FIXED, TIME_OF_DAY or MARKET")
	}
	if err := p.Err(); err != nil {
		return tariffs.Input{}, err
	}
	out := tariffs.Input{Direction: se.Direction, Type: se.Type, Schedule: tf.Data}
	if tf.Name != "" {
		out.DisplayName = &tf.Name
	}
	if tf.ProviderID != "" {
		out.ProviderID = &tf.ProviderID
	}
	if tf.Contract != nil {
		out.ContractStartDate, out.ContractEndDate = tf.Contract.StartDate, tf.Contract.EndDate
	}
	if tf.Type == "MARKET" {
		market := true
		out.MarketRates = &market
	}
	return out, nil
}

// importLocation loads the session as one `kwhouse import` row (a new location with the
// tariff, or the tariff alone onto the location that already has the reference).
func (s *Service) importLocation(ctx context.Context, scope kwhouse.Scope, se ImportSession, tin tariffs.Input) (string, error) {
	ref := se.LocationReferenceID
	li := catalog.LocationInput{ReferenceID: &ref, PostalAddress: se.PostalAddress}
	if se.CustomerID != "" {
		li.CustomerID = &se.CustomerID
	}
	var rejected rejects
	im := onboard.Importer{Catalog: s.catalog, Tariffs: s.tariffs}
	row, err := jsonLine(onboardRow(li, tin))
	if err != nil {
		return "", err
	}
	prog, err := im.Load(ctx, scope, strings.NewReader(row), onboard.NDJSON, onboard.Options{Rejects: &rejected})
	switch {
	case err != nil:
		return "", err
	case prog.Failed > 0:
		return "", kwhouse.Invalid("invalid_row", "tariff", "%s", strings.Join(rejected, "; "))
	}
	found, _, err := s.catalog.ListLocations(ctx, scope, catalog.ListQuery{Limit: 1, Filters: map[string]string{catalog.FilterReferenceID: ref}})
	if err != nil || len(found) == 0 {
		return "", fmt.Errorf("location %q after import: %w", ref, err)
	}
	if prog.Existing > 0 { // the location was there: the row was skipped, tariff included
		tin.LocationID = found[0].ID
		if _, err := s.tariffs.Create(ctx, scope, tin); err != nil {
			return "", err
		}
	}
	return found[0].ID, nil
}

// rejects keeps the reasons of rejected import rows.
type rejects []string

// Reject implements onboard.RejectWriter.
func (r *rejects) Reject(_ int, _, reason string) error {
	*r = append(*r, reason)
	return nil
}
