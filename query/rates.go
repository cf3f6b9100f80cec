package query

import (
	"context"
	"math"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
)

// RateValue is the price of a period.
type RateValue struct {
	Rate       Amount      `json:"rate"`
	Confidence Amount      `json:"confidence"`
	Components *Components `json:"components,omitempty"`
}

// RateItem is one period of the timeline.
type RateItem struct {
	ValidFrom catalog.Timestamp `json:"valid_from"`
	ValidTo   catalog.Timestamp `json:"valid_to"`
	Tariff    RateValue         `json:"tariff"`
	Carbon    *RateCarbon       `json:"carbon,omitempty"` // with include_carbon
}

// RateCarbon is the grid's carbon intensity over a period, as FlatPeak has it: grams CO2e
// per kWh, its place between the window's lowest (0) and highest (1), and its confidence
// (0 where no intensity is known).
type RateCarbon struct {
	Intensity  Amount `json:"intensity"`
	Relative   Amount `json:"relative"`
	Confidence Amount `json:"confidence"`
}

// RatesRequestEcho repeats a timeline request.
type RatesRequestEcho struct {
	IncludeTariff bool              `json:"include_tariff"`
	IncludeCarbon bool              `json:"include_carbon"`
	Direction     string            `json:"direction"`
	StartTime     catalog.Timestamp `json:"start_time"`
	EndTime       catalog.Timestamp `json:"end_time"`
}

// TariffRates is the tariff_rate response of GET /tariffs/rates/{location_id}.
type TariffRates struct {
	LocationAnswer
	CarbonUnits string            `json:"carbon_units,omitempty"` // with include_carbon
	LastUpdated catalog.Timestamp `json:"last_updated"`
	NextUpdate  catalog.Timestamp `json:"next_update"`
	Request     RatesRequestEcho  `json:"request"`
	Data        []RateItem        `json:"data"`
	TimeCreated catalog.Timestamp `json:"time_created"`
	AccountID   string            `json:"account_id"`
}

// RatesRequest asks for a location's price timeline.
type RatesRequest struct {
	LocationID    string
	Direction     string
	Start, End    time.Time
	IncludeTariff bool
	IncludeCarbon bool // cut the timeline at intensity changes too and add carbon (docs/costs.md, "Carbon intensity")
}

// Rates returns the price timeline of a location (import = commodity + non-commodity,
// first band), split wherever any part of the price changes.
func (c *Pricer) Rates(ctx context.Context, scope kwhouse.Scope, req RatesRequest) (TariffRates, error) {
	tr := timelineRequest{scope: scope, locationID: req.LocationID, direction: req.Direction, start: req.Start, end: req.End}
	loc, periods, err := c.timeline(ctx, tr)
	if err != nil {
		return TariffRates{}, err
	}
	now := catalog.Timestamp(c.now())
	out := TariffRates{LocationAnswer: newLocationAnswer(kwhouse.PrefixRates, "tariff_rate", scope, loc, directionOr(req.Direction)),
		LastUpdated: now, NextUpdate: catalog.Timestamp(req.End), TimeCreated: now, AccountID: scope.AccountID, Data: []RateItem{},
		Request: RatesRequestEcho{IncludeTariff: req.IncludeTariff, IncludeCarbon: req.IncludeCarbon, Direction: directionOr(req.Direction),
			StartTime: catalog.Timestamp(req.Start), EndTime: catalog.Timestamp(req.End)}}
	var ivs []carbon.Interval
	if req.IncludeCarbon {
		out.CarbonUnits = carbon.Units
		if ivs, err = c.seriesIntervals(ctx, scope, loc, req.Start.Unix(), req.End.Unix()); err != nil {
			return TariffRates{}, err
		}
	}
	for _, p := range periods {
		it := RateItem{ValidFrom: unixTS(p.Start), ValidTo: unixTS(p.End), Tariff: RateValue{Rate: Amount(p.Rate), Confidence: Amount(p.Confidence)}}
		if req.IncludeTariff {
			it.Tariff.Components = &Components{Commodity: Amount(p.Commodity), NonCommodity: Amount(p.NonCommodity)}
		}
		if !req.IncludeCarbon {
			out.Data = append(out.Data, it)
			continue
		}
		for _, piece := range carbon.Cut(p.Start, p.End, ivs) {
			it.ValidFrom, it.ValidTo = unixTS(piece.Start), unixTS(piece.End)
			it.Carbon = &RateCarbon{Intensity: Amount(piece.Intensity), Confidence: Amount(piece.Confidence())}
			out.Data = append(out.Data, it)
		}
	}
	setRelativeCarbon(out.Data)
	return out, nil
}

// setRelativeCarbon places each known intensity between the lowest (0) and highest (1)
// known intensity of the items; with one value (or none) every item is 0.
func setRelativeCarbon(items []RateItem) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, it := range items {
		if it.Carbon != nil && it.Carbon.Confidence > 0 {
			lo, hi = math.Min(lo, float64(it.Carbon.Intensity)), math.Max(hi, float64(it.Carbon.Intensity))
		}
	}
	for _, it := range items {
		if it.Carbon != nil && it.Carbon.Confidence > 0 && hi > lo {
			it.Carbon.Relative = Amount((float64(it.Carbon.Intensity) - lo) / (hi - lo))
		}
	}
}

func directionOr(d string) string {
	if d == "" {
		return "IMPORT"
	}
	return d
}

func unixTS(s int64) catalog.Timestamp { return catalog.Timestamp(time.Unix(s, 0).UTC()) }
