// Package demo loads a small demo fleet through the public API, so that a new
// installation's dashboard has costs to show: London homes on Octopus Agile market prices,
// on a two-rate and on a flat tariff, and a Sydney home with rooftop solar that exports.
// The readings and prices are real public data (docs/dashboard.md names the files).
package demo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Prices are half-hourly market prices: each starts at Start and lasts 30 minutes.
type Price struct {
	Start time.Time
	Price float64 // major units per kWh (GBP, not pence)
}

// Reading is one half-hour of metered energy.
type Reading struct {
	Start     time.Time
	Wh        float64
	Direction string // IMPORT or EXPORT
}

// Fleet is the data the demo is built from; a part left empty leaves out the locations
// that need it.
type Fleet struct {
	Agile  []Price   // Octopus Agile import prices (GBP/kWh)
	London []Reading // a London household's import
	Sydney []Reading // a Sydney household's import and solar export
}

// Loaded names what Load created.
type Loaded struct {
	Locations []string
	Readings  int
}

// ErrLoaded is returned when the account already has every demo location Load could make.
var ErrLoaded = errors.New("the demo fleet is already loaded")

// Load creates the fleet's locations, markets and tariffs and sends its readings, all
// through the API at c. A demo location the account already has (by reference_id) is
// left as it is; when that leaves nothing to do, Load returns ErrLoaded.
func Load(ctx context.Context, c *Client, f Fleet) (Loaded, error) {
	var out Loaded
	market, existing := "", 0
	for _, home := range homes {
		readings := home.readings(f)
		if len(readings) == 0 || (home.market && len(f.Agile) == 0) {
			continue
		}
		if ok, err := exists(ctx, c, home.ref); err != nil || ok {
			existing++
			if err != nil {
				return out, err
			}
			continue
		}
		if home.market && market == "" {
			id, err := agileMarket(ctx, c, f.Agile)
			if err != nil {
				return out, err
			}
			market = id
		}
		id, err := home.create(ctx, c, market)
		if err != nil {
			return out, fmt.Errorf("demo location %s: %w", home.ref, err)
		}
		if err := sendReadings(ctx, c, id, readings); err != nil {
			return out, fmt.Errorf("demo location %s: %w", home.ref, err)
		}
		out.Locations = append(out.Locations, id)
		out.Readings += len(readings)
	}
	if len(out.Locations) == 0 && existing > 0 {
		return out, ErrLoaded
	}
	return out, nil
}

// exists reports whether the account has a location with the reference ref.
func exists(ctx context.Context, c *Client, ref string) (bool, error) {
	var list struct{ Data []struct{ ID string } }
	if err := c.Do(ctx, "GET", "/locations?reference_id="+url.QueryEscape(ref), nil, &list); err != nil {
		return false, err
	}
	return len(list.Data) > 0, nil
}

func agileMarket(ctx context.Context, c *Client, prices []Price) (string, error) {
	var m struct{ ID string }
	if err := c.Do(ctx, "POST", "/markets", map[string]any{"display_name": "Octopus Agile A (Eastern England)",
		"currency_code": "GBP", "country_code": "GB", "reference_id": "demo-agile-a"}, &m); err != nil {
		return "", fmt.Errorf("demo market: %w", err)
	}
	const perRequest = 40_000 // PUT /markets/{id}/prices takes at most this many
	for len(prices) > 0 {
		n := min(perRequest, len(prices))
		body := make([]map[string]any, n)
		for i, p := range prices[:n] {
			body[i] = map[string]any{"start_time": p.Start.Format(time.RFC3339),
				"end_time": p.Start.Add(30 * time.Minute).Format(time.RFC3339), "price": p.Price}
		}
		if err := c.Do(ctx, "PUT", "/markets/"+m.ID+"/prices", body, nil); err != nil {
			return "", fmt.Errorf("demo market prices: %w", err)
		}
		prices = prices[n:]
	}
	return m.ID, nil
}

func sendReadings(ctx context.Context, c *Client, location string, readings []Reading) error {
	const perRequest = 10_000 // ingest.max_records_per_request's default
	for len(readings) > 0 {
		n := min(perRequest, len(readings))
		body := make([]map[string]any, n)
		for i, r := range readings[:n] {
			body[i] = map[string]any{"location_id": location, "units": "WH", "value": r.Wh, "direction": r.Direction,
				"start_time": r.Start.Format(time.RFC3339), "end_time": r.Start.Add(30 * time.Minute).Format(time.RFC3339)}
		}
		var batch struct {
			RecordsAccepted int `json:"records_accepted"`
			FailedRecords   []struct {
				Error string `json:"error"`
			} `json:"failed_records"`
		}
		if err := c.Do(ctx, "PUT", "/meters/interval", body, &batch); err != nil {
			return fmt.Errorf("readings: %w", err)
		}
		if batch.RecordsAccepted != n {
			return fmt.Errorf("readings: %d of %d accepted: %+v", batch.RecordsAccepted, n, batch.FailedRecords)
		}
		readings = readings[n:]
	}
	return nil
}
