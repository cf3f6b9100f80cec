package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Tariff kinds of the fixture: most locations time-of-use, one in ten month-tiered, one
// in ten priced by a market (a year of half-hourly prices) with surcharges.
const (
	kindTOU    = "time-of-use"
	kindTiered = "month-tiered"
	kindMarket = "market"
)

// fixtureMix names the fixture's layout; saved data of another layout is not reused.
const fixtureMix = "tou+tiered+market/2"

func kindOf(i int) string {
	switch i % 10 {
	case 3:
		return kindTiered
	case 7:
		return kindMarket
	}
	return kindTOU
}

type fixture struct {
	scope     kwhouse.Scope
	key       string
	locations []string
	market    string
}

// ofKind lists the fixture's locations of a tariff kind.
func (f *fixture) ofKind(kind string) []string {
	var out []string
	for i, l := range f.locations {
		if kindOf(i) == kind {
			out = append(out, l)
		}
	}
	return out
}

// load creates the account, locations, tariffs and readings, or reuses them.
func load(ctx context.Context, a *app.App, o options) (*fixture, error) {
	if fx, err := reuse(ctx, a, o); err == nil && fx != nil {
		fmt.Println("reusing the data in", o.database)
		return fx, nil
	}
	acc, err := a.Accounts.Create(ctx, "bench")
	if err != nil {
		return nil, err
	}
	fx := &fixture{scope: kwhouse.Scope{AccountID: acc.AccountID}, key: acc.TestKey}
	start := time.Now()
	if err := makeMarket(ctx, a, fx); err != nil {
		return nil, err
	}
	if err := makeLocations(ctx, a, fx, o.locations); err != nil {
		return nil, err
	}
	fmt.Printf("created %d locations with tariffs in %.0f s\n", len(fx.locations), time.Since(start).Seconds())
	start = time.Now()
	if err := makeReadings(ctx, a, fx); err != nil {
		return nil, err
	}
	fmt.Printf("loaded %d readings in %.0f s\n", len(fx.locations)*17568, time.Since(start).Seconds())
	if o.keep {
		b, _ := json.Marshal(fx.saved())
		if err := os.MkdirAll(".run", 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(savedPath(o), b, 0o600); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

type savedFixture struct {
	Mix, Account, Key, Market string
	Locations                 []string
}

func (f *fixture) saved() savedFixture {
	return savedFixture{Mix: fixtureMix, Account: f.scope.AccountID, Key: f.key, Market: f.market, Locations: f.locations}
}

// savedPath is where the fixture loaded into o's database is described: one file per
// database, so fixtures of several sizes are kept side by side.
func savedPath(o options) string {
	if o.database == "kwbench_costs" {
		return ".run/bench-costs.json"
	}
	return ".run/bench-costs-" + o.database + ".json"
}

func reuse(ctx context.Context, a *app.App, o options) (*fixture, error) {
	b, err := os.ReadFile(savedPath(o))
	if err != nil || !o.keep {
		return nil, err
	}
	var s savedFixture
	if err := json.Unmarshal(b, &s); err != nil || len(s.Locations) != o.locations || s.Mix != fixtureMix {
		return nil, err
	}
	var n uint64
	if err := a.DB.QueryRow(ctx, chstore.Tool("SELECT count() FROM meter_records WHERE account_id = ?"), s.Account).Scan(&n); err != nil || n < uint64(o.locations*17568) {
		return nil, err
	}
	return &fixture{scope: kwhouse.Scope{AccountID: s.Account}, key: s.Key, market: s.Market, locations: s.Locations}, nil
}

// makeMarket creates the market and its half-hourly prices over 2023–2025.
func makeMarket(ctx context.Context, a *app.App, fx *fixture) error {
	m, err := a.Tariffs.CreateMarket(ctx, fx.scope, tariffs.MarketInput{DisplayName: "bench spot", CurrencyCode: "GBP"})
	if err != nil {
		return err
	}
	fx.market = m.ID
	var prices []tariffs.MarketPrice
	for t := time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC); t.Before(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)); t = t.Add(30 * time.Minute) {
		p := 0.05 + float64((t.Hour()*13+t.Day()*7+t.Minute())%40)/100 - 0.08 // some negative
		prices = append(prices, tariffs.MarketPrice{StartTime: catalog.Timestamp(t), EndTime: catalog.Timestamp(t.Add(30 * time.Minute)), Price: &p})
	}
	for len(prices) > 0 {
		n := min(len(prices), 10000)
		if _, err := a.Tariffs.PutPrices(ctx, fx.scope, fx.market, prices[:n]); err != nil {
			return err
		}
		prices = prices[n:]
	}
	return nil
}

func makeLocations(ctx context.Context, a *app.App, fx *fixture, n int) error {
	tz, cur := "Europe/London", "GBP"
	fx.locations = make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			l, err := a.Catalog.CreateLocation(ctx, fx.scope, catalog.LocationInput{Timezone: &tz, CurrencyCode: &cur})
			if err != nil {
				errs <- err
				return
			}
			fx.locations[i] = l.ID
			if _, err := a.Tariffs.Create(ctx, fx.scope, tariffOf(kindOf(i), l.ID, fx.market)); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// tariffOf is the tariff of a location of kind.
func tariffOf(kind, location, market string) tariffs.Input {
	cs, ce := catalog.Timestamp(time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)), catalog.Timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	in := tariffs.Input{LocationID: location, Direction: "IMPORT", Type: "COMMODITY", ContractStartDate: &cs, ContractEndDate: &ce,
		// The bill's charges (read only by include_charges): a UK standing charge, a Belgian
		// capacity charge with its 2.5 kW floor, and 5% VAT.
		StandingCharge: ptr(0.45), TaxPercentage: ptr(5.0),
		DemandCharges: []tariffs.DemandCharge{{RatePerKW: ptr(3.5), MinimumKW: 2.5}}}
	schedule := benchkit.TOUSchedule
	switch kind {
	case kindTiered:
		schedule = tieredSchedule
	case kindMarket:
		schedule, in.MarketRates, in.MarketID = marketSchedule, ptr(true), &market
	}
	if err := json.Unmarshal([]byte(schedule), &in.Schedule); err != nil {
		panic(err) // the constants below are valid
	}
	return in
}

func ptr[T any](v T) *T { return &v }

// tieredSchedule: the first 200 kWh of a month at 0.18, the rest at 0.29.
const tieredSchedule = `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[
 {"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":0.18,"to_kwh":200},{"fixed":0.29}]}]}]}]`

// marketSchedule: market price + 0.02, then + 5 %.
const marketSchedule = `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[
 {"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"surcharge_fixed":0.02,"surcharge_percentage":5}]}]}]}]`

// loadChunk is how many locations' month of readings one insert carries: about 750,000
// rows, so the loader and the server stay within a few GiB at 10,000 locations and more
// (one insert of every location's month needed more than 8 GiB on the server).
const loadChunk = 500

// makeReadings inserts a year of half-hours for every location, month by month (an
// insert may touch at most 100 day-partitions) and loadChunk locations at a time.
func makeReadings(ctx context.Context, a *app.App, fx *fixture) error {
	for m := time.January; m <= time.December; m++ {
		from := time.Date(2024, m, 1, 0, 0, 0, 0, time.UTC)
		for first := 0; first < len(fx.locations); first += loadChunk {
			if err := insertReadings(ctx, a, fx, first, min(first+loadChunk, len(fx.locations)), from); err != nil {
				return err
			}
		}
		fmt.Printf("  %s loaded\n", m)
	}
	return nil
}

// insertReadings inserts the month from `from` of locations [first, last).
func insertReadings(ctx context.Context, a *app.App, fx *fixture, first, last int, from time.Time) error {
	return marked(ctx, a, fx.scope, func() error { return insertMonth(ctx, a, fx, first, last, from) })
}

// insertMonth is insertReadings' insert.
func insertMonth(ctx context.Context, a *app.App, fx *fixture, first, last int, from time.Time) error {
	to := from.AddDate(0, 1, 0)
	b, err := a.DB.Insert(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id,
		device_id, direction, tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id,
		record_reference_id, batch_id, version) VALUES`))
	if err != nil {
		return err
	}
	for i := first; i < last; i++ {
		loc := fx.locations[i]
		for t := from; t.Before(to); t = t.Add(30 * time.Minute) {
			wh := benchkit.FleetWh(i, t)
			if err := b.Append(fx.scope.AccountID, uint8(0), loc, "", "IMPORT", "IMPORT", t, t.Add(30*time.Minute), wh, 1.0, "", "", "bat_bench", uint64(1)); err != nil {
				_ = b.Abort()
				return err
			}
		}
	}
	return b.Send()
}
