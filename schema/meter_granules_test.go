package schema_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/schema"
	"github.com/kwhouse/kwhouse/testkit"
)

// Migration 0024 copies meter_records into 1,024-row granules while a writer goes on:
// a reading written to the old table after the copy, and one written to the new table
// before its views were made again, are both kept and both counted as changes; readings
// from before are kept once each; the views count what is written after it; and it runs
// again (as after a failure) keeping all of it.
func TestFinerGranulesKeepAndCountEveryReading(t *testing.T) {
	db := testkit.ClickHouse(t)
	if db.Cluster != "" {
		t.Skip("0024 runs again only on one node") // as 0008: the live table holds the copy's ZooKeeper path
	}
	ctx := context.Background()
	write := func(loc string, day int) {
		t.Helper()
		start := time.Date(2024, 3, day, 12, 0, 0, 0, time.UTC)
		err := db.InsertRows(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id, device_id, direction,
			tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id, record_reference_id, batch_id, version) VALUES`), 1,
			func(int) []any {
				return []any{"acc_g", uint8(0), loc, "", "IMPORT", "IMPORT", start, start.Add(30 * time.Minute), float64(day), 1.0,
					"", "", "bat_g", uint64(time.Now().UnixNano())}
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	write("loc_before", 1)
	write("loc_before", 2)
	migs, err := schema.Migrations(schema.Form{Database: db.Database})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		if m.Version != 24 {
			continue
		}
		for i, stmt := range m.Statements {
			if err := db.Exec(ctx, chstore.Tool(stmt)); err != nil {
				t.Fatalf("0024 statement %d: %v", i+1, err)
			}
			switch {
			case strings.HasPrefix(stmt, "INSERT INTO meter_records_1k"):
				write("loc_old_table", 3) // after the copy, before the swap
			case strings.HasPrefix(stmt, "RENAME TABLE"):
				write("loc_new_table", 4) // after the swap, before the views
			}
		}
	}
	write("loc_after", 5)
	want := "loc_after:1:5:1 loc_before:2:3:2 loc_new_table:1:4:1 loc_old_table:1:3:1"
	if got := granuleRecords(t, db); got != want {
		t.Errorf("readings (location:rows:Wh:counted) after the copy: %s, want %s", got, want)
	}
	runAgain(t, db, 24)
	if got := granuleRecords(t, db); got != want {
		t.Errorf("after running 0024 again: %s, want %s", got, want)
	}
	// Only a reading written between the swap and the views is stored twice (one version:
	// reads collapse it); the others are stored once.
	var stored uint64
	if err := db.QueryRow(ctx, chstore.Tool(`SELECT count() FROM meter_records WHERE account_id = 'acc_g'
		AND location_id != 'loc_new_table'`)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 4 {
		t.Errorf("%d rows stored of the 4 readings written before the copy, during it and after it", stored)
	}
	var create string
	if err := db.QueryRow(ctx, chstore.Tool("SELECT engine_full FROM system.tables WHERE database = ? AND name = 'meter_records'"),
		db.Database).Scan(&create); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, "index_granularity = 1024") {
		t.Errorf("meter_records: %s, want 1,024-row granules", create)
	}
}

// granuleRecords lists acc_g's locations as location:rows:Wh:counted, rows and Wh of the
// latest version of each reading, counted the change count its days have (at least 1
// for each reading: a count may count a row twice).
func granuleRecords(t *testing.T, db *chstore.DB) string {
	t.Helper()
	var out string
	err := db.QueryRow(context.Background(), chstore.Tool(`SELECT arrayStringConcat(arraySort(groupArray(
			concat(r.location_id, ':', toString(r.n), ':', toString(r.wh), ':', toString(least(c.n, r.n))))), ' ')
		FROM (SELECT location_id, toUInt64(uniqExact(start_time)) AS n, sum(energy_wh) AS wh FROM meter_records FINAL
			WHERE account_id = 'acc_g' GROUP BY location_id) AS r
		ALL LEFT JOIN (SELECT location_id, sum(n) AS n FROM reading_changes WHERE account_id = 'acc_g' GROUP BY location_id) AS c
		USING location_id`)).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
