//go:build chdb

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/demo"
)

// fleetMonth is the month of the synthetic fleet's readings: June 2024 (30 local days).
var fleetMonth = [2]time.Time{time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)}

// fleetClients is how many clients create the fleet's locations and send its readings.
const fleetClients = 4

// loadFleet creates, in an account of its own, n locations with bench/costs' time-of-use
// tariff and a month of half-hourly readings each (benchkit.FleetWh), all through the API.
func loadFleet(ctx context.Context, a *app.App, base string, n int) (*demo.Client, error) {
	acc, err := a.Accounts.Create(ctx, "bench-modes-fleet")
	if err != nil {
		return nil, err
	}
	c := &demo.Client{Base: base, Key: acc.TestKey, HTTP: &http.Client{Timeout: 5 * time.Minute}}
	locs := make([]string, n)
	err = parallel(n, func(i int) error {
		var loc struct {
			ID string `json:"id"`
		}
		if err := c.Do(ctx, "POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP",
			"postal_address": map[string]any{"country_code": "GB"}}, &loc); err != nil {
			return err
		}
		locs[i] = loc.ID
		return c.Do(ctx, "POST", "/tariffs/elements", map[string]any{"location_id": loc.ID, "direction": "IMPORT",
			"type": "COMMODITY", "contract_start_date": "2023-01-01T00:00:00Z", "contract_end_date": "2025-01-01T00:00:00Z",
			"schedule": json.RawMessage(benchkit.TOUSchedule)}, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("fleet locations and tariffs: %w", err)
	}
	batches := readingBatches(locs)
	if err := parallel(len(batches), func(i int) error { return c.Do(ctx, "PUT", "/meters/interval", batches[i], nil) }); err != nil {
		return nil, fmt.Errorf("fleet readings: %w", err)
	}
	return c, nil
}

// readingBatches are the fleet's month of half-hours as PUT /meters/interval bodies of at
// most 10,000 records.
func readingBatches(locs []string) [][]map[string]any {
	var out [][]map[string]any
	var batch []map[string]any
	for i, loc := range locs {
		for t := fleetMonth[0]; t.Before(fleetMonth[1]); t = t.Add(30 * time.Minute) {
			batch = append(batch, map[string]any{"location_id": loc, "units": "WH", "value": benchkit.FleetWh(i, t),
				"direction": "IMPORT", "start_time": t.Format(time.RFC3339), "end_time": t.Add(30 * time.Minute).Format(time.RFC3339)})
			if len(batch) == 10_000 {
				out, batch = append(out, batch), nil
			}
		}
	}
	if len(batch) > 0 {
		out = append(out, batch)
	}
	return out
}

// parallel runs work(0..n-1) on fleetClients goroutines and returns the first error.
func parallel(n int, work func(i int) error) error {
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < fleetClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := work(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// fleetCSV asks the fleet's month by DAY as CSV (POST /costs/fleet, Accept: text/csv) and
// checks it has a row per location and day: CSV answers every row, unpaged.
func fleetCSV(n int) func(ctx context.Context, c *demo.Client) error {
	body := fmt.Sprintf(`{"start_time":%q,"end_time":%q,"aggregation":"DAY","direction":"IMPORT"}`,
		fleetMonth[0].Format(time.RFC3339), fleetMonth[1].Format(time.RFC3339))
	return func(ctx context.Context, c *demo.Client) error {
		req, err := http.NewRequestWithContext(ctx, "POST", c.Base+"/costs/fleet", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.Key)
		req.Header.Set("Accept", "text/csv")
		res, err := c.HTTP.Do(req)
		if err != nil {
			return err
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			return fmt.Errorf("POST /costs/fleet: status %d: %.300s (%v)", res.StatusCode, out, err)
		}
		// June in Europe/London: local days from 1 June 00:00 BST, the last one partial.
		if rows := strings.Count(string(out), "\n") - 1; rows < n*30 {
			return fmt.Errorf("POST /costs/fleet: %d rows, want at least %d", rows, n*30)
		}
		return nil
	}
}
