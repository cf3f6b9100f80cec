// Package catalog owns the metadata resources of the API (customers, locations, devices)
// and the events their changes emit: their shapes, validation and rules. Documents are
// kept by docstore; a change and its event are written together.
package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// Document kinds of this package.
const (
	KindCustomer = "customer"
	KindLocation = "location"
	KindDevice   = "device"
	// KindCarbonSeries is the kind of carbon-intensity series (package carbon owns them;
	// locations may name one).
	KindCarbonSeries = "carbon_series"
)

// EventRetention is how long events are kept.
const EventRetention = 90 * 24 * time.Hour

// TariffView tells the catalog about a location's tariffs; the tariffs package provides it.
type TariffView interface {
	LocationTariffs(ctx context.Context, scope kwhouse.Scope, locationID string) (LocationTariffs, error)
	// LocationsCreated says that locations were just created: they have no tariffs yet.
	LocationsCreated(ctx context.Context, scope kwhouse.Scope, ids []string)
}

// LocationTariffs are the tariff-derived fields of a location.
type LocationTariffs struct {
	ElementIDs []string
	Status     TariffStatus
	Detail     map[string]*StatusDetail // by tariff_status slot, for /locations/{id}/status
}

// Catalog serves customers, locations, devices and events.
type Catalog struct {
	docs     *docstore.Store
	tariffs  TariffView
	zones    *ZoneFinder
	activity DeviceActivity
	infos    *docstore.Decoded[Location] // every location of a scope, by document version (LocationInfos)
}

// New returns a Catalog on docs; activity (nil: none) gives devices their last_seen.
// SetTariffView attaches tariff knowledge once the tariffs exist.
func New(docs *docstore.Store, activity DeviceActivity) *Catalog {
	return &Catalog{docs: docs, tariffs: noTariffs{}, zones: NewZoneFinder(), activity: activity,
		infos: docstore.NewDecoded(docs, KindLocation, decodeLocation)}
}

// SetTariffView makes locations show their tariffs. It is the one thing wired after
// construction: a location shows its tariffs and a tariff reads its location, so the
// catalog and the tariffs need each other, and one of them must exist first.
func (c *Catalog) SetTariffView(v TariffView) { c.tariffs = v }

// Docs returns the document store, for packages that keep their own kinds beside these.
func (c *Catalog) Docs() *docstore.Store { return c.docs }

type noTariffs struct{}

func (noTariffs) LocationTariffs(context.Context, kwhouse.Scope, string) (LocationTariffs, error) {
	return LocationTariffs{ElementIDs: []string{}, Status: DisconnectedStatus()}, nil
}

func (noTariffs) LocationsCreated(context.Context, kwhouse.Scope, []string) {}

// Change is a document version plus the event that reports it.
type Change struct {
	Doc       docstore.Doc
	EventType string
	EventData any
}

// Commit stores the documents of changes and one event per change as one insert.
func Commit(ctx context.Context, docs *docstore.Store, scope kwhouse.Scope, changes ...Change) error {
	out := make([]docstore.Doc, 0, 2*len(changes))
	now := docs.Now()
	for _, ch := range changes {
		ev, err := newEvent(scope, ch, now)
		if err != nil {
			return err
		}
		out = append(out, ch.Doc, ev)
	}
	return docs.Write(ctx, out...)
}

// RecordEvent stores an event that reports no stored change of its own (such as a revised
// cost, or a webhook test): objectID names what it is about, data is its data.
func RecordEvent(ctx context.Context, docs *docstore.Store, scope kwhouse.Scope, objectID, eventType string, data any) (Event, error) {
	d, err := newEvent(scope, Change{Doc: docstore.Doc{ID: objectID}, EventType: eventType, EventData: data}, docs.Now())
	if err != nil {
		return Event{}, err
	}
	var e Event
	if err := d.DecodeBody(&e); err != nil {
		return Event{}, err
	}
	if err := docs.Write(ctx, d); err != nil {
		return Event{}, fmt.Errorf("store %s event: %w", eventType, err)
	}
	return e, nil
}

func newEvent(scope kwhouse.Scope, ch Change, now time.Time) (docstore.Doc, error) {
	data, err := json.Marshal(ch.EventData)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("encode %s event: %w", ch.EventType, err)
	}
	e := Event{ID: kwhouse.NewID(kwhouse.PrefixEvent), Object: "event", LiveMode: scope.LiveMode,
		AccountID: scope.AccountID, Type: ch.EventType, TimeCreated: Timestamp(now), Data: data}
	body, err := json.Marshal(e)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("encode event: %w", err)
	}
	return docstore.Doc{Kind: docstore.KindEvent, ID: e.ID, Scope: scope, CreatedUS: now.UnixMicro(),
		Fields: docstore.Fields{ObjectID: ch.Doc.ID, EventType: ch.EventType}, Body: body}, nil
}

// newDoc starts the document of a new object.
func (c *Catalog) newDoc(scope kwhouse.Scope, kind, prefix string) docstore.Doc {
	now := c.docs.Now()
	return docstore.Doc{Kind: kind, ID: kwhouse.NewID(prefix), Scope: scope, CreatedUS: now.UnixMicro()}
}
