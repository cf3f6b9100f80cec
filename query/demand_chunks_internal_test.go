package query

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/charges"
)

// months is n local months of London from first on, as a location's stale months.
func months(first time.Month, n int) []*charges.TariffMonth {
	london, _ := time.LoadLocation("Europe/London")
	var out []*charges.TariffMonth
	for i := 0; i < n; i++ {
		start := time.Date(2024, first+time.Month(i), 1, 0, 0, 0, 0, london)
		out = append(out, &charges.TariffMonth{Month: charges.Bucket{Start: start, End: start.AddDate(0, 1, 0)}})
	}
	return out
}

// TestDemandChunksKeepEachWindowToItsLocations: a pass's last month of 2,500 locations is
// measured in three queries over that month (and its day of lookback) only, and one
// location's year, stale as well, in a query of its own over the year: it never widens
// the window the others' readings are read over.
func TestDemandChunksKeepEachWindowToItsLocations(t *testing.T) {
	need := map[string][]*charges.TariffMonth{"loc_year": months(time.January, 12), "loc_none": nil}
	for i := 0; i < 2500; i++ {
		need[fmt.Sprintf("loc_%04d", i)] = months(time.December, 1)
	}
	got := demandChunks(need, nil)
	if len(got) != 4 {
		t.Fatalf("%d chunks, want 4 (the year, then 1,200 + 1,200 + 100 Decembers)", len(got))
	}
	year, dec := got[0], got[1:]
	jan := need["loc_year"][0].Month.Start
	if len(year.ids) != 1 || year.ids[0] != "loc_year" || !year.lo.Equal(jan.Add(-24*time.Hour)) ||
		!year.hi.Equal(need["loc_year"][11].Month.End) {
		t.Errorf("first chunk %v [%v, %v), want loc_year over its year and the lookback before", year.ids, year.lo, year.hi)
	}
	seen := 0
	for i, ch := range dec {
		if want := []int{1200, 1200, 100}[i]; len(ch.ids) != want {
			t.Errorf("December chunk %d holds %d locations, want %d", i, len(ch.ids), want)
		}
		m := need[ch.ids[0]][0].Month
		if !ch.lo.Equal(m.Start.Add(-24*time.Hour)) || !ch.hi.Equal(m.End) {
			t.Errorf("December chunk %d reads [%v, %v), want December and a day before", i, ch.lo, ch.hi)
		}
		for j, id := range ch.ids {
			if want := fmt.Sprintf("loc_%04d", seen+j); id != want {
				t.Fatalf("December chunk %d location %d is %s, want %s (in order)", i, j, id, want)
			}
		}
		seen += len(ch.ids)
	}
}

// The readings of a query come in no order: each location's (by number) are sorted by
// start, and a location without readings has none.
func TestDemandReadingsByLocationSortedByStart(t *testing.T) {
	row := func(li, rs uint32) demandRow {
		return demandRow{key: uint64(li)<<32 | uint64(rs), end: rs + 1800, wh: float64(rs)}
	}
	got := byLocation([]demandRow{row(3, 7200), row(1, 3600), row(3, 0), row(1, 1800), row(3, 1800)}, make([][]charges.Reading, 3))
	want := [][]uint32{{1800, 3600}, nil, {0, 1800, 7200}}
	for i, w := range want {
		if len(got[i]) != len(w) {
			t.Fatalf("location %d: %d readings, want %d", i+1, len(got[i]), len(w))
		}
		for j, s := range w {
			if r := got[i][j]; r.Start.Unix() != int64(s) || r.End.Unix() != int64(s)+1800 || r.Wh != float64(s) {
				t.Errorf("location %d reading %d: %v–%v %v Wh, want from %d", i+1, j, r.Start, r.End, r.Wh, s)
			}
		}
	}
}

// BenchmarkByLocationYear sorts and converts a location's year of half-hourly readings
// (17,616 with the day before) as the demand readings query returns them: in no order.
func BenchmarkByLocationYear(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	base := make([]demandRow, 17568+48)
	for i := range base {
		rs := uint32(1703980800 + 1800*i)
		base[i] = demandRow{key: 1<<32 | uint64(rs), end: rs + 1800, wh: float64(i)}
	}
	rng.Shuffle(len(base), func(i, j int) { base[i], base[j] = base[j], base[i] })
	rows := make([]demandRow, len(base))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(rows, base)
		byLocation(rows, make([][]charges.Reading, 1))
	}
}
