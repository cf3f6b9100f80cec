package ingest

import (
	"fmt"
	"testing"

	"github.com/kwhouse/kwhouse"
)

// fleetParts are four requests of a fleet's half-hourly push: 10,000 locations, one
// reading each, a slot per request (what bench/ingest sends).
func fleetParts() []*Rows {
	scope := kwhouse.Scope{AccountID: "acc_0123456789abcdef01234567"}
	parts := make([]*Rows, 4)
	for p := range parts {
		parts[p] = newRows(10_000)
		for i := 0; i < 10_000; i++ {
			start := 1_700_000_000 + int64(p)*1800
			rec := Record{LocationID: fmt.Sprintf("loc_%024x", i*7919%10_000), Direction: Import, TariffRate: Import,
				Start: start, End: start + 1800, EnergyWh: float64(i), Confidence: 1, RecordRef: fmt.Sprint("r", i)}
			parts[p].add(scope, &rec, "bat_0123456789abcdef01234567", uint64(p*10_000+i))
		}
	}
	return parts
}

// BenchmarkFlushOrder is a flush's work before the driver: sort 40,000 rows of four
// requests and gather their 14 columns, with the flusher's buffers kept between flushes.
func BenchmarkFlushOrder(b *testing.B) {
	parts := fleetParts()
	var buffers flushBuffers
	b.ReportAllocs()
	for b.Loop() {
		blk := buffers.sortedBlock(parts)
		for c := 0; c < insertColumns; c++ {
			_ = buffers.columns.column(blk, c)
		}
	}
}
