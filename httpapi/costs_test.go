package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// costEnv is an account with one location, ready for tariffs and readings.
type costEnv struct {
	t   *testing.T
	api *apitest.API
	acc apitest.Account
	loc string
}

func newCostEnv(t *testing.T, zone string) *costEnv {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("costs")
	cur := map[string]string{"Europe/London": "GBP", "America/New_York": "USD"}[zone]
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"timezone": zone, "currency_code": cur}}).Map(t)["id"].(string)
	return &costEnv{t: t, api: api, acc: acc, loc: loc}
}

func (e *costEnv) do(method, path string, body any) apitest.Response {
	e.t.Helper()
	return e.api.As(e.acc.Test())(method, path, body)
}

// tariff creates a tariff element on the env's location; fields override the defaults.
func (e *costEnv) tariff(fields map[string]any) string {
	e.t.Helper()
	body := map[string]any{"location_id": e.loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z"}
	for k, v := range fields {
		body[k] = v
	}
	r := e.do("POST", "/tariffs/elements", body)
	if r.Status != 200 {
		e.t.Fatalf("create tariff: %d %s", r.Status, r.Body)
	}
	return r.Map(e.t)["id"].(string)
}

// flat is a schedule of one price all day, every day; bands may add tiers.
func flat(bands ...map[string]any) []any {
	rate := make([]any, len(bands))
	for i, b := range bands {
		rate[i] = b
	}
	return []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{
		"days": []string{"All"}, "hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00", "rate": rate}}}}}}
}

func (e *costEnv) reads(recs ...map[string]any) {
	e.t.Helper()
	for _, r := range recs {
		if _, ok := r["location_id"]; !ok {
			r["location_id"] = e.loc
		}
		if _, ok := r["units"]; !ok {
			r["units"] = "WH"
		}
	}
	res := e.do("PUT", "/meters/interval", recs)
	var b batchBody
	res.JSON(e.t, &b)
	if res.Status != 200 || b.RecordsAccepted != len(recs) {
		e.t.Fatalf("readings: %d %s", res.Status, res.Body)
	}
}

// energyBody reads energy.value_exact as Value (what the money tests compute by hand) and
// checks that energy.value is that number rounded to whole Wh.
type energyBody struct {
	Value float64
	Whole int64
}

func (e *energyBody) UnmarshalJSON(b []byte) error {
	var v struct {
		Value      json.RawMessage `json:"value"`
		ValueExact float64         `json:"value_exact"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if err := json.Unmarshal(v.Value, &e.Whole); err != nil {
		return fmt.Errorf("energy.value %s is not an integer: %w", v.Value, err)
	}
	if want := int64(math.Round(v.ValueExact)); e.Whole != want {
		return fmt.Errorf("energy.value %d is not value_exact %g rounded (%d)", e.Whole, v.ValueExact, want)
	}
	e.Value = v.ValueExact
	return nil
}

type costBody struct {
	Energy energyBody `json:"energy"`
	Tariff struct {
		Value, Confidence, Rate float64
		Components              struct {
			Commodity    float64 `json:"commodity"`
			NonCommodity float64 `json:"non_commodity"`
		} `json:"components"`
	} `json:"tariff"`
	LocationTimezone string `json:"location_timezone"`
	Data             []struct {
		StartTime         string `json:"start_time"`
		EndTime           string `json:"end_time"`
		Energy            energyBody
		Tariff            struct{ Value, Confidence float64 }
		RecordReferenceID string `json:"record_reference_id"`
	} `json:"data"`
}

func (e *costEnv) cost(id, query, start, end string) costBody {
	e.t.Helper()
	r := e.do("POST", "/costs/interval/"+id+query, map[string]any{"start_time": start, "end_time": end})
	if r.Status != 200 {
		e.t.Fatalf("cost %s%s: %d %s", id, query, r.Status, r.Body)
	}
	var c costBody
	r.JSON(e.t, &c)
	e.fleetAgrees(id, query, start, end, c)
	return c
}

// fleetAgrees checks that POST /costs/fleet gives, for the object of an interval answer,
// the same buckets, records and money (docs/costs.md, "POST /costs/fleet"): every hand-computed interval test is
// a fleet test too.
func (e *costEnv) fleetAgrees(id, query, start, end string, c costBody) {
	e.t.Helper()
	q, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
	agg := q.Get("aggregation")
	if agg == "" {
		agg = "NONE"
	}
	group, at := "location", id
	if strings.HasPrefix(id, "dev_") {
		group, at = "device", e.loc
	}
	body := map[string]any{"start_time": start, "end_time": end, "aggregation": agg, "group_by": group,
		"location_ids": []string{at}}
	if d := q.Get("direction"); d != "" {
		body["direction"] = d
	}
	r := e.do("POST", "/costs/fleet", body)
	if r.Status != 200 {
		e.t.Fatalf("fleet for %s%s: %d %s", id, query, r.Status, r.Body)
	}
	var f fleetBody
	r.JSON(e.t, &f)
	var rows []fleetRow
	for _, row := range f.Data {
		if row.LocationID == id || row.DeviceID == id {
			rows = append(rows, row)
		}
	}
	if agg == "NONE" {
		if len(c.Data) == 0 {
			if len(rows) != 0 {
				e.t.Errorf("fleet for %s: rows %+v for a window without records", id, rows)
			}
			return
		}
		if len(rows) != 1 || !close6(rows[0].Energy.Value, c.Energy.Value) || !close6(rows[0].Tariff.Value, c.Tariff.Value) ||
			!close6(rows[0].Tariff.Confidence, c.Tariff.Confidence) || rows[0].StartTime != start || rows[0].EndTime != end {
			e.t.Errorf("fleet for %s: %+v, interval total %v Wh %v conf %v", id, rows, c.Energy.Value, c.Tariff.Value, c.Tariff.Confidence)
		}
		return
	}
	if len(rows) != len(c.Data) {
		e.t.Fatalf("fleet for %s%s: %d rows, interval %d items: %s", id, query, len(rows), len(c.Data), r.Body)
	}
	for i, it := range c.Data {
		got := rows[i]
		if got.StartTime != it.StartTime || got.EndTime != it.EndTime || !close6(got.Energy.Value, it.Energy.Value) ||
			!close6(got.Tariff.Value, it.Tariff.Value) || !close6(got.Tariff.Confidence, it.Tariff.Confidence) {
			e.t.Errorf("fleet for %s%s row %d: %+v, interval %+v", id, query, i, got, it)
		}
	}
}

// fleetBody is a fleet_cost answer as the tests read it.
type fleetBody struct {
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
	Data       []fleetRow
	Skipped    struct {
		Count int
		Data  []struct{ ID, Code string }
	}
}

type fleetRow struct {
	LocationID   string `json:"location_id"`
	DeviceID     string `json:"device_id"`
	CustomerID   string `json:"customer_id"`
	Date         string `json:"date"`
	StartTime    string `json:"start_time"`
	EndTime      string `json:"end_time"`
	CurrencyCode string `json:"currency_code"`
	Energy       energyBody
	Tariff       struct{ Value, Confidence float64 }
}

// close6 compares money or energy as the API writes it (6 decimals).
func close6(a, b float64) bool { return math.Abs(a-b) < 1.5e-6 }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCostFlatTariffSmoke(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.25})})
	e.reads(
		map[string]any{"start_time": "2024-01-10T10:00:00Z", "end_time": "2024-01-10T10:30:00Z", "value": 1000},
		map[string]any{"start_time": "2024-01-10T10:30:00Z", "end_time": "2024-01-10T11:00:00Z", "value": 2000},
	)
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	// 1 kWh + 2 kWh at 0.25 = 0.75.
	if !near(c.Tariff.Value, 0.75) || !near(c.Energy.Value, 3000) || len(c.Data) != 2 || c.Tariff.Confidence != 1 {
		t.Fatalf("cost %+v", c)
	}
}

const rfc = "2006-01-02T15:04:05Z07:00"

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func hoursDur(n int) time.Duration { return time.Duration(n) * time.Hour }
