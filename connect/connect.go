// Package connect lets an end customer enter their own tariff: an account asks for a
// single-use token, the customer fills in kwhouse's hosted page (a tariff from the
// account's templates, or a schedule they build), and the account exchanges the
// completed token for the location it priced (FlatPeak's connect operations;
// docs/connect.md). A batch import creates locations and tariffs without the page.
package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/onboard"
	"github.com/kwhouse/kwhouse/tariffs"
)

// KindToken is the document kind of connect tokens.
const KindToken = "connect_token"

// PrefixToken starts every connect token.
const PrefixToken = "cot_"

// Token states.
const (
	StatePending   = "pending"   // the page has not been completed
	StateCompleted = "completed" // a tariff was saved; the token may be exchanged once
	StateExchanged = "exchanged" // used
)

// Token is a connect session, stored as a document.
type Token struct {
	ID                  string                 `json:"id"`
	Object              string                 `json:"object"`
	LiveMode            bool                   `json:"live_mode"`
	State               string                 `json:"state"`
	Direction           string                 `json:"direction"`
	Type                string                 `json:"type"`
	CallbackURI         string                 `json:"callback_uri"`
	CustomerID          string                 `json:"customer_id,omitempty"`
	LocationID          string                 `json:"location_id,omitempty"`
	LocationReferenceID string                 `json:"location_reference_id,omitempty"`
	PostalAddress       *catalog.PostalAddress `json:"postal_address,omitempty"`
	TariffID            string                 `json:"tariff_id,omitempty"`
	TimeCreated         catalog.Timestamp      `json:"time_created"`
	TimeExpiry          catalog.Timestamp      `json:"time_expiry"`
	AccountID           string                 `json:"account_id"`
}

// Service runs connect sessions.
type Service struct {
	catalog *catalog.Catalog
	tariffs *tariffs.Service
	docs    *docstore.Store
	ttl     time.Duration
	now     func() time.Time
}

// New returns a Service whose tokens live ttl.
func New(cat *catalog.Catalog, trf *tariffs.Service, docs *docstore.Store, ttl time.Duration, now func() time.Time) *Service {
	return &Service{catalog: cat, tariffs: trf, docs: docs, ttl: ttl, now: now}
}

// InitInput is FlatPeak's ConnectInitTariff body.
type InitInput struct {
	Direction           string                 `json:"direction"`
	Type                string                 `json:"type"`
	CallbackURI         string                 `json:"callback_uri"`
	ConnectWebURI       string                 `json:"connect_web_uri"`
	CustomerID          string                 `json:"customer_id"`
	CustomerReferenceID string                 `json:"customer_reference_id"`
	LocationID          string                 `json:"location_id"`
	LocationReferenceID string                 `json:"location_reference_id"`
	TariffID            string                 `json:"tariff_id"`
	PostalAddress       *catalog.PostalAddress `json:"postal_address"`
}

// InitResult is FlatPeak's ConnectInitTariff answer, with the page's address.
type InitResult struct {
	ConnectToken string `json:"connect_token"`
	ExpiresIn    int64  `json:"expires_in"`
	LiveMode     bool   `json:"live_mode"`
	ConnectURL   string `json:"connect_url"` // kwhouse's own: the hosted page
}

// validate reports every problem of the input (kwhouse.Problems).
func (in *InitInput) validate() error {
	var p kwhouse.Problems
	if in.Direction == "" {
		in.Direction = tariffs.Import
	}
	if in.Type == "" {
		in.Type = tariffs.Commodity
	}
	if in.Direction != tariffs.Import && in.Direction != tariffs.Export {
		p.Add("invalid_value", "direction", "direction must be IMPORT or EXPORT")
	}
	if in.Type != tariffs.Commodity && in.Type != tariffs.NonCommodity {
		p.Add("invalid_value", "type", "type must be COMMODITY or NON_COMMODITY")
	}
	if u, err := url.Parse(in.CallbackURI); in.CallbackURI == "" {
		p.Add("parameter_missing", "callback_uri", "callback_uri is required: where the page sends the customer when done")
	} else if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		p.Add("invalid_value", "callback_uri", "callback_uri must be an absolute http(s) URL")
	}
	if in.LocationID != "" && in.LocationReferenceID != "" {
		p.Add("invalid_value", "location_reference_id", "give location_id or location_reference_id, not both")
	}
	p.ID("location_id", kwhouse.PrefixLocation, in.LocationID, false)
	p.ID("customer_id", kwhouse.PrefixCustomer, in.CustomerID, false)
	if in.CustomerReferenceID != "" || in.TariffID != "" {
		field := "customer_reference_id"
		if in.TariffID != "" {
			field = "tariff_id"
		}
		p.Add("unsupported_field", field, "%s is not supported: give customer_id and location_id or location_reference_id", field)
	}
	return p.Err()
}

// Create starts a session: a pending token and the page's address under base (the
// service's own URL as the caller reached it).
func (s *Service) Create(ctx context.Context, scope kwhouse.Scope, in InitInput, base string) (InitResult, error) {
	if err := in.validate(); err != nil {
		return InitResult{}, err
	}
	if in.LocationID != "" {
		if _, err := s.catalog.LocationInfo(ctx, scope, in.LocationID); err != nil {
			return InitResult{}, refError(err, "location_id", in.LocationID)
		}
	}
	if in.CustomerID != "" {
		if _, err := s.catalog.GetCustomer(ctx, scope, in.CustomerID); err != nil {
			return InitResult{}, refError(err, "customer_id", in.CustomerID)
		}
	}
	now := s.now().UTC().Truncate(time.Second)
	t := Token{ID: kwhouse.NewID(PrefixToken), Object: "connect_token", LiveMode: scope.LiveMode, State: StatePending,
		Direction: in.Direction, Type: in.Type, CallbackURI: in.CallbackURI, CustomerID: in.CustomerID, LocationID: in.LocationID,
		LocationReferenceID: in.LocationReferenceID, PostalAddress: in.PostalAddress,
		TimeCreated: catalog.Timestamp(now), TimeExpiry: catalog.Timestamp(now.Add(s.ttl)), AccountID: scope.AccountID}
	if err := s.save(ctx, scope, t); err != nil {
		return InitResult{}, err
	}
	return InitResult{ConnectToken: t.ID, ExpiresIn: int64(s.ttl.Seconds()), LiveMode: scope.LiveMode,
		ConnectURL: base + PagePath(scope, t.ID)}, nil
}

// PagePath is where a token's page is served: the account and mode are in the path, the
// token is the credential.
func PagePath(scope kwhouse.Scope, token string) string {
	mode := "test"
	if scope.LiveMode {
		mode = "live"
	}
	return "/connect/tariff/pages/" + scope.AccountID + "/" + mode + "/" + token
}

func (s *Service) save(ctx context.Context, scope kwhouse.Scope, t Token) error {
	created := time.Time(t.TimeCreated)
	doc := docstore.Doc{Kind: KindToken, ID: t.ID, Scope: scope, CreatedUS: created.UnixMicro(),
		Fields: docstore.Fields{LocationID: t.LocationID}}
	doc, err := docstore.WithBody(doc, t)
	if err != nil {
		return err
	}
	if err := s.docs.Write(ctx, doc); err != nil {
		return fmt.Errorf("store connect token %s: %w", t.ID, err)
	}
	return nil
}

// load returns a token that is neither unknown nor expired (404 otherwise).
func (s *Service) load(ctx context.Context, scope kwhouse.Scope, id string) (Token, error) {
	var t Token
	if !kwhouse.ValidID(PrefixToken, id) {
		return t, kwhouse.NotFound("connect_token", id)
	}
	doc, err := s.docs.Get(ctx, scope, KindToken, id)
	if err != nil {
		if kwhouse.KindOf(err) == kwhouse.KindNotFound {
			return t, kwhouse.NotFound("connect_token", id)
		}
		return t, err
	}
	if err := doc.DecodeBody(&t); err != nil {
		return t, err
	}
	if !s.now().Before(time.Time(t.TimeExpiry)) {
		return t, &kwhouse.Error{Kind: kwhouse.KindNotFound, Code: "token_expired", Param: "connect_token",
			Message: fmt.Sprintf("connect token %s expired at %s", id, time.Time(t.TimeExpiry).Format(time.RFC3339))}
	}
	return t, nil
}

func refError(err error, param, id string) error {
	if kwhouse.KindOf(err) == kwhouse.KindNotFound {
		return kwhouse.Invalid("resource_missing", param, "no such object: %s", id)
	}
	return err
}

// onboardRow is a batch session as a `kwhouse import` row.
func onboardRow(loc catalog.LocationInput, in tariffs.Input) onboard.Row {
	ts := []tariffs.Input{in}
	return onboard.Row{LocationInput: loc, Tariffs: &ts}
}

// jsonLine is v as one NDJSON line.
func jsonLine(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode import row: %w", err)
	}
	return string(b) + "\n", nil
}
