package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// Service serves the webhook endpoints of the API and the deliveries they ask for
// (test, resend). Deliveries themselves are made by a Dispatcher.
type Service struct {
	docs         *docstore.Store
	store        *Store
	allowPrivate bool
	now          func() time.Time
	local        *Dispatcher // this process's dispatcher, told of new deliveries at once; nil: none
}

// NewService returns the endpoints service on docs and the deliveries of store.
func NewService(docs *docstore.Store, store *Store, allowPrivate bool) *Service {
	return &Service{docs: docs, store: store, allowPrivate: allowPrivate, now: docs.Now}
}

// SetDispatcher makes deliveries that the API creates (test, resend) go out at once from
// d instead of waiting for a sweep.
func (s *Service) SetDispatcher(d *Dispatcher) { s.local = d }

// Create registers an endpoint; the result carries its signing secret, shown only here
// and by RotateSecret.
func (s *Service) Create(ctx context.Context, scope kwhouse.Scope, in EndpointInput) (Endpoint, error) {
	if err := in.Validate(true, scope.LiveMode, s.allowPrivate); err != nil {
		return Endpoint{}, err
	}
	now := s.now()
	doc := docstore.Doc{Kind: KindEndpoint, ID: kwhouse.NewID(kwhouse.PrefixWebhook), Scope: scope, CreatedUS: now.UnixMicro()}
	e := Endpoint{ID: doc.ID, Object: "webhook_endpoint", LiveMode: scope.LiveMode, AccountID: scope.AccountID,
		TimeCreated: catalog.Timestamp(now), EventTypes: []string{}, Secret: NewSecret()}
	apply(&e, in)
	if err := s.save(ctx, doc, e); err != nil {
		return Endpoint{}, err
	}
	return e, nil
}

// Get returns an endpoint without its secret.
func (s *Service) Get(ctx context.Context, scope kwhouse.Scope, id string) (Endpoint, error) {
	_, e, err := s.load(ctx, scope, id)
	e.Secret = ""
	return e, err
}

// List lists endpoints newest first, without their secrets.
func (s *Service) List(ctx context.Context, scope kwhouse.Scope, q catalog.ListQuery) ([]Endpoint, bool, error) {
	docs, more, err := s.docs.List(ctx, scope, KindEndpoint, docstore.ListQuery{Limit: q.Limit,
		StartingAfter: q.StartingAfter, EndingBefore: q.EndingBefore})
	if err != nil {
		return nil, false, err
	}
	out := make([]Endpoint, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
		out[i].Secret = ""
	}
	return out, more, nil
}

// Update changes url, event_types, description and disabled; enabling an endpoint again
// clears its failure streak.
func (s *Service) Update(ctx context.Context, scope kwhouse.Scope, id string, in EndpointInput) (Endpoint, error) {
	if err := in.Validate(false, scope.LiveMode, s.allowPrivate); err != nil {
		return Endpoint{}, err
	}
	e, err := s.change(ctx, scope, id, func(e *Endpoint) {
		if in.Disabled != nil && !*in.Disabled {
			e.FailingSince = nil
		}
		apply(e, in)
	})
	e.Secret = ""
	return e, err
}

// RotateSecret replaces the signing secret; the next attempt is signed with the new one.
func (s *Service) RotateSecret(ctx context.Context, scope kwhouse.Scope, id string) (Endpoint, error) {
	return s.change(ctx, scope, id, func(e *Endpoint) { e.Secret = NewSecret() })
}

// Delete removes an endpoint; its pending deliveries fail at their next attempt.
func (s *Service) Delete(ctx context.Context, scope kwhouse.Scope, id string) error {
	unlock, err := s.docs.Lock(ctx, "webhook:"+id)
	if err != nil {
		return err
	}
	defer unlock()
	doc, _, err := s.load(ctx, scope, id)
	if err != nil {
		return err
	}
	doc.Deleted = true
	if err := s.docs.Write(ctx, doc); err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	s.forget(scope)
	return nil
}

// change applies edit to the stored endpoint under the endpoint's lock and stores it.
func (s *Service) change(ctx context.Context, scope kwhouse.Scope, id string, edit func(*Endpoint)) (Endpoint, error) {
	unlock, err := s.docs.Lock(ctx, "webhook:"+id)
	if err != nil {
		return Endpoint{}, err
	}
	defer unlock()
	doc, e, err := s.load(ctx, scope, id)
	if err != nil {
		return Endpoint{}, err
	}
	edit(&e)
	return e, s.save(ctx, doc, e)
}

func apply(e *Endpoint, in EndpointInput) {
	if in.URL != nil {
		e.URL = *in.URL
	}
	if in.EventTypes != nil {
		e.EventTypes = append([]string{}, *in.EventTypes...)
	}
	if in.Description != nil {
		e.Description = *in.Description
	}
	if in.Disabled != nil {
		e.Disabled = *in.Disabled
	}
}

func (s *Service) load(ctx context.Context, scope kwhouse.Scope, id string) (docstore.Doc, Endpoint, error) {
	var e Endpoint
	d, err := s.docs.Get(ctx, scope, KindEndpoint, id)
	if err != nil {
		return d, e, err
	}
	return d, e, d.DecodeBody(&e)
}

func (s *Service) save(ctx context.Context, doc docstore.Doc, e Endpoint) error {
	doc, err := docstore.WithBody(doc, e)
	if err != nil {
		return err
	}
	if err := s.docs.Write(ctx, doc); err != nil {
		return fmt.Errorf("save webhook endpoint %s: %w", e.ID, err)
	}
	s.forget(doc.Scope)
	return nil
}

// forget drops this process's cached endpoint list of scope; other processes see the
// change within webhooks.endpoint_cache_ttl.
func (s *Service) forget(scope kwhouse.Scope) {
	if s.local != nil {
		s.local.endpoints.forget(scope)
	}
}
