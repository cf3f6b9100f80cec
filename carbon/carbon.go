// Package carbon stores grid carbon-intensity series (grams CO2e per kWh) as markets store
// prices, and weighs energy by them: grams = kWh × intensity, spread over time exactly as
// prices are.
package carbon

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
)

// KindSeries is the document kind of a series.
const KindSeries = catalog.KindCarbonSeries

// Units names the unit of every carbon value kwhouse answers: grams of CO2 equivalent.
const Units = "gCO2eq"

// Series is a carbon-intensity series of a country's grid.
type Series struct {
	ID          string            `json:"id"`
	Object      string            `json:"object"`
	LiveMode    bool              `json:"live_mode"`
	DisplayName string            `json:"display_name"`
	ReferenceID string            `json:"reference_id,omitempty"`
	CountryCode string            `json:"country_code"`
	Default     bool              `json:"default"` // the series locations of the country use
	TimeCreated catalog.Timestamp `json:"time_created"`
	AccountID   string            `json:"account_id"`
}

// SeriesInput is the body of POST /carbon/series.
type SeriesInput struct {
	DisplayName string  `json:"display_name"`
	ReferenceID *string `json:"reference_id"`
	CountryCode string  `json:"country_code"`
	Default     *bool   `json:"default"`
}

// Validate reports every problem of the input with its field path (kwhouse.Problems).
func (in SeriesInput) Validate() error {
	var p kwhouse.Problems
	if in.DisplayName == "" || len([]rune(in.DisplayName)) > catalog.MaxStringLen {
		p.Add("invalid_value", "display_name", "display_name is 1 to 255 characters")
	}
	if in.ReferenceID != nil && len([]rune(*in.ReferenceID)) > catalog.MaxStringLen {
		p.Add("string_too_long", "reference_id", "at most 255 characters")
	}
	switch {
	case in.CountryCode == "":
		p.Add("parameter_missing", "country_code", "country_code is required")
	case !catalog.ValidCountry(in.CountryCode):
		p.Add("invalid_country", "country_code", "%q is not an ISO 3166-1 alpha-2 country code", in.CountryCode)
	}
	return p.Err()
}

// Store keeps series documents and their intensities.
type Store struct {
	db   *chstore.DB
	docs *docstore.Store
	now  func() time.Time
}

// NewStore returns a Store.
func NewStore(db *chstore.DB, docs *docstore.Store, now func() time.Time) *Store {
	return &Store{db: db, docs: docs, now: now}
}

// Create stores a series. A new default series of a country replaces the earlier one,
// which is updated to default: false in the same insert.
func (s *Store) Create(ctx context.Context, scope kwhouse.Scope, in SeriesInput) (Series, error) {
	if err := in.Validate(); err != nil {
		return Series{}, err
	}
	now := s.now()
	se := Series{ID: kwhouse.NewID(kwhouse.PrefixCarbon), Object: "carbon_series", LiveMode: scope.LiveMode,
		DisplayName: in.DisplayName, CountryCode: in.CountryCode, Default: in.Default != nil && *in.Default,
		TimeCreated: catalog.Timestamp(now), AccountID: scope.AccountID}
	if in.ReferenceID != nil {
		se.ReferenceID = *in.ReferenceID
	}
	doc, err := docstore.WithBody(docstore.Doc{Kind: KindSeries, ID: se.ID, Scope: scope, CreatedUS: now.UnixMicro(),
		Fields: docstore.Fields{ReferenceID: se.ReferenceID}}, se)
	if err != nil {
		return Series{}, err
	}
	changes := []catalog.Change{{Doc: doc, EventType: "carbon_series.create", EventData: se}}
	if se.Default {
		old, unlock, err := catalog.ReplaceDefault[Series](ctx, s.docs, scope, KindSeries, se.CountryCode)
		if err != nil {
			return Series{}, err
		}
		defer unlock()
		changes = append(changes, old...)
	}
	return se, catalog.Commit(ctx, s.docs, scope, changes...)
}

// Get returns a series.
func (s *Store) Get(ctx context.Context, scope kwhouse.Scope, id string) (Series, error) {
	var se Series
	d, err := s.docs.Get(ctx, scope, KindSeries, id)
	if err != nil {
		return se, err
	}
	return se, d.DecodeBody(&se)
}

// DefaultFor returns the id of the default series of country, "" when there is none.
func (s *Store) DefaultFor(ctx context.Context, scope kwhouse.Scope, country string) (string, error) {
	if country == "" {
		return "", nil
	}
	docs, err := catalog.Defaults[Series](ctx, s.docs, scope, KindSeries, country)
	if err != nil || len(docs) == 0 {
		return "", err
	}
	return docs[0].ID, nil
}

// DefaultOf implements catalog.CountryDefault.
func (se Series) DefaultOf() (string, bool) { return se.CountryCode, se.Default }

// ClearDefault implements catalog.CountryDefault.
func (se *Series) ClearDefault() { se.Default = false }
