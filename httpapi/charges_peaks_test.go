package httpapi_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// keptPeaks are the latest kept demand peaks of a location by local month start, and how
// many rows (versions) demand_peaks holds for it, once the process has written back what
// its answers measured (after they were sent).
func (e *costEnv) keptPeaks() (map[string][]float64, uint64) {
	e.t.Helper()
	if err := e.api.App.Pricer.WaitBucketWrites(context.Background(), kwhouse.Scope{AccountID: e.acc.ID}); err != nil {
		e.t.Fatal(err)
	}
	rows, err := e.api.App.DB.Query(context.Background(), chstore.Tool(`SELECT toString(month_start), argMax(peaks, version), count()
		FROM demand_peaks WHERE location_id = ? GROUP BY month_start`), e.loc)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]float64{}
	var n uint64
	for rows.Next() {
		var month string
		var peaks []float64
		var c uint64
		if err := rows.Scan(&month, &peaks, &c); err != nil {
			e.t.Fatal(err)
		}
		out[month], n = peaks, n+c
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out, n
}

// A Belgian capacity tariff (4 EUR/kW, 2.5 kW floor) over January–March 2024: the months'
// peaks are kept, served while their readings are unchanged, and a reading that raises
// January's peak re-measures January only.
func TestBillDemandPeaksKeptUntilAReadingRaisesThem(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}),
		"demand_charges": []any{map[string]any{"rate_per_kw": 4, "minimum_kw": 2.5}}})
	e.reads(reading("2024-01-10T17:00:00Z", "2024-01-10T17:15:00Z", 1000), // 4 kW
		reading("2024-03-05T10:00:00Z", "2024-03-05T10:15:00Z", 500)) // 2 kW
	// Local January to March (Brussels: +01:00 until 31 March 01:00 UTC, then +02:00).
	const from, to = "2023-12-31T23:00:00Z", "2024-03-31T22:00:00Z"
	jan, feb, mar := "2023-12-31 23:00:00", "2024-01-31 23:00:00", "2024-02-29 23:00:00"
	b := e.bill("&aggregation=MONTH", from, to)
	if len(b.Data) != 2 {
		t.Fatalf("months %+v", b.Data)
	}
	// January max(4, 2.5) × 4; February has no readings and no item, but counts at the top
	// level: 2.5 × 4; March max(2, 2.5) × 4.
	b.Data[0].Charges.check(t, "January", billCharges{0.3, 0, 16, 0, 16.3})
	b.Data[1].Charges.check(t, "March", billCharges{0.15, 0, 10, 0, 10.15})
	b.Charges.check(t, "January to March", billCharges{0.45, 0, 36, 0, 36.45})
	peaks, n := e.keptPeaks()
	if n != 3 || len(peaks[jan]) != 1 || peaks[jan][0] != 4 || len(peaks[feb]) != 1 || peaks[feb][0] != 0 ||
		len(peaks[mar]) != 1 || peaks[mar][0] != 2 {
		t.Fatalf("kept peaks %v (%d rows), want January 4, February 0, March 2 kW", peaks, n)
	}
	// Unchanged readings: the kept peaks are served, none measured again.
	e.bill("&aggregation=MONTH", from, to).Charges.check(t, "again", billCharges{0.45, 0, 36, 0, 36.45})
	if _, again := e.keptPeaks(); again != 3 {
		t.Fatalf("%d rows of kept peaks after an unchanged answer, want 3", again)
	}
	// 1.5 kWh in each quarter of 20 January 08:00–08:30 UTC: 6 kW.
	e.reads(reading("2024-01-20T08:00:00Z", "2024-01-20T08:30:00Z", 3000))
	b = e.bill("&aggregation=MONTH", from, to)
	b.Data[0].Charges.check(t, "January, raised", billCharges{1.2, 0, 24, 0, 25.2})
	b.Charges.check(t, "January to March, raised", billCharges{1.35, 0, 44, 0, 45.35})
	peaks, n = e.keptPeaks()
	if n != 4 || peaks[jan][0] != 6 {
		t.Fatalf("kept peaks %v (%d rows), want January re-measured at 6 kW, the others kept", peaks, n)
	}
}

// Fleet answers with include_charges are paged by location id like the others: a page
// prices only the locations it needs (so the third location's demand peaks are not
// measured for the first page), and the pages together are the whole answer. Three
// London homes, 0.2 GBP/kWh, 0.5 GBP a day, 2 GBP/kW of 15-minute demand: home k uses
// k kWh on 10 March 12:00–12:15 UTC (4k kW).
func TestFleetBillPagedByID(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("fleet-bill-pages")
	e := &costEnv{t: t, api: api, acc: acc}
	var locs []string
	for k := 1; k <= 3; k++ {
		e.loc = e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
		e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.2}), "standing_charge": 0.5,
			"demand_charges": []any{map[string]any{"rate_per_kw": 2}}})
		e.reads(reading("2024-03-10T12:00:00Z", "2024-03-10T12:15:00Z", float64(1000*k)))
		locs = append(locs, e.loc)
	}
	want := map[string]billCharges{}
	for k, l := range locs {
		kk := float64(k + 1)
		want[l] = billCharges{0.2 * kk, 15.5, 8 * kk, 0, 0.2*kk + 15.5 + 8*kk}
	}
	sort.Strings(locs)
	page := func(cursor string) ([]fleetBillRow, string) {
		body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-04-01T00:00:00Z",
			"aggregation": "MONTH", "include_charges": true, "limit": 1}
		if cursor != "" {
			body["starting_after"] = cursor
		}
		r := e.do("POST", "/costs/fleet", body)
		if r.Status != 200 {
			t.Fatalf("page after %q: %d %s", cursor, r.Status, r.Body)
		}
		var b struct {
			Data       []fleetBillRow
			NextCursor string `json:"next_cursor"`
		}
		r.JSON(t, &b)
		return b.Data, b.NextCursor
	}
	rows, cursor := page("")
	e.loc = locs[2]
	if peaks, n := e.keptPeaks(); n != 0 {
		t.Errorf("the first page measured the last location's peaks too: %v", peaks)
	}
	for cursor != "" {
		var more []fleetBillRow
		more, cursor = page(cursor)
		rows = append(rows, more...)
	}
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for i, row := range rows {
		if row.LocationID != locs[i] {
			t.Errorf("row %d is %s, want %s", i, row.LocationID, locs[i])
		}
		row.Charges.check(t, row.LocationID, want[row.LocationID])
	}
}

// A deleted location's kept demand peaks are deleted with it (a mutation, in the
// background, as its priced buckets are).
func TestBillDemandPeaksDeletedWithTheirLocation(t *testing.T) {
	e := newBillEnv(t, "Europe/Brussels", "EUR")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.3}),
		"demand_charges": []any{map[string]any{"rate_per_kw": 4, "minimum_kw": 2.5}}})
	e.reads(reading("2024-01-10T17:00:00Z", "2024-01-10T17:15:00Z", 1000))
	e.bill("&aggregation=MONTH", "2023-12-31T23:00:00Z", "2024-01-31T23:00:00Z")
	if _, n := e.keptPeaks(); n != 1 {
		t.Fatalf("%d rows of kept peaks, want January's", n)
	}
	if r := e.do("DELETE", "/locations/"+e.loc, nil); r.Status != 202 {
		t.Fatalf("delete location: %d %s", r.Status, r.Body)
	}
	n := uint64(1)
	for deadline := time.Now().Add(20 * time.Second); n != 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, n = e.keptPeaks()
	}
	if n != 0 {
		t.Fatalf("%d rows of kept demand peaks of the deleted location remain", n)
	}
}
