package connect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// RateRows is how many rate rows the page's schedule builder offers.
const RateRows = 4

// maxTemplates bounds the account's tariffs the page offers as templates.
const maxTemplates = 20

// Form is what the page sends: a template (an account tariff whose schedule is copied)
// or rate rows (local HH:MM from, to, price per kWh, every day), a name and a contract.
type Form struct {
	Template      string
	DisplayName   string
	ContractStart string // YYYY-MM-DD, default today
	ContractEnd   string // YYYY-MM-DD, default a year after the start
	Rows          [RateRows]RateRow
}

// RateRow is one row of the schedule builder.
type RateRow struct{ From, To, Price string }

// View is what the page shows.
type View struct {
	Token     Token
	Templates []Template
	Form      Form
	Problem   *kwhouse.Error // the refusal of the last submission, naming the field
	Done      bool
	Callback  string // where the customer goes when done
}

// Template is an account tariff the customer may choose.
type Template struct{ ID, Name string }

// Page returns the page of a pending token (404 for unknown or expired ones, 409 for
// completed ones).
func (s *Service) Page(ctx context.Context, scope kwhouse.Scope, id string) (View, error) {
	t, err := s.load(ctx, scope, id)
	if err != nil {
		return View{}, err
	}
	if t.State != StatePending {
		return View{}, kwhouse.Conflict("token_used", "connect_token", "this connect session is already complete")
	}
	v := View{Token: t, Form: Form{Rows: [RateRows]RateRow{{From: "00:00", To: "00:00"}}}}
	v.Templates, err = s.templates(ctx, scope, t)
	return v, err
}

// templates are the account's schedule tariffs of the token's direction and type.
func (s *Service) templates(ctx context.Context, scope kwhouse.Scope, t Token) ([]Template, error) {
	list, _, err := s.tariffs.List(ctx, scope, tariffs.ListQuery{ListQuery: catalog.ListQuery{Limit: maxTemplates},
		Direction: t.Direction, Type: t.Type})
	if err != nil {
		return nil, err
	}
	var out []Template
	for _, tf := range list {
		if !tf.MarketRates {
			out = append(out, Template{ID: tf.ID, Name: cmpOr(tf.DisplayName, tf.ID)})
		}
	}
	return out, nil
}

// Submit saves the customer's tariff: it creates the location when the token names none
// (or finds it by location_reference_id), then the tariff with the API's own checks, and
// completes the token. A refused tariff comes back as the view's Problem.
func (s *Service) Submit(ctx context.Context, scope kwhouse.Scope, id string, f Form) (View, error) {
	unlock, err := s.docs.Lock(ctx, "connect/"+id)
	if err != nil {
		return View{}, err
	}
	defer unlock()
	v, err := s.Page(ctx, scope, id)
	if err != nil {
		return v, err
	}
	v.Form = f
	in, err := s.tariffInput(ctx, scope, v.Token, f)
	if err == nil {
		err = in.Check() // before a location is created for it
	}
	if err == nil {
		err = s.complete(ctx, scope, &v.Token, in)
	}
	if e := kwhouse.AsError(err); e != nil && e.Kind == kwhouse.KindInvalid {
		v.Problem = e
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Done, v.Callback = true, callback(v.Token)
	return v, nil
}

// complete creates the location (once) and the tariff, and marks the token completed.
func (s *Service) complete(ctx context.Context, scope kwhouse.Scope, t *Token, in tariffs.Input) error {
	if t.LocationID == "" {
		loc, err := s.location(ctx, scope, *t)
		if err != nil {
			return err
		}
		t.LocationID = loc
		if err := s.save(ctx, scope, *t); err != nil { // a refused tariff leaves the location to the next try
			return err
		}
	}
	in.LocationID = t.LocationID
	tf, err := s.tariffs.Create(ctx, scope, in)
	if err != nil {
		return err
	}
	t.TariffID, t.State = tf.ID, StateCompleted
	return s.save(ctx, scope, *t)
}

// location finds the token's location by its reference, or creates it.
func (s *Service) location(ctx context.Context, scope kwhouse.Scope, t Token) (string, error) {
	ref := cmpOr(t.LocationReferenceID, t.ID)
	found, _, err := s.catalog.ListLocations(ctx, scope, catalog.ListQuery{Limit: 1, Filters: map[string]string{catalog.FilterReferenceID: ref}})
	if err != nil || len(found) > 0 {
		if len(found) > 0 {
			return found[0].ID, nil
		}
		return "", err
	}
	in := catalog.LocationInput{ReferenceID: &ref, PostalAddress: t.PostalAddress}
	if t.CustomerID != "" {
		in.CustomerID = &t.CustomerID
	}
	loc, err := s.catalog.CreateLocation(ctx, scope, in)
	return loc.ID, err
}

// tariffInput turns the form into the body of POST /tariffs/elements (without location).
func (s *Service) tariffInput(ctx context.Context, scope kwhouse.Scope, t Token, f Form) (tariffs.Input, error) {
	in := tariffs.Input{Direction: t.Direction, Type: t.Type}
	name := strings.TrimSpace(f.DisplayName)
	if name != "" {
		in.DisplayName = &name
	}
	start, end, err := s.contract(f)
	if err != nil {
		return in, err
	}
	in.ContractStartDate, in.ContractEndDate = &start, &end
	if f.Template != "" {
		tf, err := s.tariffs.Get(ctx, scope, f.Template)
		if err != nil || tf.MarketRates || tf.Direction != t.Direction || tf.Type != t.Type {
			return in, kwhouse.Invalid("invalid_value", "template", "choose one of the listed tariffs")
		}
		in.Schedule = tf.Schedule
		return in, nil
	}
	in.Schedule, err = schedule(f.Rows)
	return in, err
}

func (s *Service) contract(f Form) (catalog.Timestamp, catalog.Timestamp, error) {
	start := s.now().UTC().Truncate(24 * time.Hour)
	if f.ContractStart != "" {
		t, err := time.Parse(time.DateOnly, f.ContractStart)
		if err != nil {
			return catalog.Timestamp{}, catalog.Timestamp{}, kwhouse.Invalid("invalid_value", "contract_start_date", "a date such as 2024-01-31")
		}
		start = t
	}
	end := start.AddDate(1, 0, 0)
	if f.ContractEnd != "" {
		t, err := time.Parse(time.DateOnly, f.ContractEnd)
		if err != nil {
			return catalog.Timestamp{}, catalog.Timestamp{}, kwhouse.Invalid("invalid_value", "contract_end_date", "a date such as 2025-01-31")
		}
		end = t
	}
	return catalog.Timestamp(start), catalog.Timestamp(end), nil
}

// schedule builds an every-day schedule of the filled rows; the tariffs package checks it
// (a day not fully covered is refused as the API refuses it).
func schedule(rows [RateRows]RateRow) (tariffs.Schedule, error) {
	var hours []tariffs.HourRange
	for i, r := range rows {
		if strings.TrimSpace(r.Price) == "" {
			continue
		}
		price, err := strconv.ParseFloat(strings.TrimSpace(r.Price), 64)
		if err != nil {
			return nil, kwhouse.Invalid("invalid_value", fmt.Sprintf("rows[%d].price", i), "the price must be a number such as 0.245")
		}
		hours = append(hours, tariffs.HourRange{ValidFrom: clock(r.From), ValidTo: clock(r.To), Rate: []tariffs.Band{{Fixed: &price}}})
	}
	if len(hours) == 0 {
		return nil, kwhouse.Invalid("parameter_missing", "rows[0].price", "enter at least one rate, or choose a tariff")
	}
	return tariffs.Schedule{{Months: []string{"All"}, DaysAndHours: []tariffs.DaysAndHour{{Days: []tariffs.DayName{"All"}, Hours: hours}}}}, nil
}

// clock turns the page's HH:MM into the schedule's HH:MM:SS.
func clock(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 5 {
		return s + ":00"
	}
	return s
}

// callback is the callback URI with the token added, where the customer goes when done.
func callback(t Token) string {
	sep := "?"
	if strings.Contains(t.CallbackURI, "?") {
		sep = "&"
	}
	return t.CallbackURI + sep + "connect_token=" + t.ID
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
