package conformance

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// A dashboard asks the fleet's January again and again, through the answer cache, while
// clients write readings and the first node (kwhouse's first address and shard 1's first
// replica) is killed and started again. Answers during the outage may fail (503, retried
// by the dashboard) or be computed from the replica left; once every replica holds every
// reading, the answer — served or computed — counts every acknowledged reading
// (docs/costs.md, "Answer cache": no answer computed from a replica behind its token is kept).
func TestKilledNodeWhileADashboardAsksLeavesNoStaleAnswer(t *testing.T) {
	clusterEnv(t)
	api := apitest.Start(t, apitest.Options{Configure: func(c *config.Config) {
		c.Costs.AnswerCache, c.Costs.AnswerCacheTTL, c.Costs.AnswerCacheMaxBytes = "on", time.Minute, 1<<20
	}})
	acc := api.NewAccount("dashboard")
	do := api.As(acc.Test())
	var locs []string
	for i := 0; i < 6; i++ {
		loc := do("POST", "/locations", map[string]any{"postal_address": map[string]any{"country_code": "GB"}}).Map(t)["id"].(string)
		flatTariff(t, do, loc)
		locs = append(locs, loc)
	}
	var acked atomic.Int64
	stop := make(chan struct{})
	var writers, dashboard sync.WaitGroup
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for c, loc := range locs {
		writers.Add(1)
		go func(c int, loc string) {
			defer writers.Done()
			for i := 0; i < 40; i++ {
				time.Sleep(300 * time.Millisecond) // the dashboard asks again between writes
				// A reading sent again after a failure replaces itself: retried until acknowledged.
				for try := 0; pushOne(api, acc.Test(), loc, t0.Add(time.Duration(i)*30*time.Minute)).Status != 200; try++ {
					if try == 40 {
						t.Errorf("client %d push %d: never acknowledged", c, i)
						return
					}
					time.Sleep(250 * time.Millisecond)
				}
				acked.Add(1)
			}
		}(c, loc)
	}
	var asked, failed atomic.Int64
	dashboard.Add(1)
	go func() {
		defer dashboard.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, status := januaryWh(t, do); status != 200 {
				failed.Add(1)
			}
			asked.Add(1)
		}
	}()
	time.Sleep(time.Second)
	testkit.ClusterScript(t, "kill", "1")
	time.Sleep(3 * time.Second)
	testkit.ClusterScript(t, "start", "1")
	writers.Wait()
	close(stop)
	dashboard.Wait()
	syncReplicas(t, api.Database())
	want := float64(acked.Load() * 100)
	for pass := 0; pass < 10; pass++ { // computed or served, then served once the answer is stored
		got, status := januaryWh(t, do)
		if status != 200 || got != want {
			t.Errorf("asked once the replicas caught up: %d, %v Wh, want %v (%d readings acknowledged)", status, got, want, acked.Load())
		}
		time.Sleep(100 * time.Millisecond)
	}
	counts := api.App.Pricer.AnswerCounts()
	if counts.Served == 0 {
		t.Errorf("the dashboard's %d answers were all computed: the drill never used the cache", asked.Load())
	}
	t.Logf("%d answers (%d failed during the outage; %d served from the cache, %d computed), %d readings", asked.Load(),
		failed.Load(), counts.Served, counts.Computed, acked.Load())
}

// januaryWh is the fleet's energy of January 2024 as an answer gives it, and its status.
func januaryWh(t *testing.T, do func(method, path string, body any) apitest.Response) (float64, int) {
	r := do("POST", "/costs/fleet", map[string]any{"start_time": "2024-01-01T00:00:00Z", "end_time": "2024-02-01T00:00:00Z",
		"aggregation": "NONE"})
	if r.Status != 200 {
		return 0, r.Status
	}
	var body struct {
		Data []struct {
			Energy struct {
				ValueExact float64 `json:"value_exact"`
			} `json:"energy"`
		} `json:"data"`
	}
	r.JSON(t, &body)
	var wh float64
	for _, row := range body.Data {
		wh += row.Energy.ValueExact
	}
	return wh, 200
}

func flatTariff(t *testing.T, do func(method, path string, body any) apitest.Response, loc string) {
	t.Helper()
	schedule := []any{map[string]any{"months": []string{"All"}, "days_and_hours": []any{map[string]any{
		"days": []string{"All"}, "hours": []any{map[string]any{"valid_from": "00:00:00", "valid_to": "00:00:00",
			"rate": []any{map[string]any{"fixed": 0.25}}}}}}}}
	r := do("POST", "/tariffs/elements", map[string]any{"location_id": loc, "direction": "IMPORT", "type": "COMMODITY",
		"contract_start_date": "2020-01-01T00:00:00Z", "contract_end_date": "2030-01-01T00:00:00Z", "schedule": schedule})
	if r.Status != 200 {
		t.Fatalf("tariff: %d %s", r.Status, r.Body)
	}
}

// syncReplicas waits until every node holds every part of the readings and their counts.
func syncReplicas(t *testing.T, database string) {
	t.Helper()
	for _, addr := range strings.Split(os.Getenv("KWHOUSE_TEST_CLICKHOUSE_ADDR"), ",") {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		db := testkit.OpenNode(t, addr, database)
		testkit.SyncReadings(ctx, t, db)
		db.Close()
		cancel()
	}
}
