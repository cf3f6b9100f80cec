package webhooks

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// Delivery is a delivery the API created (POST /webhooks/{id}/test and resend); its
// attempts appear in GET /webhooks/{id}/deliveries.
type Delivery struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	Status     string `json:"status"`
}

// disable stores the disabled endpoint and its webhook.disabled event together.
func (s *Service) disable(ctx context.Context, doc docstore.Doc, e Endpoint) error {
	doc, err := docstore.WithBody(doc, e)
	if err != nil {
		return err
	}
	shown := e
	shown.Secret = ""
	if err := catalog.Commit(ctx, s.docs, doc.Scope, catalog.Change{Doc: doc, EventType: EventDisabled, EventData: shown}); err != nil {
		return fmt.Errorf("disable webhook endpoint %s: %w", e.ID, err)
	}
	s.forget(doc.Scope)
	return nil
}

// Test stores a webhook.test event about the endpoint and a delivery of it to that
// endpoint only.
func (s *Service) Test(ctx context.Context, scope kwhouse.Scope, id string) (Delivery, error) {
	_, e, err := s.load(ctx, scope, id)
	if err != nil {
		return Delivery{}, err
	}
	if e.Disabled {
		return Delivery{}, kwhouse.Invalid("endpoint_disabled", "disabled", "the endpoint is disabled: enable it with PATCH first")
	}
	e.Secret = ""
	ev, err := catalog.RecordEvent(ctx, s.docs, scope, id, EventTest, e)
	if err != nil {
		return Delivery{}, err
	}
	return s.newDelivery(ctx, scope, id, ev.ID, EventTest)
}

// Resend delivers the event of one of the endpoint's deliveries again, as a new delivery
// with its own attempts (the webhook-id stays the event id).
func (s *Service) Resend(ctx context.Context, scope kwhouse.Scope, id, deliveryID string) (Delivery, error) {
	if _, _, err := s.load(ctx, scope, id); err != nil {
		return Delivery{}, err
	}
	if !kwhouse.ValidID(kwhouse.PrefixDelivery, deliveryID) {
		return Delivery{}, kwhouse.NotFound("delivery_id", deliveryID)
	}
	old, err := s.store.find(ctx, id, deliveryID)
	if err != nil {
		return Delivery{}, err
	}
	if old.Scope != scope {
		return Delivery{}, kwhouse.NotFound("delivery_id", deliveryID)
	}
	return s.newDelivery(ctx, scope, id, old.EventID, old.EventType)
}

func (s *Service) newDelivery(ctx context.Context, scope kwhouse.Scope, endpointID, eventID, eventType string) (Delivery, error) {
	now := s.now().UnixMicro()
	st := state{EndpointID: endpointID, DeliveryID: kwhouse.NewID(kwhouse.PrefixDelivery), Scope: scope, EventID: eventID,
		EventType: eventType, CreatedUS: now, TimeUS: now, State: StatePending, NextUS: now}
	if err := s.store.write(ctx, []state{st}); err != nil {
		return Delivery{}, err
	}
	if s.local != nil {
		s.local.enqueueNew(st, nil)
	}
	return Delivery{ID: st.DeliveryID, Object: "webhook_delivery", EndpointID: endpointID, EventID: eventID,
		EventType: eventType, Status: StatePending}, nil
}

// Attempts lists the endpoint's delivery attempts, newest first.
func (s *Service) Attempts(ctx context.Context, scope kwhouse.Scope, id string, q AttemptQuery) ([]Attempt, bool, error) {
	if _, _, err := s.load(ctx, scope, id); err != nil {
		return nil, false, err
	}
	return s.store.attempts(ctx, id, q)
}

// Purge deletes outbox copies and delivery states older than the events' retention.
func (s *Service) Purge(ctx context.Context) error {
	return s.store.Purge(ctx, s.now().Add(-catalog.EventRetention))
}
