package catalog

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// Customer is an end customer of the account.
type Customer struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	LiveMode    bool      `json:"live_mode"`
	ReferenceID string    `json:"reference_id,omitempty"`
	Locations   []string  `json:"locations"`
	TimeCreated Timestamp `json:"time_created"`
	AccountID   string    `json:"account_id"`
}

// CustomerInput is the body of POST and PATCH /customers.
type CustomerInput struct {
	ReferenceID *string `json:"reference_id"`
}

// Validate reports the problems of the input.
func (in CustomerInput) Validate() error {
	var p problems
	p.str("reference_id", in.ReferenceID)
	return p.err()
}

// CreateCustomer stores a new customer.
func (c *Catalog) CreateCustomer(ctx context.Context, scope kwhouse.Scope, in CustomerInput) (Customer, error) {
	if err := in.Validate(); err != nil {
		return Customer{}, err
	}
	doc := c.newDoc(scope, KindCustomer, kwhouse.PrefixCustomer)
	cu := Customer{ID: doc.ID, Object: "customer", LiveMode: scope.LiveMode, AccountID: scope.AccountID,
		TimeCreated: Timestamp(doc.Created()), Locations: []string{}}
	if in.ReferenceID != nil {
		cu.ReferenceID = *in.ReferenceID
	}
	return cu, c.saveCustomer(ctx, scope, doc, cu, "customer.create")
}

// UpdateCustomer changes the fields set in in.
func (c *Catalog) UpdateCustomer(ctx context.Context, scope kwhouse.Scope, id string, in CustomerInput) (Customer, error) {
	if err := in.Validate(); err != nil {
		return Customer{}, err
	}
	doc, cu, err := c.loadCustomer(ctx, scope, id)
	if err != nil {
		return Customer{}, err
	}
	if in.ReferenceID != nil {
		cu.ReferenceID = *in.ReferenceID
	}
	return cu, c.saveCustomer(ctx, scope, doc, cu, "customer.update")
}

func (c *Catalog) saveCustomer(ctx context.Context, scope kwhouse.Scope, doc docstore.Doc, cu Customer, event string) error {
	unlock, err := c.claimReference(ctx, scope, KindCustomer, cu.ID, cu.ReferenceID)
	if err != nil {
		return err
	}
	defer unlock()
	stored := cu
	stored.Locations = nil
	doc.Fields = docstore.Fields{ReferenceID: cu.ReferenceID}
	if doc, err = docstore.WithBody(doc, stored); err != nil {
		return err
	}
	if err := Commit(ctx, c.docs, scope, Change{Doc: doc, EventType: event, EventData: cu}); err != nil {
		return fmt.Errorf("save customer %s: %w", cu.ID, err)
	}
	return nil
}

// GetCustomer returns a customer with the ids of its locations.
func (c *Catalog) GetCustomer(ctx context.Context, scope kwhouse.Scope, id string) (Customer, error) {
	_, cu, err := c.loadCustomer(ctx, scope, id)
	return cu, err
}

func (c *Catalog) loadCustomer(ctx context.Context, scope kwhouse.Scope, id string) (docstore.Doc, Customer, error) {
	var cu Customer
	d, err := c.docs.Get(ctx, scope, KindCustomer, id)
	if err != nil {
		return d, cu, err
	}
	if err := d.DecodeBody(&cu); err != nil {
		return d, cu, err
	}
	cu.Locations, err = c.customerLocations(ctx, scope, id)
	return d, cu, err
}

// maxCustomerLocations bounds the locations listed on a customer.
const maxCustomerLocations = 100

func (c *Catalog) customerLocations(ctx context.Context, scope kwhouse.Scope, id string) ([]string, error) {
	docs, _, err := c.docs.List(ctx, scope, KindLocation, docstore.ListQuery{
		Filters: map[docstore.Column]string{docstore.ColCustomerID: id}, Limit: maxCustomerLocations})
	if err != nil {
		return nil, fmt.Errorf("locations of customer %s: %w", id, err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}

// ListCustomers lists customers newest first.
func (c *Catalog) ListCustomers(ctx context.Context, scope kwhouse.Scope, q ListQuery) ([]Customer, bool, error) {
	docs, more, err := c.docs.List(ctx, scope, KindCustomer, q.docQuery(FilterReferenceID))
	if err != nil {
		return nil, false, err
	}
	out := make([]Customer, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
		if out[i].Locations, err = c.customerLocations(ctx, scope, d.ID); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}

// DeleteCustomer deletes a customer. Its locations stay, with customer_id cleared and a
// location.update event each (FlatPeak answers 202, never a conflict); the tombstone and
// every location change are written in one insert, so all are stored or none.
func (c *Catalog) DeleteCustomer(ctx context.Context, scope kwhouse.Scope, id string) error {
	doc, cu, err := c.loadCustomer(ctx, scope, id)
	if err != nil {
		return err
	}
	changes := []Change{{Doc: tombstone(doc), EventType: "customer.delete", EventData: cu}}
	released, err := c.releaseLocations(ctx, scope, id)
	if err != nil {
		return err
	}
	return Commit(ctx, c.docs, scope, append(changes, released...)...)
}

// releaseLocations returns the changes that clear customer_id on every location naming
// the customer, each with its location.update event.
func (c *Catalog) releaseLocations(ctx context.Context, scope kwhouse.Scope, customerID string) ([]Change, error) {
	docs, err := c.docs.ListAll(ctx, scope, KindLocation, docstore.ListQuery{
		Filters: map[docstore.Column]string{docstore.ColCustomerID: customerID}})
	if err != nil {
		return nil, fmt.Errorf("locations of customer %s: %w", customerID, err)
	}
	out := make([]Change, 0, len(docs))
	for _, d := range docs {
		ch, err := c.releaseLocation(ctx, scope, d)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

func (c *Catalog) releaseLocation(ctx context.Context, scope kwhouse.Scope, d docstore.Doc) (Change, error) {
	var l Location
	if err := d.DecodeBody(&l); err != nil {
		return Change{}, err
	}
	l.CustomerID, l.TariffStatus, l.TariffElements = "", nil, nil
	d.Fields.CustomerID = ""
	d, err := docstore.WithBody(d, l)
	if err != nil {
		return Change{}, err
	}
	if err := c.renderLocation(ctx, scope, &l); err != nil {
		return Change{}, err
	}
	return Change{Doc: d, EventType: "location.update", EventData: l}, nil
}
