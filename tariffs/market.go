package tariffs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
)

// Market is a price series (for example a day-ahead market) that tariffs can follow.
type Market struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	LiveMode     bool              `json:"live_mode"`
	DisplayName  string            `json:"display_name"`
	ReferenceID  string            `json:"reference_id,omitempty"`
	CurrencyCode string            `json:"currency_code"`
	CountryCode  string            `json:"country_code,omitempty"`
	Default      bool              `json:"default"` // the country's default market for tariffs without market_id
	TimeCreated  catalog.Timestamp `json:"time_created"`
	AccountID    string            `json:"account_id"`
}

// MarketInput is the body of POST /markets.
type MarketInput struct {
	DisplayName  string  `json:"display_name"`
	ReferenceID  *string `json:"reference_id"`
	CurrencyCode string  `json:"currency_code"`
	CountryCode  *string `json:"country_code"`
	Default      *bool   `json:"default"`
}

// Validate reports every problem of the input with its field path (kwhouse.Problems).
func (in MarketInput) Validate() error {
	var p kwhouse.Problems
	if in.DisplayName == "" || len([]rune(in.DisplayName)) > catalog.MaxStringLen {
		p.Add("invalid_value", "display_name", "display_name is 1 to 255 characters")
	}
	if !catalog.ValidCurrency(in.CurrencyCode) {
		p.Add("invalid_currency", "currency_code", "%q is not an ISO 4217 currency code", in.CurrencyCode)
	}
	if in.ReferenceID != nil && len([]rune(*in.ReferenceID)) > catalog.MaxStringLen {
		p.Add("string_too_long", "reference_id", "at most 255 characters")
	}
	switch {
	case in.CountryCode != nil && !catalog.ValidCountry(*in.CountryCode):
		p.Add("invalid_country", "country_code", "%q is not an ISO 3166-1 alpha-2 country code", *in.CountryCode)
	case in.Default != nil && *in.Default && in.CountryCode == nil:
		p.Add("parameter_missing", "country_code", "a default market needs the country it is the default of")
	}
	return p.Err()
}

// MarketPrice is one interval of a market series, per kWh in major currency units.
type MarketPrice struct {
	StartTime  catalog.Timestamp `json:"start_time"`
	EndTime    catalog.Timestamp `json:"end_time"`
	Price      *float64          `json:"price"`
	Confidence *float64          `json:"confidence"`
}

// PricesResult is the answer of PUT /markets/{id}/prices.
type PricesResult struct {
	Object         string `json:"object"`
	MarketID       string `json:"market_id"`
	PricesAccepted int    `json:"prices_accepted"`
}

// MaxPricesPerRequest bounds one PUT of prices (a year of 15-minute prices fits).
const MaxPricesPerRequest = 40_000

// PricesBound stops reading a body of prices at its first price too many (413).
var PricesBound = catalog.SeriesBound("prices", MaxPricesPerRequest)

// CreateMarket stores a market.
// A new default market of a country replaces the earlier one, which is updated to
// default: false (market.update) in the same insert: one default per country and mode.
func (s *Service) CreateMarket(ctx context.Context, scope kwhouse.Scope, in MarketInput) (Market, error) {
	if err := in.Validate(); err != nil {
		return Market{}, err
	}
	now := s.now()
	m := Market{ID: kwhouse.NewID(kwhouse.PrefixMarket), Object: "market", LiveMode: scope.LiveMode, DisplayName: in.DisplayName,
		CurrencyCode: in.CurrencyCode, TimeCreated: catalog.Timestamp(now), AccountID: scope.AccountID}
	if in.ReferenceID != nil {
		m.ReferenceID = *in.ReferenceID
	}
	if in.CountryCode != nil {
		m.CountryCode = *in.CountryCode
	}
	m.Default = in.Default != nil && *in.Default
	doc, err := docstore.WithBody(docstore.Doc{Kind: KindMarket, ID: m.ID, Scope: scope, CreatedUS: now.UnixMicro(),
		Fields: docstore.Fields{ReferenceID: m.ReferenceID}}, m)
	if err != nil {
		return Market{}, err
	}
	changes := []catalog.Change{{Doc: doc, EventType: "market.create", EventData: m}}
	if m.Default {
		old, unlock, err := catalog.ReplaceDefault[Market](ctx, s.docs, scope, KindMarket, m.CountryCode)
		if err != nil {
			return Market{}, err
		}
		defer unlock()
		changes = append(changes, old...)
	}
	return m, catalog.Commit(ctx, s.docs, scope, changes...)
}

// DefaultOf implements catalog.CountryDefault.
func (m Market) DefaultOf() (string, bool) { return m.CountryCode, m.Default }

// ClearDefault implements catalog.CountryDefault.
func (m *Market) ClearDefault() { m.Default = false }

// defaultMarketOf returns the id of the default market of loc's country: 400
// no_default_market when the account has none.
func (s *Service) defaultMarketOf(ctx context.Context, scope kwhouse.Scope, loc catalog.Location) (string, error) {
	country := ""
	if loc.PostalAddress != nil {
		country = loc.PostalAddress.CountryCode
	}
	var docs []docstore.Doc
	var err error
	if country != "" {
		if docs, err = catalog.Defaults[Market](ctx, s.docs, scope, KindMarket, country); err != nil {
			return "", err
		}
	}
	if len(docs) == 0 {
		return "", kwhouse.Invalid("no_default_market", "market_id",
			"no market_id given and the account has no default market for the location's country %q: send market_id or create one with POST /markets {\"country_code\", \"default\": true}", country)
	}
	return docs[0].ID, nil
}

// GetMarket returns a market.
func (s *Service) GetMarket(ctx context.Context, scope kwhouse.Scope, id string) (Market, error) {
	var m Market
	d, err := s.docs.Get(ctx, scope, KindMarket, id)
	if err != nil {
		return m, err
	}
	return m, d.DecodeBody(&m)
}

// PutPrices stores prices of a market; an interval with the start of a stored one replaces it.
func (s *Service) PutPrices(ctx context.Context, scope kwhouse.Scope, id string, prices []MarketPrice) (PricesResult, error) {
	if _, err := s.GetMarket(ctx, scope, id); err != nil {
		return PricesResult{}, err
	}
	if err := checkPrices(prices); err != nil {
		return PricesResult{}, err
	}
	ver, err := s.docs.Versions().Next(ctx, len(prices))
	if err != nil {
		return PricesResult{}, fmt.Errorf("versions of prices: %w", err)
	}
	ch, err := s.pricesChange(ctx, scope, id, prices)
	if err != nil {
		return PricesResult{}, err
	}
	err = s.priceWrite(ctx, scope, ch, func() error {
		return s.db.InsertRows(ctx, insertPricesStmt, len(prices), func(i int) []any {
			p, conf := prices[i], 1.0
			if p.Confidence != nil {
				conf = *p.Confidence
			}
			return []any{scope.AccountID, scope.LiveByte(), id, p.StartTime.Time().UTC(), p.EndTime.Time().UTC(),
				*p.Price, conf, ver + uint64(i)}
		})
	})
	if err != nil {
		return PricesResult{}, fmt.Errorf("put prices of %s: %w", id, err)
	}
	return PricesResult{Object: "market_prices", MarketID: id, PricesAccepted: len(prices)}, nil
}

// checkPrices reports every missing, non-finite or overlapping interval; params name the
// index.
func checkPrices(prices []MarketPrice) error {
	return catalog.CheckSeries(len(prices), catalog.Series{What: "prices", Max: MaxPricesPerRequest,
		Item: func(i int, prefix string, pr *kwhouse.Problems) catalog.Span {
			p := prices[i]
			switch {
			case p.Price == nil:
				pr.Add("parameter_missing", prefix+".price", "price is required")
			case !kwhouse.Within(*p.Price, kwhouse.MaxPrice):
				pr.Add("invalid_number", prefix+".price", "price must be a number from %g to %g", -kwhouse.MaxPrice, kwhouse.MaxPrice)
			}
			if p.Confidence != nil && (*p.Confidence < 0 || *p.Confidence > 1) {
				pr.Add("invalid_number", prefix+".confidence", "confidence is 0..1")
			}
			return catalog.Span{Start: p.StartTime.Time(), End: p.EndTime.Time()}
		}})
}

// hasPriceAt reports whether the market has a price covering instant t.
func (s *Service) hasPriceAt(ctx context.Context, scope kwhouse.Scope, market string, t int64) (bool, error) {
	var n uint64
	at := time.Unix(t, 0).UTC()
	err := s.db.QueryRow(ctx, countPricesStmt,
		scope.AccountID, scope.LiveByte(), market, at, at.Add(-31*24*time.Hour), at).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("market %s price now: %w", market, err)
	}
	return n > 0, nil
}

var insertPricesStmt = chstore.Register("tariffs.insert_prices", `INSERT INTO market_prices (account_id, live_mode, market_id,
		start_time, end_time, price, confidence, version) VALUES`)

// FINAL filtered on key columns only; end_time (not in the key) is tested outside it.
var countPricesStmt = chstore.Register("tariffs.count_prices", `SELECT count() FROM (SELECT end_time FROM market_prices FINAL
		WHERE account_id = ? AND live_mode = ? AND market_id = ? AND start_time <= ? AND start_time > ?) WHERE end_time > ?`)
