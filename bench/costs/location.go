package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
)

// locationShapes times POST /costs/interval of one random location per request.
func locationShapes(ctx context.Context, a *app.App, base string, fx *fixture, o options) error {
	month, year, day := [2]string{"2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"},
		[2]string{"2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"}, [2]string{"2024-06-15T00:00:00Z", "2024-06-16T00:00:00Z"}
	shapes := []struct {
		name, kind, query string
		window            [2]string
	}{
		{"one month, DAY, " + kindTOU, kindTOU, "?aggregation=DAY", month},
		{"one month, DAY, " + kindTiered, kindTiered, "?aggregation=DAY", month},
		{"one month, DAY, " + kindMarket, kindMarket, "?aggregation=DAY", month},
		{"one year, MONTH, " + kindTOU, kindTOU, "?aggregation=MONTH", year},
		{"one year, MONTH, " + kindTiered, kindTiered, "?aggregation=MONTH", year},
		{"one year, MONTH, " + kindMarket, kindMarket, "?aggregation=MONTH", year},
		{"one day, raw, " + kindTOU, kindTOU, "", day},
		{"one month, DAY, include_charges, " + kindTOU, kindTOU, "?aggregation=DAY&include_charges=true", month},
		{"one month, DAY, include_charges, " + kindTiered, kindTiered, "?aggregation=DAY&include_charges=true", month},
		{"one month, DAY, include_charges, " + kindMarket, kindMarket, "?aggregation=DAY&include_charges=true", month},
		{"one year, MONTH, include_charges, " + kindTOU, kindTOU, "?aggregation=MONTH&include_charges=true", year},
		{"one year, MONTH, include_charges, " + kindTiered, kindTiered, "?aggregation=MONTH&include_charges=true", year},
		{"one year, MONTH, include_charges, " + kindMarket, kindMarket, "?aggregation=MONTH&include_charges=true", year},
	}
	if o.selected("one month") {
		f50, f99, err := floor(ctx, a, fx, o.requests)
		if err != nil {
			return err
		}
		fmt.Printf("%-40s p50 %7.1f ms  p99 %7.1f ms\n", "floor: bare sum of one location's month", ms(f50), ms(f99))
	}
	for _, s := range shapes {
		if !o.selected(s.name) {
			continue
		}
		lat, err := measure(base, fx, fx.ofKind(s.kind), s.query, s.window, o.requests)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		report(s.name, lat, "")
	}
	return backfillShapes(ctx, a, base, fx, o)
}

func measure(base string, fx *fixture, locs []string, query string, window [2]string, n int) ([]time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"start_time": window[0], "end_time": window[1]})
	client := &http.Client{Timeout: time.Minute}
	var lat []time.Duration
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < n+5; i++ {
		loc := locs[rng.Intn(len(locs))]
		req, _ := http.NewRequest("POST", base+"/costs/interval/"+loc+query, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.key)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		var out struct {
			Tariff struct{ Value float64 } `json:"tariff"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || out.Tariff.Value == 0 {
			return nil, fmt.Errorf("status %d, value %v (%v)", res.StatusCode, out.Tariff.Value, err)
		}
		if i >= 5 { // the first few warm caches
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, nil
}

// floor times the cheapest useful question: the sum of one location's month of energy.
func floor(ctx context.Context, a *app.App, fx *fixture, n int) (time.Duration, time.Duration, error) {
	rng := rand.New(rand.NewSource(2))
	var lat []time.Duration
	for i := 0; i < n+5; i++ {
		loc := fx.locations[rng.Intn(len(fx.locations))]
		t0 := time.Now()
		var wh float64
		err := a.DB.QueryRow(ctx, chstore.Tool(`SELECT sum(energy_wh) FROM meter_records
			WHERE account_id = ? AND live_mode = 0 AND location_id = ? AND device_id = ''
			  AND start_time >= toDateTime(?) AND start_time < toDateTime(?)`),
			fx.scope.AccountID, loc, uint32(1717200000), uint32(1719792000)).Scan(&wh)
		if err != nil {
			return 0, 0, err
		}
		if i >= 5 {
			lat = append(lat, time.Since(t0))
		}
	}
	return pct(lat, 50), pct(lat, 99), nil
}
