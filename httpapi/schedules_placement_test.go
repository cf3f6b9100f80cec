package httpapi_test

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// multiCounter counts the statements of several names.
type multiCounter []*statementCounter

func (m multiCounter) observe(st chstore.Statement) {
	for _, c := range m {
		c.observe(st)
	}
}

func (m multiCounter) total() int64 {
	var n int64
	for _, c := range m {
		n += c.n.Load()
	}
	return n
}

// A device found reporting from the location is remembered there until its latest record
// there leaves the 90-day lookback: the next schedules read no records, and once that
// record is 90 days old the device, whose newer records are all at another location, is
// refused.
func TestScheduleRemembersDevicesReportingHereUntilTheirRecordsAgeOut(t *testing.T) {
	reads := multiCounter{{name: "schedules.placed"}, {name: "query.devices_here"}, {name: "query.devices_at"}}
	clock := &testkit.Clock{}
	clock.Advance(time.Until(time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)))
	api := apitest.Start(t, apitest.Options{Now: clock.Now, Observe: reads.observe})
	acc := api.NewAccount("schedules")
	loc := api.Do(apitest.Request{Method: "POST", Path: "/locations", Auth: acc.Test(),
		Body: map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}}).Map(t)["id"].(string)
	e := &costEnv{t: t, api: api, acc: acc, loc: loc}
	e.marketTariff(hourPrices(0.30, -0.05, 0.10, 0.20))
	other := e.do("POST", "/locations", map[string]any{"timezone": "Europe/London", "currency_code": "GBP"}).Map(t)["id"].(string)
	dev := e.device("EV-1")
	record := func(loc, start string) map[string]any {
		end := mustTime(start).Add(30 * time.Minute).Format(rfc)
		return map[string]any{"location_id": loc, "device_id": dev, "direction": "IMPORT", "tariff_rate": "IMPORT", "units": "WH",
			"value": 100, "start_time": start, "end_time": end}
	}
	// Here 2023-10-12T09:30Z (in the lookback until 2024-01-10T09:30Z), elsewhere yesterday.
	if r := e.do("PUT", "/meters/interval", []any{record(e.loc, "2023-10-12T09:30:00Z"), record(other, "2024-01-09T10:00:00Z")}); r.Status != 200 {
		t.Fatalf("records: %d %s", r.Status, r.Body)
	}
	body := oneDevice(e.loc, dev, 2000, 2000, "2024-01-10T14:00:00Z")
	e.schedule("", body)
	before := reads.total()
	e.schedule("", body)
	if n := reads.total() - before; n != 0 {
		t.Errorf("the second schedule read the device's records %d times, want 0", n)
	}
	clock.Advance(31 * time.Minute) // 09:31: the record here is more than 90 days old
	r := e.do("POST", "/schedules", body)
	if m := r.Map(t); r.Status != 400 || m["code"] != "device_at_other_location" || m["param"] != "data[0].device_id" {
		t.Errorf("after the record here aged out: %d %s, want 400 device_at_other_location", r.Status, r.Body)
	}
}
