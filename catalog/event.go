package catalog

import (
	"context"
	"encoding/json"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// Event reports a change of an object.
type Event struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	LiveMode    bool            `json:"live_mode"`
	Type        string          `json:"type"`
	TimeCreated Timestamp       `json:"time_created"`
	Data        json.RawMessage `json:"data"`
	AccountID   string          `json:"account_id"`
}

func (c *Catalog) eventsSince() int64 {
	return c.docs.Now().Add(-EventRetention).UnixMicro()
}

// GetEvent returns an event of the last 90 days.
func (c *Catalog) GetEvent(ctx context.Context, scope kwhouse.Scope, id string) (Event, error) {
	var e Event
	d, err := c.docs.Get(ctx, scope, docstore.KindEvent, id)
	if err != nil {
		return e, err
	}
	if d.CreatedUS < c.eventsSince() {
		return e, kwhouse.NotFound("id", id)
	}
	return e, d.DecodeBody(&e)
}

// ListEvents lists events of the last 90 days, newest first.
func (c *Catalog) ListEvents(ctx context.Context, scope kwhouse.Scope, q ListQuery) ([]Event, bool, error) {
	dq := q.docQuery(FilterEventType, FilterObjectID)
	dq.MinCreatedUS = c.eventsSince()
	dq.Fixed, dq.Filters = dq.Filters, nil // an event is written once: its fields never change
	docs, more, err := c.docs.List(ctx, scope, docstore.KindEvent, dq)
	if err != nil {
		return nil, false, err
	}
	out := make([]Event, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}

// PurgeEvents deletes events older than the retention period. Reads already leave them
// out; this reclaims their space.
func (c *Catalog) PurgeEvents(ctx context.Context) error {
	return c.docs.Purge(ctx, docstore.KindEvent, c.eventsSince())
}
