package schema_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/testkit"
)

// Migration 0023 copies demand_peaks into year partitions: peaks kept before it are still
// read after it, the latest version of each month (here it runs a second time, as after
// a failure), and its partitions are years.
func TestDemandPeaksByYearKeepEveryKeptMonth(t *testing.T) {
	db := testkit.ClickHouse(t)
	if db.Cluster != "" {
		t.Skip("0023 runs again only on one node") // as 0008: the live table holds the copy's ZooKeeper path
	}
	ctx := context.Background()
	months := []time.Time{time.Date(2023, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2024, 1, 31, 23, 0, 0, 0, time.UTC)}
	err := db.InsertRows(ctx, chstore.Tool(`INSERT INTO demand_peaks (account_id, live_mode, location_id, direction, month_start,
		tariff_key, peaks, readings_seen, version) VALUES`), 3, func(i int) []any {
		return []any{"acc_p", uint8(0), "loc_p", "IMPORT", months[min(i, 1)], "r:k", []float64{float64(i + 1)}, uint64(7), uint64(i + 1)}
	})
	if err != nil {
		t.Fatal(err)
	}
	runAgain(t, db, 23)
	rows, err := db.Query(ctx, chstore.Tool(`SELECT toString(month_start), argMax(peaks, version)[1]
		FROM demand_peaks WHERE account_id = 'acc_p' GROUP BY month_start ORDER BY month_start`))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var month string
		var peak float64
		if err := rows.Scan(&month, &peak); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s=%g", month, peak))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "2023-12-31 23:00:00=1 2024-01-31 23:00:00=3"; strings.Join(got, " ") != want {
		t.Errorf("kept peaks after the copy: %v, want %s", got, want)
	}
	var partitions string
	if err := db.QueryRow(ctx, chstore.Tool(`SELECT arrayStringConcat(groupUniqArray(partition), ',') FROM system.parts
		WHERE database = ? AND table = 'demand_peaks' AND active`), db.Database).Scan(&partitions); err != nil {
		t.Fatal(err)
	}
	if partitions != "2023,2024" && partitions != "2024,2023" {
		t.Errorf("partitions %q, want the years 2023 and 2024", partitions)
	}
}
