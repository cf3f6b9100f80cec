package httpapi_test

import (
	"bufio"
	"maps"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

type scheduleBody struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Tariff struct {
		Value      float64 `json:"value"`
		Confidence float64 `json:"confidence"`
	} `json:"tariff"`
	Savings struct {
		Value      float64 `json:"value"`
		Percentage float64 `json:"percentage"`
	} `json:"savings"`
	Data []struct {
		DeviceID  string `json:"device_id"`
		StartTime string `json:"start_time"`
		EndTime   string `json:"end_time"`
		Shortfall struct {
			Units string  `json:"units"`
			Value float64 `json:"value"`
		} `json:"shortfall"`
		Tariff struct {
			Value float64 `json:"value"`
		} `json:"tariff"`
		Schedule []struct {
			StartTime string `json:"start_time"`
			EndTime   string `json:"end_time"`
			Power     struct {
				Units string  `json:"units"`
				Value float64 `json:"value"`
			} `json:"power"`
		} `json:"schedule"`
	} `json:"data"`
}

// scheduleEnv is a London location whose clock stands at now.
func newScheduleEnv(t *testing.T, now time.Time) *costEnv {
	return newScheduleEnvWith(t, now, apitest.Options{})
}

// newScheduleEnvWith is newScheduleEnv with the service started with opt.
func newScheduleEnvWith(t *testing.T, now time.Time, opt apitest.Options) *costEnv {
	clock := &testkit.Clock{}
	clock.Advance(time.Until(now))
	opt.Now = clock.Now
	api := apitest.Start(t, opt)
	acc := api.NewAccount("schedules")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}}).Map(t)["id"].(string)
	return &costEnv{t: t, api: api, acc: acc, loc: loc}
}

func (e *costEnv) device(ref string) string {
	e.t.Helper()
	return e.do("POST", "/devices", map[string]any{"reference_id": ref}).Map(e.t)["id"].(string)
}

// agilePrices reads Octopus Agile (Eastern England) import prices in GBP/kWh from
// ../shared/data for [from, to), or skips the test when the file is absent.
func agilePrices(t *testing.T, from, to time.Time) map[time.Time]float64 {
	f, err := os.Open("../../shared/data/agile_A_eastern_england_2018-2021.csv")
	if err != nil {
		t.Skipf("Agile prices not available: %v", err)
	}
	defer f.Close()
	out := map[time.Time]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), ",")
		at, err := time.Parse(time.RFC3339, cols[0])
		if err != nil || at.Before(from) || !at.Before(to) {
			continue
		}
		pence, err := strconv.ParseFloat(cols[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[at] = pence / 100
	}
	return out
}

// marketTariff puts prices (half-hour starts → GBP/kWh) on a market priced by the
// location's commodity tariff of direction (IMPORT when none is given).
func (e *costEnv) marketTariff(prices map[time.Time]float64, direction ...string) {
	m := e.do("POST", "/markets", map[string]any{"display_name": "agile", "currency_code": "GBP"}).Map(e.t)["id"].(string)
	var body []any
	for at, p := range prices {
		body = append(body, map[string]any{"start_time": at.Format(rfc), "end_time": at.Add(30 * time.Minute).Format(rfc), "price": p})
	}
	if r := e.do("PUT", "/markets/"+m+"/prices", body); r.Status != 200 {
		e.t.Fatalf("prices: %d %s", r.Status, r.Body)
	}
	fields := map[string]any{"market_rates": true, "market_id": m}
	if len(direction) > 0 {
		fields["direction"] = direction[0]
	}
	e.tariff(fields)
}

func (e *costEnv) schedule(query string, body map[string]any) scheduleBody {
	e.t.Helper()
	r := e.do("POST", "/schedules"+query, body)
	if r.Status != 200 {
		e.t.Fatalf("POST /schedules: %d %s", r.Status, r.Body)
	}
	var s scheduleBody
	r.JSON(e.t, &s)
	return s
}

// powerAt sums the planned power (kW) of every device over [at, at+step), checking that
// each entry holds whole steps.
func powerAt(s scheduleBody, at time.Time) float64 {
	sum := 0.0
	for _, d := range s.Data {
		for _, en := range d.Schedule {
			a, _ := time.Parse(time.RFC3339, en.StartTime)
			b, _ := time.Parse(time.RFC3339, en.EndTime)
			if !at.Before(a) && at.Before(b) {
				sum += en.Power.Value / map[string]float64{"W": 1000, "KW": 1}[en.Power.Units]
			}
		}
	}
	return sum
}

// The UK fall-back day 2020-10-25 with real Agile prices, negative overnight: an EV and a
// battery share an 8 kW supply from local 00:00 to 07:00 (eight real hours, 01:00–02:00
// twice). With one window for both, the cheapest plan fills the cheapest half-hours at
// the full 8 kW, cheapest first: the expected cost is computed from the file below.
func TestScheduleOnTheFallBackDayWithAgilePrices(t *testing.T) {
	from, to := time.Date(2020, 10, 24, 23, 0, 0, 0, time.UTC), time.Date(2020, 10, 26, 0, 0, 0, 0, time.UTC)
	prices := agilePrices(t, from, to)
	e := newScheduleEnv(t, from.Add(-time.Hour))
	e.marketTariff(prices)
	ev, battery := e.device("EV-1"), e.device("BAT-1")
	window := map[string]any{"start_time": "2020-10-25T00:00:00+01:00", "end_time": "2020-10-25T07:00:00Z"}
	dev := func(id string, kw, kwh float64) map[string]any {
		d := map[string]any{"device_id": id, "direction": "IMPORT", "max_power": map[string]any{"units": "KW", "value": kw},
			"energy": map[string]any{"units": "KWH", "value": kwh}}
		for k, v := range window {
			d[k] = v
		}
		return d
	}
	s := e.schedule("", map[string]any{"location_id": e.loc, "max_power": map[string]any{"units": "W", "value": "8000"},
		"data": []any{dev(ev, 7, 30), dev(battery, 3, 5)}})

	// Expected: 35 kWh at 4 kWh a half-hour over the 16 half-hours, cheapest first.
	var window16 []float64
	for at := from; at.Before(from.Add(8 * time.Hour)); at = at.Add(30 * time.Minute) {
		window16 = append(window16, prices[at])
	}
	if len(window16) != 16 {
		t.Fatalf("%d half-hours in the window", len(window16))
	}
	sort.Float64s(window16)
	want, left := 0.0, 35.0
	for _, p := range window16 {
		take := math.Min(4, left)
		want, left = want+take*p, left-take
	}
	if math.Abs(s.Tariff.Value-want) > 1e-5 || want >= 0 {
		t.Errorf("tariff %v, want %v (negative: the plan is paid to consume)", s.Tariff.Value, want)
	}
	// The cap at every instant, each device within its power, and the energy delivered
	// (recomputed from the entries).
	for at := from; at.Before(from.Add(8 * time.Hour)); at = at.Add(30 * time.Minute) {
		if p := powerAt(s, at); p > 8+1e-9 {
			t.Errorf("%s: %v kW over the 8 kW cap", at, p)
		}
	}
	energy := map[string]float64{}
	moneyFromEntries := 0.0
	for _, d := range s.Data {
		if d.Shortfall.Value != 0 || d.Shortfall.Units != "KWH" {
			t.Errorf("%s: shortfall %+v", d.DeviceID, d.Shortfall)
		}
		for _, en := range d.Schedule {
			a, _ := time.Parse(time.RFC3339, en.StartTime)
			b, _ := time.Parse(time.RFC3339, en.EndTime)
			if a.Before(from) || b.After(from.Add(8*time.Hour)) {
				t.Errorf("%s: entry %s–%s outside the window", d.DeviceID, en.StartTime, en.EndTime)
			}
			for at := a; at.Before(b); at = at.Add(30 * time.Minute) {
				kwh := en.Power.Value * 0.5
				energy[d.DeviceID] += kwh
				moneyFromEntries += kwh * prices[at.UTC().Truncate(30*time.Minute)]
			}
		}
	}
	if math.Abs(energy[ev]-30) > 1e-6 || math.Abs(energy[battery]-5) > 1e-6 {
		t.Errorf("delivered %v", energy)
	}
	if math.Abs(moneyFromEntries-s.Tariff.Value) > 1e-5 {
		t.Errorf("entries cost %v, tariff says %v", moneyFromEntries, s.Tariff.Value)
	}
	// Both 01:00–02:00 local hours are real time the plan uses: 00:00Z (−8.64 p) and
	// 01:30Z (the second 01:30, −4.15 p).
	for _, at := range []time.Time{from.Add(time.Hour), from.Add(150 * time.Minute)} {
		if powerAt(s, at) != 8 {
			t.Errorf("%s (the repeated hour): %v kW, want the full 8", at, powerAt(s, at))
		}
	}
	// Times come back in the offset they were sent in.
	if s.Data[0].StartTime != "2020-10-25T00:00:00+01:00" || !strings.HasSuffix(s.Data[0].Schedule[0].StartTime, "+01:00") {
		t.Errorf("start %s, first entry %s: want the request's +01:00", s.Data[0].StartTime, s.Data[0].Schedule[0].StartTime)
	}
	// Flat out from the start would have paid more.
	if s.Savings.Value <= 0 {
		t.Errorf("savings %+v", s.Savings)
	}
	// Read back as stored.
	r := e.do("GET", "/schedules/"+s.ID, nil)
	var got scheduleBody
	r.JSON(t, &got)
	if r.Status != 200 || got.Tariff != s.Tariff || len(got.Data) != 2 || len(got.Data[0].Schedule) != len(s.Data[0].Schedule) {
		t.Errorf("GET: %d %s", r.Status, r.Body)
	}
}

// threeHours is a location whose import price is 0.30, -0.05, 0.10 for the hours from
// 2024-01-10T10:00Z (London = UTC), 0.20 after.
func threeHours(t *testing.T) (*costEnv, string) {
	e := newScheduleEnv(t, time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC))
	e.marketTariff(hourPrices(0.30, -0.05, 0.10, 0.20))
	return e, e.device("EV-1")
}

// hourPrices is half-hourly prices from 2024-01-10T10:00Z, one price an hour.
func hourPrices(prices ...float64) map[time.Time]float64 {
	out := map[time.Time]float64{}
	t0 := time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)
	for i, p := range prices {
		out[t0.Add(time.Duration(2*i)*30*time.Minute)] = p
		out[t0.Add(time.Duration(2*i+1)*30*time.Minute)] = p
	}
	return out
}

func oneDevice(loc, dev string, w, wh float64, end string) map[string]any {
	return map[string]any{"location_id": loc, "max_power": map[string]any{"units": "W", "value": 10000},
		"data": []any{map[string]any{"device_id": dev, "direction": "IMPORT", "start_time": "2024-01-10T10:00:00Z", "end_time": end,
			"max_power": map[string]any{"units": "W", "value": w}, "energy": map[string]any{"units": "WH", "value": wh}}}}
}

func TestScheduleShavingThresholdExcludesPeriodsAndReportsShortfall(t *testing.T) {
	e, dev := threeHours(t)
	body := oneDevice(e.loc, dev, 2000, 5000, "2024-01-10T14:00:00Z")
	// Without a threshold: 2 kWh at -0.05, 2 kWh at 0.10, 1 kWh at 0.20 = 0.3.
	if s := e.schedule("", body); math.Abs(s.Tariff.Value-0.3) > 1e-9 || s.Data[0].Shortfall.Value != 0 {
		t.Fatalf("no threshold: %+v", s)
	}
	// Nothing above 0.10: 4 kWh fit, 1 kWh short; cost -0.1 + 0.2 = 0.1.
	body["shaving_threshold"] = map[string]any{"absolute": 0.10}
	s := e.schedule("", body)
	if math.Abs(s.Tariff.Value-0.1) > 1e-9 || s.Data[0].Shortfall.Value != 1000 || s.Data[0].Shortfall.Units != "WH" {
		t.Fatalf("absolute 0.10: %+v", s)
	}
	for _, en := range s.Data[0].Schedule {
		if en.StartTime < "2024-01-10T11:00:00Z" || en.EndTime > "2024-01-10T13:00:00Z" {
			t.Errorf("entry %s–%s outside the prices at or under 0.10", en.StartTime, en.EndTime)
		}
	}
	// relative 0.5 of [-0.05, 0.30]: up to 0.125, the same periods.
	body["shaving_threshold"] = map[string]any{"relative": 0.5}
	if s := e.schedule("", body); math.Abs(s.Tariff.Value-0.1) > 1e-9 {
		t.Errorf("relative 0.5: %+v", s)
	}
}

func TestScheduleRefusesBadInputNamingTheField(t *testing.T) {
	e, dev := threeHours(t)
	other := e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	elsewhere := e.device("EV-2")
	rec := map[string]any{"location_id": other, "device_id": elsewhere, "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "WH",
		"value": 100, "start_time": "2024-01-09T10:00:00Z", "end_time": "2024-01-09T10:30:00Z"}
	if r := e.do("PUT", "/meters/interval", []any{rec}); r.Status != 200 {
		t.Fatalf("record: %d %s", r.Status, r.Body)
	}
	cases := []struct {
		name, param, code string
		edit              func(b map[string]any, d map[string]any)
	}{
		{"unknown device", "data[0].device_id", "resource_missing", func(b, d map[string]any) { d["device_id"] = "dev_000000000000000000000000" }},
		{"device at another location", "data[0].device_id", "device_at_other_location", func(b, d map[string]any) { d["device_id"] = elsewhere }},
		{"window in the past", "data[0].end_time", "window_in_past", func(b, d map[string]any) {
			d["start_time"], d["end_time"] = "2024-01-09T10:00:00Z", "2024-01-09T12:00:00Z"
		}},
		{"beyond the horizon", "data[0].end_time", "window_too_long", func(b, d map[string]any) { d["end_time"] = "2024-01-30T10:00:00Z" }},
		{"power 0", "data[0].max_power.value", "invalid_value", func(b, d map[string]any) { d["max_power"] = map[string]any{"units": "W", "value": 0} }},
		{"negative site power", "max_power.value", "invalid_value", func(b, d map[string]any) { b["max_power"] = map[string]any{"units": "KW", "value": -1} }},
		{"power in amperes", "data[0].max_power.units", "invalid_units", func(b, d map[string]any) { d["max_power"] = map[string]any{"units": "A", "value": 32} }},
		{"energy in joules", "data[0].energy.units", "invalid_units", func(b, d map[string]any) { d["energy"] = map[string]any{"units": "J", "value": 1} }},
		{"no site power", "max_power", "parameter_missing", func(b, d map[string]any) { delete(b, "max_power") }},
		{"unknown location", "location_id", "resource_missing", func(b, d map[string]any) { b["location_id"] = "loc_000000000000000000000000" }},
	}
	for _, c := range cases {
		body := oneDevice(e.loc, dev, 2000, 5000, "2024-01-10T14:00:00Z")
		c.edit(body, body["data"].([]any)[0].(map[string]any))
		r := e.do("POST", "/schedules", body)
		m := r.Map(t)
		if r.Status != 400 || m["param"] != c.param || m["code"] != c.code {
			t.Errorf("%s: %d %s, want 400 %s at %s", c.name, r.Status, r.Body, c.code, c.param)
		}
	}
	if r := e.do("GET", "/schedules/sch_000000000000000000000000", nil); r.Status != 404 {
		t.Errorf("unknown schedule: %d %s", r.Status, r.Body)
	}
}

// Devices that report from the location, or have never reported, are checked without the
// read of the account's records at every location (query.devices_at, 0.6–1.2 s for an
// account of 1,000 half-hourly locations); a device with readings, none of them here, is
// read there and refused.
func TestScheduleChecksItsDevicesWithoutReadingTheWholeAccount(t *testing.T) {
	scans := &statementCounter{name: "query.devices_at"}
	e := newScheduleEnvWith(t, time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC), apitest.Options{Observe: scans.observe})
	e.marketTariff(hourPrices(0.30, -0.05, 0.10, 0.20))
	other := e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	here, fresh, elsewhere := e.device("EV-1"), e.device("EV-2"), e.device("EV-3")
	record := func(loc, dev, start string) map[string]any {
		end := mustTime(start).Add(30 * time.Minute).Format(rfc)
		return map[string]any{"location_id": loc, "device_id": dev, "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "WH",
			"value": 100, "start_time": start, "end_time": end}
	}
	recs := []any{record(e.loc, here, "2024-01-09T10:00:00Z"), record(other, here, "2024-01-09T11:00:00Z"),
		record(other, elsewhere, "2024-01-09T10:00:00Z")}
	if r := e.do("PUT", "/meters/interval", recs); r.Status != 200 {
		t.Fatalf("records: %d %s", r.Status, r.Body)
	}
	body := oneDevice(e.loc, here, 2000, 2000, "2024-01-10T14:00:00Z")
	second := maps.Clone(body["data"].([]any)[0].(map[string]any))
	second["device_id"] = fresh
	body["data"] = append(body["data"].([]any), second)
	before := scans.n.Load()
	if s := e.schedule("", body); len(s.Data) != 2 {
		t.Fatalf("schedule: %+v", s)
	}
	if n := scans.n.Load() - before; n != 0 {
		t.Errorf("a device reporting here and one never reporting read the whole account %d times", n)
	}
	second["device_id"] = elsewhere
	if r := e.do("POST", "/schedules", body); r.Status != 400 || r.Map(t)["code"] != "device_at_other_location" || r.Map(t)["param"] != "data[1].device_id" {
		t.Errorf("device at another location: %d %s", r.Status, r.Body)
	}
	if n := scans.n.Load() - before; n != 1 {
		t.Errorf("the device elsewhere was looked up %d times, want 1", n)
	}
}

// An export maximises earnings; carbon and blend objectives move an import to cleaner
// hours. Prices from 10:00Z: import 0.30, -0.05, 0.10, 0.20; export 0.05, 0.15, 0.10,
// 0.02; grid 300, 100, 50, 200 g/kWh. Each device: 2 kWh at 2 kW, so one whole hour.
func TestScheduleExportEarningsAndCarbonObjectives(t *testing.T) {
	e := newScheduleEnv(t, time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC))
	e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP",
		"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
	e.marketTariff(hourPrices(0.30, -0.05, 0.10, 0.20))
	e.marketTariff(hourPrices(0.05, 0.15, 0.10, 0.02), "EXPORT")
	series := e.do("POST", "/carbon/series", map[string]any{"display_name": "GB", "country_code": "GB", "default": true}).Map(t)["id"].(string)
	e.intensities(series, iv("2024-01-10T10:00:00Z", "2024-01-10T11:00:00Z", 300), iv("2024-01-10T11:00:00Z", "2024-01-10T12:00:00Z", 100),
		iv("2024-01-10T12:00:00Z", "2024-01-10T13:00:00Z", 50), iv("2024-01-10T13:00:00Z", "2024-01-10T14:00:00Z", 200))
	ev, battery := e.device("EV-1"), e.device("BAT-1")

	exp := oneDevice(e.loc, battery, 2000, 2000, "2024-01-10T14:00:00Z")
	exp["data"].([]any)[0].(map[string]any)["direction"] = "EXPORT"
	s := e.schedule("", exp)
	// Earned 2 kWh × 0.15 = 0.30 (net cost -0.30); flat out from 10:00 earns 0.10: 0.20 more.
	if got := s.Data[0]; math.Abs(got.Tariff.Value-0.3) > 1e-9 || got.Schedule[0].StartTime != "2024-01-10T11:00:00Z" ||
		math.Abs(s.Tariff.Value+0.3) > 1e-9 || math.Abs(s.Savings.Value-0.2) > 1e-9 {
		t.Errorf("export: %+v", s)
	}

	imp := oneDevice(e.loc, ev, 2000, 2000, "2024-01-10T14:00:00Z")
	for _, c := range []struct{ query, hour string }{
		{"", "2024-01-10T11:00:00Z"},                                     // cost: -0.05
		{"?objective=carbon", "2024-01-10T12:00:00Z"},                    // 50 g/kWh
		{"?objective=blend&carbon_weight=0.001", "2024-01-10T11:00:00Z"}, // -0.05 + 0.1 < 0.1 + 0.05
		{"?objective=blend&carbon_weight=0.01", "2024-01-10T12:00:00Z"},  // -0.05 + 1 > 0.1 + 0.5
	} {
		s := e.schedule(c.query, imp)
		if len(s.Data[0].Schedule) != 1 || s.Data[0].Schedule[0].StartTime != c.hour {
			t.Errorf("%q: %+v, want the hour from %s", c.query, s.Data[0].Schedule, c.hour)
		}
	}
	// include_carbon: 2 kWh at 50 g/kWh.
	r := e.do("POST", "/schedules?objective=carbon&include_carbon=true", imp)
	if got := carbonOf(t, r.Map(t)); got != "100g~1" {
		t.Errorf("carbon %s, want 100g~1", got)
	}
	if r := e.do("POST", "/schedules?objective=blend", imp); r.Status != 400 || r.Map(t)["param"] != "carbon_weight" {
		t.Errorf("blend without weight: %d %s", r.Status, r.Body)
	}
}
