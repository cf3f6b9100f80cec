package query

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestZoneBatchesShareOneStateRead: a zone's tiered and untiered batches share one read
// that names the tiered locations; a zone with one batch, batches of more than fleetChunk
// locations together, another run of days or a location the read does not cover read
// their own.
func TestZoneBatchesShareOneStateRead(t *testing.T) {
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%04d", prefix, i)
		}
		return out
	}
	london, _ := time.LoadLocation("Europe/London")
	run := dayRunOf(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), london)
	plain := fleetBatch{zone: "Europe/London", ids: ids("a", 900)}
	tiered := fleetBatch{zone: "Europe/London", tiered: true, ids: ids("b", 100)}
	alone := fleetBatch{zone: "Europe/Paris", ids: ids("c", 10)}
	bigA := fleetBatch{zone: "America/New_York", ids: ids("d", 1000)}
	bigB := fleetBatch{zone: "America/New_York", tiered: true, ids: ids("e", 1)}
	ctx := withSharedStates(context.Background(), []fleetBatch{plain, tiered, alone, bigA, bigB},
		func(string) dayRun { return run })
	z := sharedZone(ctx, plain, run)
	if z == nil || sharedZone(ctx, tiered, run) != z {
		t.Fatalf("London's batches share no read")
	}
	if len(z.batch.ids) != 1000 || len(z.batch.chained) != 100 || z.batch.chained[0] != "b0000" {
		t.Errorf("the shared read asks about %d locations, %d of them tiered", len(z.batch.ids), len(z.batch.chained))
	}
	if sharedZone(ctx, alone, run) != nil || sharedZone(ctx, bigA, run) != nil {
		t.Errorf("a zone of one batch, or of 1,001 locations, shares a read")
	}
	other := dayRunOf(time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), london)
	if sharedZone(ctx, plain, other) != nil {
		t.Errorf("a batch over other days uses the shared read")
	}
	if sharedZone(ctx, fleetBatch{zone: "Europe/London", ids: []string{"a0001", "z"}}, run) != nil {
		t.Errorf("a batch with a location the shared read does not cover uses it")
	}
}
