package demo

import (
	"context"
	"fmt"
	"time"
)

// home is one demo location: where it is, its tariffs and whose readings it has.
type home struct {
	ref, city, country, zone, currency string
	market                             bool             // its import follows the Agile market
	tariffs                            []map[string]any // import (and export) tariffs besides the market's
	readings                           func(Fleet) []Reading
}

var (
	london = func(f Fleet) []Reading { return f.London }
	sydney = func(f Fleet) []Reading { return f.Sydney }
)

// homes: the same London household on three tariffs, and a Sydney home with solar. The
// fixed prices are examples of such tariffs, not any supplier's.
var homes = []home{
	{ref: "demo-london-agile", city: "London", country: "GB", zone: "Europe/London", currency: "GBP",
		market: true, readings: london},
	{ref: "demo-london-two-rate", city: "London", country: "GB", zone: "Europe/London", currency: "GBP", readings: london,
		tariffs: []map[string]any{schedule("Two-rate (night 00:30–07:30)", "IMPORT",
			band("00:30:00", "07:30:00", 0.095), band("07:30:00", "00:30:00", 0.20))}},
	{ref: "demo-london-flat", city: "London", country: "GB", zone: "Europe/London", currency: "GBP", readings: london,
		tariffs: []map[string]any{schedule("Flat", "IMPORT", band("00:00:00", "00:00:00", 0.17))}},
	{ref: "demo-sydney-solar", city: "Sydney", country: "AU", zone: "Australia/Sydney", currency: "AUD", readings: sydney,
		tariffs: []map[string]any{
			schedule("Time of use (peak 07:00–22:00)", "IMPORT", band("07:00:00", "22:00:00", 0.30), band("22:00:00", "07:00:00", 0.15)),
			schedule("Solar feed-in", "EXPORT", band("00:00:00", "00:00:00", 0.07))}},
}

// band is one stretch of every day at one price.
func band(from, to string, price float64) map[string]any {
	return map[string]any{"valid_from": from, "valid_to": to, "rate": []any{map[string]any{"fixed": price}}}
}

// schedule is a tariff element whose bands apply to every day of the year.
func schedule(name, direction string, bands ...map[string]any) map[string]any {
	return map[string]any{"display_name": name, "direction": direction, "schedule": []any{map[string]any{
		"months": []string{"All"}, "days_and_hours": []any{map[string]any{"days": []string{"All"}, "hours": bands}}}}}
}

// contract is the span every demo tariff covers: the data's years and well beyond.
var contract = [2]string{"2010-01-01T00:00:00Z", "2030-01-01T00:00:00Z"}

// create makes the location and its tariffs; market is the Agile market's id.
func (h home) create(ctx context.Context, c *Client, market string) (string, error) {
	var loc struct{ ID string }
	if err := c.Do(ctx, "POST", "/locations", map[string]any{"reference_id": h.ref, "timezone": h.zone, "currency_code": h.currency,
		"postal_address": map[string]any{"city": h.city, "country_code": h.country}}, &loc); err != nil {
		return "", err
	}
	tariffs := h.tariffs
	if h.market {
		tariffs = append([]map[string]any{{"display_name": "Octopus Agile", "direction": "IMPORT",
			"market_rates": true, "market_id": market}}, tariffs...)
	}
	for _, t := range tariffs {
		body := map[string]any{"location_id": loc.ID, "type": "COMMODITY",
			"contract_start_date": contract[0], "contract_end_date": contract[1]}
		for k, v := range t {
			body[k] = v
		}
		if err := c.Do(ctx, "POST", "/tariffs/elements", body, nil); err != nil {
			return "", fmt.Errorf("tariff %v: %w", t["display_name"], err)
		}
	}
	return loc.ID, nil
}

// Window is the demo's default stretch of data: six weeks over a new year, where the
// Agile prices and the London household's readings overlap.
var Window = [2]time.Time{time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2021, 1, 15, 0, 0, 0, 0, time.UTC)}
