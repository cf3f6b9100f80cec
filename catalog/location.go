package catalog

import (
	"context"
	"fmt"
	"math"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// PostalAddress is a location's address.
type PostalAddress struct {
	AddressLine1 string `json:"address_line1,omitempty"`
	AddressLine2 string `json:"address_line2,omitempty"`
	City         string `json:"city,omitempty"`
	State        string `json:"state,omitempty"`
	PostCode     string `json:"post_code,omitempty"`
	CountryCode  string `json:"country_code,omitempty"`
}

// GeoLocation is a point in decimal degrees.
type GeoLocation struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// Location is a customer premises.
type Location struct {
	ID            string         `json:"id"`
	Object        string         `json:"object"`
	LiveMode      bool           `json:"live_mode"`
	ReferenceID   string         `json:"reference_id,omitempty"`
	CustomerID    string         `json:"customer_id,omitempty"`
	Timezone      string         `json:"timezone"`
	CurrencyCode  string         `json:"currency_code"`
	PostalAddress *PostalAddress `json:"postal_address,omitempty"`
	GeoLocation   *GeoLocation   `json:"geo_location,omitempty"`
	// CarbonSeriesID names the carbon-intensity series the location uses instead of its
	// country's default one (docs/costs.md, "Carbon intensity").
	CarbonSeriesID string        `json:"carbon_series_id,omitempty"`
	TariffStatus   *TariffStatus `json:"tariff_status,omitempty"`
	TariffElements []string      `json:"tariff_elements"`
	TimeCreated    Timestamp     `json:"time_created"`
	AccountID      string        `json:"account_id"`
}

// LocationInput is the body of POST and PATCH /locations. Nil fields are left as they are.
type LocationInput struct {
	ReferenceID   *string        `json:"reference_id"`
	CustomerID    *string        `json:"customer_id"`
	Timezone      *string        `json:"timezone"`
	CurrencyCode  *string        `json:"currency_code"`
	PostalAddress *PostalAddress `json:"postal_address"`
	GeoLocation   *GeoLocation   `json:"geo_location"`
	// CarbonSeriesID: "" clears it (the country's default series again).
	CarbonSeriesID *string `json:"carbon_series_id"`
}

// Validate reports the problems of the input on its own.
func (in LocationInput) Validate() error {
	var p problems
	p.str("reference_id", in.ReferenceID)
	if in.CustomerID != nil {
		p.ID("customer_id", kwhouse.PrefixCustomer, *in.CustomerID, false)
	}
	if in.CarbonSeriesID != nil {
		p.ID("carbon_series_id", kwhouse.PrefixCarbon, *in.CarbonSeriesID, false)
	}
	if in.Timezone != nil && !ValidZone(*in.Timezone) {
		p.add("invalid_timezone", "timezone", "%q is not a time zone kwhouse accepts: an IANA zone such as Europe/London, Etc/GMT-1 or UTC", *in.Timezone)
	}
	if in.CurrencyCode != nil && !ValidCurrency(*in.CurrencyCode) {
		p.add("invalid_currency", "currency_code", "%q is not an ISO 4217 currency code such as GBP", *in.CurrencyCode)
	}
	if a := in.PostalAddress; a != nil {
		for param, v := range map[string]string{"address_line1": a.AddressLine1, "address_line2": a.AddressLine2,
			"city": a.City, "state": a.State, "post_code": a.PostCode} {
			p.text("postal_address."+param, v)
		}
		if a.CountryCode != "" && !ValidCountry(a.CountryCode) {
			p.add("invalid_country", "postal_address.country_code", "%q is not an ISO 3166-1 alpha-2 code such as GB", a.CountryCode)
		}
	}
	if g := in.GeoLocation; g != nil {
		if math.IsNaN(g.Lat) || g.Lat < -90 || g.Lat > 90 {
			p.add("invalid_coordinate", "geo_location.lat", "latitude must be within -90..90")
		}
		if math.IsNaN(g.Lng) || g.Lng < -180 || g.Lng > 180 {
			p.add("invalid_coordinate", "geo_location.lng", "longitude must be within -180..180")
		}
	}
	return p.err()
}

// apply copies the set fields of in onto l.
func (in LocationInput) apply(l *Location) {
	if in.ReferenceID != nil {
		l.ReferenceID = *in.ReferenceID
	}
	if in.CustomerID != nil {
		l.CustomerID = *in.CustomerID
	}
	if in.Timezone != nil {
		l.Timezone = *in.Timezone
	}
	if in.CurrencyCode != nil {
		l.CurrencyCode = *in.CurrencyCode
	}
	if in.PostalAddress != nil {
		l.PostalAddress = in.PostalAddress
	}
	if in.GeoLocation != nil {
		l.GeoLocation = in.GeoLocation
	}
	if in.CarbonSeriesID != nil {
		l.CarbonSeriesID = *in.CarbonSeriesID
	}
}

// CreateLocation stores a new location, deriving its zone and currency when not given.
func (c *Catalog) CreateLocation(ctx context.Context, scope kwhouse.Scope, in LocationInput) (Location, error) {
	drafts, problems, release, err := c.DraftLocations(ctx, scope, []LocationInput{in})
	if err != nil {
		return Location{}, err
	}
	defer release()
	if problems[0] != nil {
		return Location{}, problems[0]
	}
	if err := Commit(ctx, c.docs, scope, drafts[0].Change); err != nil {
		return Location{}, fmt.Errorf("save location %s: %w", drafts[0].Location.ID, err)
	}
	c.tariffs.LocationsCreated(ctx, scope, []string{drafts[0].Location.ID})
	return drafts[0].Location, nil
}

// UpdateLocation changes the fields set in in.
func (c *Catalog) UpdateLocation(ctx context.Context, scope kwhouse.Scope, id string, in LocationInput) (Location, error) {
	if err := in.Validate(); err != nil {
		return Location{}, err
	}
	_, l, err := c.loadLocation(ctx, scope, id)
	if err != nil {
		return Location{}, err
	}
	placeChanged := in.PostalAddress != nil || in.GeoLocation != nil
	in.apply(&l)
	return l, c.saveLocation(ctx, scope, &l, "location.update",
		in.Timezone == nil && placeChanged, in.CurrencyCode == nil && placeChanged)
}

func (c *Catalog) saveLocation(ctx context.Context, scope kwhouse.Scope, l *Location,
	event string, deriveZone, deriveCurrency bool) error {
	if err := c.derivePlace(l, deriveZone, deriveCurrency); err != nil {
		return err
	}
	if l.CustomerID != "" {
		if _, err := c.docs.Get(ctx, scope, KindCustomer, l.CustomerID); err != nil {
			return missingRef(err, "customer_id", l.CustomerID)
		}
	}
	if l.CarbonSeriesID != "" {
		if _, err := c.docs.Get(ctx, scope, KindCarbonSeries, l.CarbonSeriesID); err != nil {
			return missingRef(err, "carbon_series_id", l.CarbonSeriesID)
		}
	}
	unlock, err := c.claimReference(ctx, scope, KindLocation, l.ID, l.ReferenceID)
	if err != nil {
		return err
	}
	defer unlock()
	ch, err := locationChange(*l, event)
	if err != nil {
		return err
	}
	if l.TariffStatus == nil {
		if err := c.renderLocation(ctx, scope, l); err != nil {
			return err
		}
	}
	ch.EventData = l
	if err := Commit(ctx, c.docs, scope, ch); err != nil {
		return fmt.Errorf("save location %s: %w", l.ID, err)
	}
	return nil
}

// derivePlace fills the zone and currency from the address and coordinates.
func (c *Catalog) derivePlace(l *Location, zone, currency bool) error {
	country := ""
	if l.PostalAddress != nil {
		country = l.PostalAddress.CountryCode
	}
	if zone {
		tz, err := c.zoneOf(country, l.GeoLocation)
		if err != nil {
			return err
		}
		l.Timezone = tz
	}
	if currency {
		cur := CountryCurrency(country)
		if cur == "" {
			return kwhouse.Invalid("currency_required", "currency_code",
				"give currency_code, or postal_address.country_code to derive it from")
		}
		l.CurrencyCode = cur
	}
	return nil
}

func (c *Catalog) zoneOf(country string, geo *GeoLocation) (string, error) {
	zones := c.zones.CountryZones(country)
	if tz, one := c.zones.CountryZone(country, c.docs.Now()); one {
		return tz, nil
	}
	if geo != nil {
		tz, err := c.zones.AtPoint(geo.Lat, geo.Lng)
		if err != nil {
			return "", fmt.Errorf("time zone at %v,%v: %w", geo.Lat, geo.Lng, err)
		}
		if tz != "" && ValidZone(tz) {
			return tz, nil
		}
	}
	if len(zones) > 1 {
		return "", kwhouse.Invalid("timezone_required", "timezone",
			"%s spans several time zones: give timezone or geo_location", country)
	}
	return "", kwhouse.Invalid("timezone_required", "timezone",
		"give timezone, or postal_address.country_code or geo_location to derive it from")
}

// GetLocation returns a location with its tariff-derived fields.
func (c *Catalog) GetLocation(ctx context.Context, scope kwhouse.Scope, id string) (Location, error) {
	_, l, err := c.loadLocation(ctx, scope, id)
	if err != nil {
		return Location{}, err
	}
	return l, c.renderLocation(ctx, scope, &l)
}

// LocationInfo returns a location as stored, without its tariff-derived fields (for
// callers that need only its zone and currency).
func (c *Catalog) LocationInfo(ctx context.Context, scope kwhouse.Scope, id string) (Location, error) {
	_, l, err := c.loadLocation(ctx, scope, id)
	return l, err
}

func (c *Catalog) loadLocation(ctx context.Context, scope kwhouse.Scope, id string) (docstore.Doc, Location, error) {
	var l Location
	d, err := c.docs.Get(ctx, scope, KindLocation, id)
	if err != nil {
		return d, l, err
	}
	return d, l, d.DecodeBody(&l)
}

func (c *Catalog) renderLocation(ctx context.Context, scope kwhouse.Scope, l *Location) error {
	lt, err := c.tariffs.LocationTariffs(ctx, scope, l.ID)
	if err != nil {
		return fmt.Errorf("tariffs of location %s: %w", l.ID, err)
	}
	st := lt.Status
	l.TariffStatus, l.TariffElements = &st, lt.ElementIDs
	if l.TariffElements == nil {
		l.TariffElements = []string{}
	}
	return nil
}

// LocationStatus returns the body of GET /locations/{id}/status.
func (c *Catalog) LocationStatus(ctx context.Context, scope kwhouse.Scope, id string) (LocationStatus, error) {
	_, l, err := c.loadLocation(ctx, scope, id)
	if err != nil {
		return LocationStatus{}, err
	}
	lt, err := c.tariffs.LocationTariffs(ctx, scope, id)
	if err != nil {
		return LocationStatus{}, fmt.Errorf("tariffs of location %s: %w", id, err)
	}
	return LocationStatus{ID: l.ID, Object: "location_status", LiveMode: l.LiveMode, ReferenceID: l.ReferenceID,
		CustomerID: l.CustomerID, Timezone: l.Timezone, CurrencyCode: l.CurrencyCode, PostalAddress: l.PostalAddress,
		GeoLocation: l.GeoLocation, TariffStatus: statusDetails(lt), TimeCreated: l.TimeCreated, AccountID: l.AccountID}, nil
}

// ListLocations lists locations newest first.
func (c *Catalog) ListLocations(ctx context.Context, scope kwhouse.Scope, q ListQuery) ([]Location, bool, error) {
	docs, more, err := c.docs.List(ctx, scope, KindLocation, q.docQuery(FilterReferenceID, FilterCustomerID))
	if err != nil {
		return nil, false, err
	}
	out := make([]Location, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
		if err := c.renderLocation(ctx, scope, &out[i]); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}

// LocationDeleteHook removes what hangs off a location (its tariffs) as changes committed
// with the location's own deletion.
type LocationDeleteHook func(ctx context.Context, scope kwhouse.Scope, locationID string) ([]Change, error)

// DeleteLocation deletes a location and, through hooks, what belongs to it.
func (c *Catalog) DeleteLocation(ctx context.Context, scope kwhouse.Scope, id string, hooks ...LocationDeleteHook) error {
	doc, l, err := c.loadLocation(ctx, scope, id)
	if err != nil {
		return err
	}
	if err := c.renderLocation(ctx, scope, &l); err != nil {
		return err
	}
	changes := []Change{{Doc: tombstone(doc), EventType: "location.delete", EventData: l}}
	for _, h := range hooks {
		more, err := h(ctx, scope, id)
		if err != nil {
			return err
		}
		changes = append(changes, more...)
	}
	return Commit(ctx, c.docs, scope, changes...)
}

func tombstone(d docstore.Doc) docstore.Doc {
	d.Deleted = true
	return d
}

// LocationInfos returns every location of the scope as stored (as LocationInfo does for
// one), of one customer when customerID is set, in one read. Locations share their
// pointer fields with other reads: callers must not modify them.
func (c *Catalog) LocationInfos(ctx context.Context, scope kwhouse.Scope, customerID string) ([]Location, error) {
	if customerID == "" {
		out, err := c.infos.All(ctx, scope)
		if err != nil {
			return nil, fmt.Errorf("locations: %w", err)
		}
		return out, nil
	}
	q := docstore.ListQuery{}
	if customerID != "" {
		q.Filters = map[docstore.Column]string{docstore.ColCustomerID: customerID}
	}
	docs, err := c.docs.ListAll(ctx, scope, KindLocation, q)
	if err != nil {
		return nil, fmt.Errorf("locations: %w", err)
	}
	out := make([]Location, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodeLocation(d docstore.Doc) (Location, error) {
	var l Location
	err := d.DecodeBody(&l)
	return l, err
}
