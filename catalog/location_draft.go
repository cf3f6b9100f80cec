package catalog

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// LocationDraft is a new location checked as POST /locations checks it, with the change
// (document and location.create event) that stores it.
type LocationDraft struct {
	Location Location
	Change   Change
}

// DraftLocations checks new locations the way POST /locations does, many at once: the
// customers and carbon series they name are looked up together and their reference ids
// claimed together. problems[i] says why ins[i] cannot be created (nil when it can; its
// draft is then drafts[i]). The drafts' reference ids stay claimed until release is
// called: commit the drafts first. err is a store failure, and then nothing is claimed.
func (c *Catalog) DraftLocations(ctx context.Context, scope kwhouse.Scope, ins []LocationInput) (
	drafts []LocationDraft, problems []error, release func(), err error) {
	drafts, problems = make([]LocationDraft, len(ins)), make([]error, len(ins))
	for i, in := range ins {
		drafts[i].Location, problems[i] = c.draftLocation(scope, in)
	}
	if err := c.checkNamedObjects(ctx, scope, drafts, problems); err != nil {
		return nil, nil, func() {}, err
	}
	release, err = c.claimDraftReferences(ctx, scope, drafts, problems)
	if err != nil {
		return nil, nil, func() {}, err
	}
	for i := range drafts {
		if problems[i] == nil {
			drafts[i].Change, problems[i] = locationChange(drafts[i].Location, "location.create")
		}
	}
	return drafts, problems, release, nil
}

// draftLocation is what can be checked of a new location without reading anything.
func (c *Catalog) draftLocation(scope kwhouse.Scope, in LocationInput) (Location, error) {
	if err := in.Validate(); err != nil {
		return Location{}, err
	}
	id, now := kwhouse.NewID(kwhouse.PrefixLocation), c.docs.Now()
	l := Location{ID: id, Object: "location", LiveMode: scope.LiveMode, AccountID: scope.AccountID,
		TimeCreated: Timestamp(time.UnixMicro(now.UnixMicro()).UTC())}
	in.apply(&l)
	// A new location has no tariffs yet: its status needs no read.
	st := DisconnectedStatus()
	l.TariffStatus, l.TariffElements = &st, []string{}
	return l, c.derivePlace(&l, in.Timezone == nil, in.CurrencyCode == nil)
}

// checkNamedObjects makes sure the customers and carbon series the drafts name exist.
func (c *Catalog) checkNamedObjects(ctx context.Context, scope kwhouse.Scope, drafts []LocationDraft, problems []error) error {
	for _, named := range []struct {
		kind, param string
		id          func(*Location) string
	}{
		{KindCustomer, "customer_id", func(l *Location) string { return l.CustomerID }},
		{KindCarbonSeries, "carbon_series_id", func(l *Location) string { return l.CarbonSeriesID }},
	} {
		var ids []string
		for i := range drafts {
			if id := named.id(&drafts[i].Location); problems[i] == nil && id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		exists, err := c.docs.ExistingIDs(ctx, scope, named.kind, ids)
		if err != nil {
			return err
		}
		for i := range drafts {
			if id := named.id(&drafts[i].Location); problems[i] == nil && id != "" && !exists(id) {
				problems[i] = kwhouse.Invalid("resource_missing", named.param, "no such object: %s", id)
			}
		}
	}
	return nil
}

// claimDraftReferences claims the drafts' reference ids; of two drafts with one
// reference id, the first keeps it.
func (c *Catalog) claimDraftReferences(ctx context.Context, scope kwhouse.Scope, drafts []LocationDraft, problems []error) (func(), error) {
	want := map[string]string{}
	for i := range drafts {
		l := &drafts[i].Location
		if problems[i] != nil || l.ReferenceID == "" {
			continue
		}
		if first, dup := want[l.ReferenceID]; dup {
			problems[i] = kwhouse.Conflict("duplicate_reference_id", "reference_id",
				"location %s has reference_id %q too", first, l.ReferenceID)
			continue
		}
		want[l.ReferenceID] = l.ID
	}
	if len(want) == 0 {
		return func() {}, nil
	}
	taken, unlock, err := c.claimReferences(ctx, scope, KindLocation, want)
	if err != nil {
		return nil, err
	}
	for i := range drafts {
		if problems[i] == nil && want[drafts[i].Location.ReferenceID] == drafts[i].Location.ID {
			problems[i] = taken[drafts[i].Location.ReferenceID]
		}
	}
	return unlock, nil
}

// locationChange is the stored document of l (without its tariff-derived fields) and
// the event that reports it.
func locationChange(l Location, event string) (Change, error) {
	stored := l
	stored.TariffStatus, stored.TariffElements = nil, nil
	doc := docstore.Doc{Kind: KindLocation, ID: l.ID, Scope: kwhouse.Scope{AccountID: l.AccountID, LiveMode: l.LiveMode},
		CreatedUS: l.TimeCreated.Time().UnixMicro(),
		Fields:    docstore.Fields{ReferenceID: l.ReferenceID, CustomerID: l.CustomerID}}
	doc, err := docstore.WithBody(doc, stored)
	if err != nil {
		return Change{}, err
	}
	return Change{Doc: doc, EventType: event, EventData: l}, nil
}
