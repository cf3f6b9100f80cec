package ingest

import (
	"fmt"
	"testing"
)

// Pushes of 10,000 records: a fleet's half hour (time-major, not in key order), one
// location's series, and 100 locations' series one after the other.
func BenchmarkFailOverlaps(b *testing.B) {
	fleet := make([]Record, 0, 10000)
	for i := 0; i < 10000; i++ {
		fleet = append(fleet, span(fmt.Sprintf("loc_%024d", (i*7919)%10000), 1800*int64(i/10000), 1800*int64(i/10000+1)))
	}
	day := make([]Record, 0, 10000)
	for i := 0; i < 10000; i++ {
		day = append(day, span("loc_a", 60*int64(i), 60*int64(i+1)))
	}
	series := make([]Record, 0, 10000)
	for i := 0; i < 10000; i++ {
		series = append(series, span(fmt.Sprintf("loc_%024d", i/100), 1800*int64(i%100), 1800*int64(i%100+1)))
	}
	for name, recs := range map[string][]Record{"fleet": fleet, "one_location": day, "series": series} {
		b.Run(name, func(b *testing.B) {
			p := parsedOf(recs...) // no overlaps: failOverlaps leaves p as it is
			b.ReportAllocs()
			for range b.N {
				p.failOverlaps()
			}
		})
	}
}
