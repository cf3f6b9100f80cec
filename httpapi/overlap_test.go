package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// Two readings of one location that overlap without covering the same interval would both
// be priced (02:00–04:00 1,000 Wh and 03:00–04:00 500 Wh as 1,500 Wh). The one sent later
// fails as a record, naming the one it overlaps; the cost is the first one's 1,000 Wh.
func TestOverlappingReadingsOfOneBatchFailTheLaterOne(t *testing.T) {
	e := newCostEnv(t, "Europe/London")
	e.tariff(map[string]any{"schedule": flat(map[string]any{"fixed": 0.2})})
	first := map[string]any{"location_id": e.loc, "units": "WH", "value": 1000, "record_reference_id": "a",
		"start_time": "2024-01-10T02:00:00Z", "end_time": "2024-01-10T04:00:00Z"}
	later := map[string]any{"location_id": e.loc, "units": "WH", "value": 500, "record_reference_id": "b",
		"start_time": "2024-01-10T03:00:00Z", "end_time": "2024-01-10T04:00:00Z"}
	other := map[string]any{"location_id": e.loc, "units": "WH", "value": 700, "record_reference_id": "c",
		"start_time": "2024-01-11T03:00:00Z", "end_time": "2024-01-11T04:00:00Z", "direction": "EXPORT"}
	check := func(name string, r apitest.Response) {
		t.Helper()
		var b batchBody
		r.JSON(t, &b)
		if r.Status != 200 || b.RecordsSubmitted != 3 || b.RecordsAccepted != 2 || len(b.FailedRecords) != 1 {
			t.Fatalf("%s: %d %s, want 200 with 2 of 3 accepted", name, r.Status, r.Body)
		}
		f := b.FailedRecords[0]
		if f.RecordNum != 1 || f.RecordReferenceID != "b" || !strings.Contains(f.Error, "overlaps record 0 (2024-01-10T02:00:00Z to 2024-01-10T04:00:00Z)") {
			t.Errorf("%s: failed record %+v, want record 1 (b) overlapping record 0", name, f)
		}
	}
	check("JSON array", e.do("PUT", "/meters/interval", []any{first, later, other}))
	c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z")
	if c.Energy.Value != 1000 || !near(c.Tariff.Value, 0.2) {
		t.Errorf("cost: %v Wh, %v GBP; want 1,000 Wh and 0.2 (the first reading only)", c.Energy.Value, c.Tariff.Value)
	}

	// The same as NDJSON: line numbers, and the same rule. Sending the first reading again
	// replaces it (same interval), as before.
	var lines []string
	for _, r := range []map[string]any{first, later, other} {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	check("NDJSON", e.api.Do(apitest.Request{Method: "PUT", Path: "/meters/interval", Auth: e.acc.Test(),
		Body: strings.Join(lines, "\n") + "\n", Header: map[string]string{"Content-Type": "application/x-ndjson"}}))
	if c := e.cost(e.loc, "", "2024-01-10T00:00:00Z", "2024-01-11T00:00:00Z"); c.Energy.Value != 1000 {
		t.Errorf("cost after re-sending: %v Wh, want 1,000", c.Energy.Value)
	}
}
