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
		for _, column := range insertColumns {
			_ = column(&buffers.columns, blk)
		}
	}
}

// BenchmarkDecodeRecords decodes and validates a 10,000-record array as bench/ingest
// sends it (per-request work before the id checks).
func BenchmarkDecodeRecords(b *testing.B) {
	var body []byte
	body = append(body, '[')
	for i := 0; i < 10_000; i++ {
		if i > 0 {
			body = append(body, ',')
		}
		body = fmt.Appendf(body, `{"location_id":"loc_%024x","record_reference_id":"r%d","units":"WH","value":%d,`+
			`"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:30:00Z"}`, i*7919, i, 100+i%900)
	}
	body = append(body, ']')
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := decodeArray(body, func(num int, r *rawRecord) error {
			if _, problem := normalise(r); problem == "" {
				n++
			}
			return nil
		})
		if err != nil || n != 10_000 {
			b.Fatalf("%d records (%v)", n, err)
		}
	}
}
