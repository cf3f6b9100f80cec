package query

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/ingest"
)

// InstantCost is the answer of POST /costs/instant (object meter_record).
type InstantCost struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	LiveMode     bool              `json:"live_mode"`
	Direction    string            `json:"direction"`
	TariffRate   string            `json:"tariff_rate"`
	CurrencyCode string            `json:"currency_code"`
	EnergyUnits  string            `json:"energy_units"`
	CarbonUnits  string            `json:"carbon_units"`
	Persisted    bool              `json:"persisted"`
	Request      json.RawMessage   `json:"request"` // the record as sent (FlatPeak echoes it)
	Data         CostItem          `json:"data"`
	TimeCreated  catalog.Timestamp `json:"time_created"`
	AccountID    string            `json:"account_id"`
}

// Instant prices one record given in the request (POST /costs/instant). It only prices:
// storing the record (unless non_persistent) is the caller's, through ingest.
func (c *Pricer) Instant(ctx context.Context, scope kwhouse.Scope, body []byte, flags CostFlags) (InstantCost, error) {
	rec, err := ingest.ParseOne(body)
	if err != nil {
		return InstantCost{}, err
	}
	loc, err := c.catalog.LocationInfo(ctx, scope, rec.LocationID)
	if err != nil {
		return InstantCost{}, refError(err, "location_id", rec.LocationID)
	}
	if rec.DeviceID != "" {
		if _, err := c.catalog.DeviceInfo(ctx, scope, rec.DeviceID); err != nil {
			return InstantCost{}, refError(err, "device_id", rec.DeviceID)
		}
	}
	zone, err := catalog.LoadZone(loc.Timezone)
	if err != nil {
		return InstantCost{}, fmt.Errorf("zone of %s: %w", loc.ID, err)
	}
	a := costArgs{scope: scope, location: rec.LocationID, device: rec.DeviceID, direction: ingest.DirectionName(rec.Direction),
		w0: rec.Start, w1: rec.Start + 1, zone: loc.Timezone, instant: &rec}
	if a.plan, err = c.tariffs.Plan(ctx, scope, rec.LocationID, a.w0, a.w1); err != nil {
		return InstantCost{}, err
	}
	rows, err := c.priceOne(ctx, a)
	if err != nil {
		return InstantCost{}, err
	}
	if err := checkTariffs(rows, a); err != nil {
		return InstantCost{}, err
	}
	if flags.IncludeCarbon {
		if err := c.weighCarbon(ctx, a, loc, rows); err != nil {
			return InstantCost{}, err
		}
	}
	its := items(rows, CostRequest{CostFlags: flags}, zone)
	if len(its) != 1 {
		return InstantCost{}, fmt.Errorf("instant cost gave %d items", len(its))
	}
	out := InstantCost{ID: kwhouse.NewID("mre_"), Object: "meter_record", LiveMode: scope.LiveMode, Direction: a.direction,
		TariffRate: ingest.DirectionName(rec.TariffRate), CurrencyCode: loc.CurrencyCode, EnergyUnits: "WH",
		CarbonUnits: carbon.Units, Request: json.RawMessage(body),
		Data: its[0], TimeCreated: catalog.Timestamp(c.now()), AccountID: scope.AccountID}
	return out, nil
}

func refError(err error, param, id string) error {
	if kwhouse.KindOf(err) == kwhouse.KindNotFound {
		return kwhouse.Invalid("resource_missing", param, "no such object: %s", id)
	}
	return err
}
