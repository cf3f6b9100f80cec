package query

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestZoneBatchesShareStateReads: a zone's tiered and untiered batches share reads of
// consecutive location ids that name the tiered locations: over a month, one read for
// 1,001 locations (31,031 buckets), two of about equal size for 2,065 (every batch's
// locations covered, each once); over a year, two for 1,001; a zone with one batch,
// another run of days or a location the reads do not cover read their own.
func TestZoneBatchesShareStateReads(t *testing.T) {
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
	bigB := fleetBatch{zone: "America/New_York", tiered: true, ids: ids("h", 1)}
	bigC := fleetBatch{zone: "America/New_York", ids: ids("f", 1000)}
	bigD := fleetBatch{zone: "America/New_York", ids: ids("g", 64)}
	ctx := withSharedStates(context.Background(), []fleetBatch{plain, tiered, alone, bigA, bigB, bigC, bigD},
		func(string) dayRun { return run })
	shared := func(b fleetBatch, r dayRun) *zoneShares { zs, _ := sharedZone(ctx, b, r); return zs }
	zs := shared(plain, run)
	if zs == nil || shared(tiered, run) != zs || len(zs.parts) != 1 {
		t.Fatalf("London's batches share no single read")
	}
	if z := zs.parts[0]; len(z.batch.ids) != 1000 || len(z.batch.chained) != 100 || z.batch.chained[0] != "b0000" {
		t.Errorf("the shared read asks about %d locations, %d of them tiered", len(z.batch.ids), len(z.batch.chained))
	}
	if shared(alone, run) != nil {
		t.Errorf("a zone of one batch shares a read")
	}
	ny, i := sharedZone(ctx, bigA, run)
	if ny == nil || shared(bigB, run) != ny || shared(bigC, run) != ny || len(ny.parts) != 2 {
		t.Fatalf("2,065 locations of a zone are not read in two shared chunks")
	}
	a, b := ny.parts[0].batch, ny.parts[1].batch
	if len(a.ids) != 1032 || len(b.ids) != 1033 || a.ids[1031] >= b.ids[0] || len(a.chained) != 0 || len(b.chained) != 1 {
		t.Errorf("chunks of %d and %d locations (%d, %d tiered), not consecutive halves", len(a.ids), len(b.ids), len(a.chained), len(b.chained))
	}
	if _, j := sharedZone(ctx, bigB, run); len(ny.partsOf[i]) != 1 || len(ny.partsOf[j]) != 1 {
		t.Errorf("the first untiered batch reads %d chunks, the tiered one %d", len(ny.partsOf[i]), len(ny.partsOf[j]))
	}
	if _, k := sharedZone(ctx, bigC, run); len(ny.partsOf[k]) != 2 {
		t.Errorf("the untiered batch across both chunks reads %d of them", len(ny.partsOf[k]))
	}
	year := dayRunOf(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), london)
	yctx := withSharedStates(context.Background(), []fleetBatch{bigA, bigB}, func(string) dayRun { return year })
	if zs, _ := sharedZone(yctx, bigA, year); zs == nil || len(zs.parts) != 2 {
		t.Errorf("a year of 1,001 locations is not read in two shared chunks")
	}
	other := dayRunOf(time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), london)
	if shared(plain, other) != nil {
		t.Errorf("a batch over other days uses the shared read")
	}
	if shared(fleetBatch{zone: "Europe/London", ids: []string{"a0001", "z"}}, run) != nil ||
		shared(fleetBatch{zone: "Europe/London", ids: []string{"a0001"}}, run) != nil {
		t.Errorf("a batch with a location the shared read does not cover, or a part of a batch, uses it")
	}
}
