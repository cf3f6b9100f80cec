package ingest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func parsedOf(recs ...Record) *parsed {
	p := newParsed(len(recs), 0)
	for i, r := range recs {
		p.accept(i, r)
	}
	return p
}

func span(loc string, start, end int64) Record {
	return Record{LocationID: loc, Direction: Import, TariffRate: Import, Start: start, End: end, EnergyWh: 1}
}

func failedNums(p *parsed) []int {
	var out []int
	for _, f := range p.failed.kept {
		out = append(out, f.RecordNum)
	}
	slices.Sort(out)
	return out
}

func TestFailOverlapsKeepsTheEarlierOfOverlappingRecords(t *testing.T) {
	const h = 3600
	other := span("loc_a", 2*h, 4*h)
	other.DeviceID = "dev_1"
	export := span("loc_a", 2*h, 4*h)
	export.Direction, export.TariffRate = Export, Export
	for _, tc := range []struct {
		name   string
		recs   []Record
		failed []int
	}{
		{"no records", nil, nil},
		{"one record", []Record{span("loc_a", 2*h, 4*h)}, nil},
		{"the issue's pair", []Record{span("loc_a", 2*h, 4*h), span("loc_a", 3*h, 4*h)}, []int{1}},
		{"later-sent earlier interval", []Record{span("loc_a", 3*h, 4*h), span("loc_a", 2*h, 4*h)}, []int{1}},
		{"same interval replaces", []Record{span("loc_a", 2*h, 4*h), span("loc_a", 2*h, 4*h)}, nil},
		{"adjacent intervals", []Record{span("loc_a", 2*h, 3*h), span("loc_a", 3*h, 4*h), span("loc_a", 1*h, 2*h)}, nil},
		{"other location", []Record{span("loc_a", 2*h, 4*h), span("loc_b", 3*h, 4*h)}, nil},
		{"other device, other direction", []Record{span("loc_a", 2*h, 4*h), other, export}, nil},
		{"a failed record blocks nothing", []Record{span("loc_a", 1*h, 3*h), span("loc_a", 2*h, 5*h), span("loc_a", 4*h, 6*h)}, []int{1}},
		{"a copy of a failed record fails", []Record{span("loc_a", 1*h, 3*h), span("loc_a", 2*h, 5*h), span("loc_a", 2*h, 5*h)}, []int{1, 2}},
		{"inside a longer one", []Record{span("loc_a", 0, 24*h), span("loc_a", 5*h, 6*h), span("loc_a", 23*h, 25*h)}, []int{1, 2}},
	} {
		p := parsedOf(tc.recs...)
		p.failOverlaps()
		if got := failedNums(p); !slices.Equal(got, tc.failed) {
			t.Errorf("%s: failed %v, want %v", tc.name, got, tc.failed)
		}
		if len(p.records)+p.failed.count != len(tc.recs) || len(p.nums) != len(p.records) {
			t.Errorf("%s: %d kept + %d failed of %d", tc.name, len(p.records), p.failed.count, len(tc.recs))
		}
	}
	p := parsedOf(span("loc_a", 2*h, 4*h), span("loc_a", 3*h, 4*h))
	p.failOverlaps()
	if e := p.failed.kept[0].Error; !strings.Contains(e, "overlaps record 0 (1970-01-01T02:00:00Z to 1970-01-01T04:00:00Z)") {
		t.Errorf("error %q does not name the record it overlaps", e)
	}
}

// failOverlaps agrees with the rule read literally: in arrival order, a record is kept
// unless it overlaps (not identically) a record kept before it.
func TestFailOverlapsMatchesTheRuleOnRandomBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(40)
		recs := make([]Record, n)
		for i := range recs {
			start := int64(rng.IntN(30))
			recs[i] = span([]string{"loc_a", "loc_b"}[rng.IntN(2)], start, start+1+int64(rng.IntN(6)))
		}
		var want []int
		var kept []Record
		for i, r := range recs {
			ok := true
			for _, k := range kept {
				same := k.Start == r.Start && k.End == r.End
				if k.LocationID == r.LocationID && !same && k.Start < r.End && r.Start < k.End {
					ok = false
				}
			}
			if ok {
				kept = append(kept, r)
			} else {
				want = append(want, i)
			}
		}
		p := parsedOf(recs...)
		p.failOverlaps()
		if got := failedNums(p); !slices.Equal(got, want) {
			t.Fatalf("round %d, %v: failed %v, want %v", round, recs, got, want)
		}
	}
}
