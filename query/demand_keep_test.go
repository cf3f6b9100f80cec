package query_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// keepGate holds back every write of demand peaks until it is opened, and counts the
// statements that read readings to measure peaks.
type keepGate struct {
	open     chan struct{}
	once     sync.Once
	measured demandReads
}

func (g *keepGate) observe(st chstore.Statement) {
	switch st.Name {
	case "query.insert_demand_peaks":
		<-g.open
	case "query.demand_readings":
		g.measured.measured.Add(1)
	}
}

// release lets the writes held back, and every later one, through.
func (g *keepGate) release() { g.once.Do(func() { close(g.open) }) }

// newGatedDemandHome is newDemandHome with its process's writes of demand peaks held back
// by a keepGate.
func newGatedDemandHome(t *testing.T) (*bucketFleet, string, *keepGate) {
	g := &keepGate{open: make(chan struct{})}
	api := apitest.Start(t, apitest.Options{Observe: g.observe})
	t.Cleanup(g.release) // before the service stops
	acc := api.NewAccount("demand-keep")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test()), auth: acc.Test(), scope: kwhouse.Scope{AccountID: acc.ID}}
	loc := f.location(capacityTariff())
	f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)
	return f, loc, g
}

// TestABillIsSentBeforeTheDemandPeaksItMeasuredAreKept: a bill whose month's peaks were
// measured is answered while their write to demand_peaks is still held back (a bill that
// waited for it would never come), and once it has landed a second process's bill serves
// them: one read of kept peaks, none of readings. March 2024, 1 kWh every hour of 1–5
// March: energy 30, demand 1 kW × 3.
func TestABillIsSentBeforeTheDemandPeaksItMeasuredAreKept(t *testing.T) {
	f, loc, gate := newGatedDemandHome(t)
	f.checkMarchBill(loc, "2024-03-31T23:00:00Z", "the bill measuring March, its keep held back", 30, 3)
	if n := gate.measured.measured.Load(); n != 1 {
		t.Fatalf("the first bill read readings for demand %d time(s), want 1", n)
	}
	gate.release()
	query.WaitAnswerStores(f.api.App.Pricer)

	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	f2 := *f
	f2.do = other.As(f.auth)
	f2.checkMarchBill(loc, "2024-03-31T23:00:00Z", "a second process's bill", 30, 3)
	if n := second.take(); n["query.demand_stored"] != 1 || n["query.demand_readings"] != 0 {
		t.Errorf("a second process's bill: %d read(s) of kept peaks, %d of readings; want 1 and 0", n["query.demand_stored"],
			n["query.demand_readings"])
	}
}

// TestABillWhoseMeasuredPeaksWereNotKeptStaysExact: a write of measured peaks that fails
// (ClickHouse gone once the bill was sent) is counted on /metrics as a failed write-back;
// the process's next bill serves the peaks it measured, and another process, finding none
// kept, measures the month again: both bill March exactly (energy 30, demand 3).
func TestABillWhoseMeasuredPeaksWereNotKeptStaysExact(t *testing.T) {
	f, loc, gate := newGatedDemandHome(t)
	f.checkMarchBill(loc, "2024-03-31T23:00:00Z", "the bill measuring March", 30, 3)
	f.api.ClickHouse.Down()
	gate.release()
	query.WaitAnswerStores(f.api.App.Pricer)
	f.api.ClickHouse.Up()
	if n := f.api.App.Pricer.BucketCounts().WritesFailed; n != 1 {
		t.Fatalf("%d failed write-back(s), want the peaks' 1", n)
	}
	if !strings.Contains(string(f.do("GET", "/metrics", nil).Body), "\nkwhouse_fleet_buckets_writes_failed_total 1\n") {
		t.Error("/metrics does not count the failed write of demand peaks")
	}
	f.checkMarchBill(loc, "2024-03-31T23:00:00Z", "the same process's next bill", 30, 3)
	if n := gate.measured.measured.Load(); n != 1 {
		t.Errorf("the same process measured March %d time(s), want once (its next bill serves what it measured)", n)
	}

	second := &pricingCount{}
	other := apitest.Start(t, apitest.Options{ShareWith: f.api, Observe: second.observe})
	f2 := *f
	f2.do = other.As(f.auth)
	f2.checkMarchBill(loc, "2024-03-31T23:00:00Z", "a second process's bill", 30, 3)
	if n := second.take()["query.demand_readings"]; n != 1 {
		t.Errorf("a second process's bill read readings for demand %d time(s), want 1 (March was never kept)", n)
	}
}
