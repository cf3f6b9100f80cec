package query_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestBucketPricerKeepsDemandPeaks: a background pass on 6 March 2024 measures and keeps
// the demand peaks of March for a London home with a capacity charge (3 GBP/kW), so its
// bill reads no readings for demand: 1 kWh every hour of 1–5 March is 1 kW in every
// quarter hour, a demand charge of 3.
func TestBucketPricerKeepsDemandPeaks(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 3, 6, 12, 0, 0, 0, time.UTC) }
	var measured atomic.Int64
	api := apitest.Start(t, apitest.Options{Now: now, Observe: func(st chstore.Statement) {
		if st.Name == "query.demand_readings" {
			measured.Add(1)
		}
	}})
	acc := api.NewAccount("peaks")
	f := &bucketFleet{t: t, api: api, do: api.As(acc.Test())}
	loc := f.location(map[string]any{"schedule": flatRate([]any{map[string]any{"fixed": 0.25}}),
		"demand_charges": []any{map[string]any{"rate_per_kw": 3}}})
	f.readings(loc, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 5*24, 1000)

	bp := query.NewBucketPricer(api.App.Pricer, api.App.Cache, testkit.Logger(), time.Minute, 35)
	if err := bp.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if measured.Load() == 0 {
		t.Fatal("a background pass measured no demand peaks")
	}
	before := measured.Load()
	r := f.do("POST", "/costs/interval/"+loc+"?aggregation=MONTH&include_charges=true",
		map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-31T23:00:00Z"})
	var b struct {
		Charges struct{ Energy, Demand, Total float64 }
	}
	r.JSON(t, &b)
	if r.Status != 200 || !close6(b.Charges.Energy, 30) || !close6(b.Charges.Demand, 3) || !close6(b.Charges.Total, 33) {
		t.Fatalf("March bill: %d %s", r.Status, r.Body)
	}
	if n := measured.Load() - before; n != 0 {
		t.Errorf("the bill measured demand peaks %d time(s) after a background pass kept them", n)
	}
}
