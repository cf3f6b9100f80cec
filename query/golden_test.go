package query

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SQL files in testdata/sql")

// goldenShapes are the SQL shapes the cost, fleet and carbon queries send, rendered from
// their templates (placeholders @name and ? are bound at run time). The files under
// testdata/sql show a reviewer what runs; `go test ./query -run Golden -update` rewrites
// them after a template change, and the diff is the change.
var goldenShapes = []struct {
	file, template string
	shape          any
}{
	{"segment_rows_market.sql", "segment_rows", pricingShape{Markets: true}},
	{"interval_arrays_records.sql", "fleet_arrays", pricingShape{Aggregation: aggregationRecord, Dedup: dedupArgMax,
		Refs: true, Comps: []componentArrays{{N: 1, Present: true, Gapless: true, OneConf: true, Tariffed: true}, {N: 2}, {N: 3}}}},
	{"interval_join_day_tiered_market.sql", "fleet", pricingShape{Aggregation: "DAY", Tiered: true, Markets: true,
		Dedup: dedupArgMax, ExtSegments: true}},
	{"session_join_records_device_tiered.sql", "fleet", pricingShape{Aggregation: aggregationRecord, Tiered: true,
		Dedup: dedupArgMax, ExtSegments: true, Refs: true, Session: true, Devices: true, Device: true}},
	{"instant_join.sql", "fleet", pricingShape{Aggregation: aggregationRecord, Dedup: dedupArgMax, ExtSegments: true,
		Refs: true, Instant: true}},
	{"fleet_join_day_tiered.sql", "fleet", pricingShape{Aggregation: "DAY", Tiered: true, Markets: true, ExtSegments: true}},
	{"fleet_join_month_devices.sql", "fleet", pricingShape{Aggregation: "MONTH", Devices: true, ExtSegments: true}},
	{"fleet_arrays_day_final.sql", "fleet_arrays", pricingShape{Aggregation: "DAY", Dedup: dedupFinal,
		Comps: []componentArrays{{N: 1, Present: true, Gapless: true, OneConf: true, conf1: 1, Tariffed: true}, {N: 2}, {N: 3}}}},
	{"fleet_arrays_day.sql", "fleet_arrays", pricingShape{Aggregation: "DAY",
		Comps: []componentArrays{{N: 1, Present: true, Steps: []int{1, 2}, Tariffed: true}, {N: 2, Tariffed: true}, {N: 3}}}},
	{"fleet_arrays_day_cluster.sql", "fleet_arrays", pricingShape{Aggregation: "DAY", Cluster: true,
		Comps: []componentArrays{{N: 1, Present: true, Tariffed: true}, {N: 2, Present: true, Gapless: true, Tariffed: true}, {N: 3, Tariffed: true}}}},
	{"fleet_join_day_tiered_argmax.sql", "fleet", pricingShape{Aggregation: "DAY", Tiered: true, Dedup: dedupArgMax, ExtSegments: true}},
	{"fleet_arrays_none_argmax.sql", "fleet_arrays", pricingShape{Aggregation: "NONE", Dedup: dedupArgMax,
		Comps: []componentArrays{{N: 1, Present: true, Tariffed: true}, {N: 2, Present: true, Tariffed: true}, {N: 3, Tariffed: true}}}},
	{"bucket_stored.sql", "bucket_stored", nil},
	{"bucket_counts.sql", "bucket_counts", nil},
	{"bucket_months.sql", "bucket_months", nil},
	{"bucket_months_latest.sql", "bucket_months_latest", nil},
	{"count_months.sql", "count_months", nil},
	{"month_prints.sql", "month_prints", nil},
	{"month_stored.sql", "month_stored", nil},
	{"fleet_recorded.sql", "fleet_recorded", nil},
	{"fleet_ahead.sql", "fleet_ahead", nil},
	{"fleet_token.sql", "fleet_token", tokenShape{}},
	{"fleet_named_token.sql", "fleet_token", tokenShape{Named: true}},
	{"fleet_page_token.sql", "fleet_token", tokenShape{From: true, Upto: true}},
	{"fleet_tokens_from.sql", "fleet_token", tokenShape{From: true}},
	{"carbon_records.sql", "carbon_records", pricingShape{Dedup: dedupArgMax, Session: true}},
	{"demand_readings.sql", "demand_readings", demandShape},
	{"demand_stored.sql", "demand_stored", nil},
	{"demand_days.sql", "demand_days", nil},
	{"demand_dates.sql", "demand_dates", nil},
	{"plan_segments_market.sql", "plan_segments", pricingShape{Markets: true}},
}

var blankLines = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+`)

func TestGoldenSQL(t *testing.T) {
	for _, g := range goldenShapes {
		var buf bytes.Buffer
		if err := templates.ExecuteTemplate(&buf, g.template, g.shape); err != nil {
			t.Fatalf("%s: %v", g.file, err)
		}
		got := append(bytes.TrimSpace(blankLines.ReplaceAll(buf.Bytes(), []byte("\n"))), '\n')
		path := filepath.Join("testdata", "sql", g.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./query -run Golden -update)", g.file, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the rendered SQL changed; review it and run go test ./query -run Golden -update", g.file)
		}
	}
}
