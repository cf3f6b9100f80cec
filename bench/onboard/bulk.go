package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/onboard"
	"github.com/kwhouse/kwhouse/tariffs"
)

// bulkShapes are the files a fleet operator imports: every row with its own tariff (as an
// export from a billing system), and bare locations given one tariff by --tariff.
var bulkShapes = []struct {
	name     string
	template bool
}{{"rows with their own tariff", false}, {"one --tariff for every row", true}}

// bulk imports rows locations for each shape through the importer of kwhouse import and
// prints pairs/s and the importer's heap.
func bulk(ctx context.Context, a *app.App, rows int) error {
	for i, shape := range bulkShapes {
		acc, err := a.Accounts.Create(ctx, fmt.Sprintf("bulk-%d", i))
		if err != nil {
			return err
		}
		file, template, err := bulkFile(rows, shape.template)
		if err != nil {
			return err
		}
		im := &onboard.Importer{Catalog: a.Catalog, Tariffs: a.Tariffs}
		runtime.GC()
		var peak uint64
		start := time.Now()
		done, err := im.Load(ctx, kwhouse.Scope{AccountID: acc.AccountID}, bytes.NewReader(file), onboard.NDJSON,
			onboard.Options{Tariffs: template, Progress: func(onboard.Progress) { peak = max(peak, heapInUse()) }})
		d := time.Since(start)
		if err != nil {
			return err
		}
		if done.Locations != int64(rows) || done.Failed != 0 {
			return fmt.Errorf("%s: %+v", shape.name, done)
		}
		fmt.Printf("kwhouse import, %-27s: %6d pairs in %5.1f s = %6.0f pairs/s (file %d MiB, importer heap peak %d MiB)\n",
			shape.name, rows, d.Seconds(), float64(rows)/d.Seconds(), len(file)>>20, peak>>20)
	}
	return nil
}

// bulkFile is an NDJSON import of rows locations with reference ids, each with the
// two-rate tariff of the API runs or, with template, none (and the tariff returned).
func bulkFile(rows int, template bool) ([]byte, []tariffs.Input, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	one := tariff("")
	delete(one, "location_id")
	for i := 0; i < rows; i++ {
		row := map[string]any{"reference_id": fmt.Sprintf("meter-%07d", i), "postal_address": map[string]any{"country_code": "GB"}}
		if !template {
			row["tariffs"] = []any{one}
		}
		if err := enc.Encode(row); err != nil {
			return nil, nil, err
		}
	}
	if !template {
		return buf.Bytes(), nil, nil
	}
	b, err := json.Marshal(one)
	if err != nil {
		return nil, nil, err
	}
	var in tariffs.Input
	return buf.Bytes(), []tariffs.Input{in}, json.Unmarshal(b, &in)
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
