package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// Device is a metered appliance: a charger, a heat pump, an inverter.
type Device struct {
	ID          string     `json:"id"`
	Object      string     `json:"object"`
	LiveMode    bool       `json:"live_mode"`
	ReferenceID string     `json:"reference_id"`
	LastSeen    *Timestamp `json:"last_seen,omitempty"`
	TimeCreated Timestamp  `json:"time_created"`
	AccountID   string     `json:"account_id"`
}

// DeviceInput is the body of POST and PATCH /devices.
type DeviceInput struct {
	ReferenceID *string `json:"reference_id"`
}

// Validate reports the problems of the input; creating needs a reference_id.
func (in DeviceInput) Validate(creating bool) error {
	var p problems
	if creating && (in.ReferenceID == nil || *in.ReferenceID == "") {
		p.add("parameter_missing", "reference_id", "a device needs a reference_id: your own name for it")
	}
	if !creating && in.ReferenceID != nil && *in.ReferenceID == "" {
		p.add("invalid_value", "reference_id", "a device's reference_id cannot be empty")
	}
	p.str("reference_id", in.ReferenceID)
	return p.err()
}

// CreateDevice stores a new device.
func (c *Catalog) CreateDevice(ctx context.Context, scope kwhouse.Scope, in DeviceInput) (Device, error) {
	if err := in.Validate(true); err != nil {
		return Device{}, err
	}
	doc := c.newDoc(scope, KindDevice, kwhouse.PrefixDevice)
	d := Device{ID: doc.ID, Object: "device", LiveMode: scope.LiveMode, AccountID: scope.AccountID,
		TimeCreated: Timestamp(doc.Created()), ReferenceID: *in.ReferenceID}
	return d, c.saveDevice(ctx, scope, doc, d, "device.create")
}

// UpdateDevice changes the fields set in in.
func (c *Catalog) UpdateDevice(ctx context.Context, scope kwhouse.Scope, id string, in DeviceInput) (Device, error) {
	if err := in.Validate(false); err != nil {
		return Device{}, err
	}
	doc, d, err := c.loadDevice(ctx, scope, id)
	if err != nil {
		return Device{}, err
	}
	if in.ReferenceID != nil {
		d.ReferenceID = *in.ReferenceID
	}
	return d, c.saveDevice(ctx, scope, doc, d, "device.update")
}

func (c *Catalog) saveDevice(ctx context.Context, scope kwhouse.Scope, doc docstore.Doc, d Device, event string) error {
	unlock, err := c.claimReference(ctx, scope, KindDevice, d.ID, d.ReferenceID)
	if err != nil {
		return err
	}
	defer unlock()
	stored := d
	stored.LastSeen = nil // kept apart, by ingestion
	doc.Fields = docstore.Fields{ReferenceID: d.ReferenceID}
	if doc, err = docstore.WithBody(doc, stored); err != nil {
		return err
	}
	if err := Commit(ctx, c.docs, scope, Change{Doc: doc, EventType: event, EventData: d}); err != nil {
		return fmt.Errorf("save device %s: %w", d.ID, err)
	}
	return nil
}

// GetDevice returns a device.
func (c *Catalog) GetDevice(ctx context.Context, scope kwhouse.Scope, id string) (Device, error) {
	_, d, err := c.loadDevice(ctx, scope, id)
	if err != nil {
		return d, err
	}
	devs := []Device{d}
	err = c.withLastSeen(ctx, scope, devs)
	return devs[0], err
}

// DeviceInfo returns a device as stored, without last_seen (for callers that only need
// to know it exists).
func (c *Catalog) DeviceInfo(ctx context.Context, scope kwhouse.Scope, id string) (Device, error) {
	_, d, err := c.loadDevice(ctx, scope, id)
	return d, err
}

func (c *Catalog) loadDevice(ctx context.Context, scope kwhouse.Scope, id string) (docstore.Doc, Device, error) {
	var d Device
	doc, err := c.docs.Get(ctx, scope, KindDevice, id)
	if err != nil {
		return doc, d, err
	}
	return doc, d, doc.DecodeBody(&d)
}

// ListDevices lists devices newest first.
func (c *Catalog) ListDevices(ctx context.Context, scope kwhouse.Scope, q ListQuery) ([]Device, bool, error) {
	docs, more, err := c.docs.List(ctx, scope, KindDevice, q.docQuery(FilterReferenceID))
	if err != nil {
		return nil, false, err
	}
	out := make([]Device, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&out[i]); err != nil {
			return nil, false, err
		}
	}
	return out, more, c.withLastSeen(ctx, scope, out)
}

// DeleteDevice deletes a device. Its meter records stay (they are history).
func (c *Catalog) DeleteDevice(ctx context.Context, scope kwhouse.Scope, id string) error {
	doc, d, err := c.loadDevice(ctx, scope, id)
	if err != nil {
		return err
	}
	return Commit(ctx, c.docs, scope, Change{Doc: tombstone(doc), EventType: "device.delete", EventData: d})
}

// DeviceActivity tells when devices last sent readings; the ingest service provides it.
type DeviceActivity interface {
	LastSeen(ctx context.Context, scope kwhouse.Scope, ids []string) (map[string]time.Time, error)
}

// SeenDevices returns the devices of ids that have ever sent a reading (all of ids when
// the catalog has no DeviceActivity).
func (c *Catalog) SeenDevices(ctx context.Context, scope kwhouse.Scope, ids []string) ([]string, error) {
	if c.activity == nil || len(ids) == 0 {
		return ids, nil
	}
	seen, err := c.activity.LastSeen(ctx, scope, ids)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// withLastSeen fills last_seen of devs.
func (c *Catalog) withLastSeen(ctx context.Context, scope kwhouse.Scope, devs []Device) error {
	if c.activity == nil || len(devs) == 0 {
		return nil
	}
	ids := make([]string, len(devs))
	for i := range devs {
		ids[i] = devs[i].ID
	}
	seen, err := c.activity.LastSeen(ctx, scope, ids)
	if err != nil {
		return err
	}
	for i := range devs {
		if t, ok := seen[devs[i].ID]; ok {
			ts := Timestamp(t)
			devs[i].LastSeen = &ts
		}
	}
	return nil
}
