package query

import (
	"math/rand"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
)

// TestBucketIndexNamesEveryOverlappingSegment checks the promise cost_arrays.sql relies
// on: for a record [rs, re), segments first[bucket(rs)] … last[bucket(re-1)] include
// every segment the record overlaps.
func TestBucketIndexNamesEveryOverlappingSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const t0, t1 = int64(1_700_000_000), int64(1_700_000_000 + 20*86400)
	var segs []segment
	for s := t0; s < t1; {
		e := s + int64(1+rng.Intn(12))*900
		if rng.Intn(5) > 0 { // some time has no segment (a missing market price)
			segs = append(segs, segment{comp: 1, s: s, e: min(e, t1), rate: 1, conf: 1})
		}
		s = e
	}
	arr := buildArrays(segs, t0, t1)
	ca := arr.comps[0]
	if !ca.Present || arr.comps[1].Present || arr.comps[2].Present {
		t.Fatalf("presence: %v %v %v", ca.Present, arr.comps[1].Present, arr.comps[2].Present)
	}
	for n := 0; n < 5000; n++ {
		rs := t0 + rng.Int63n(t1-t0-1)
		re := min(rs+1+rng.Int63n(6*3600), t1)
		b0, b1 := (rs-t0)/arr.bucket, (re-1-t0)/arr.bucket
		first, last := int(ca.first[b0]), int(ca.last[b1])
		for i, s := range segs {
			overlaps := s.s < re && s.e > rs
			if overlaps && (i+1 < first || i+1 > last) {
				t.Fatalf("record [%d, %d): segment %d overlaps but the index names %d…%d", rs, re, i+1, first, last)
			}
		}
	}
}

func TestArraysLeaveOutEndsAndConfidencesTheyCanDerive(t *testing.T) {
	segs := []segment{
		{comp: 1, s: 0, e: 3600, rate: 0.1, conf: 1}, {comp: 1, s: 3600, e: 7200, rate: 0.2, conf: 1},
		{comp: 3, s: 0, e: 1800, rate: 0.05, conf: 1}, {comp: 3, s: 3600, e: 7200, rate: 0.06, conf: 0.5},
	}
	a := buildArrays(segs, 0, 7200)
	one, two, three := a.comps[0], a.comps[1], a.comps[2]
	if !one.Contiguous || !one.OneConf {
		t.Errorf("gapless segments of one confidence: contiguous %v, one confidence %v", one.Contiguous, one.OneConf)
	}
	if two.Present || two.Contiguous || two.OneConf {
		t.Errorf("a component without segments: %+v", two)
	}
	if three.Contiguous || three.OneConf {
		t.Errorf("a gap and two confidences: contiguous %v, one confidence %v", three.Contiguous, three.OneConf)
	}
	bound := map[string]any{}
	for _, arg := range a.named() {
		n := arg.(chstore.NamedArg)
		bound[n.Name] = n.Value
	}
	if bound["s1_last_end"] != uint32(7200) || bound["s1_conf1"] != 1.0 || bound["s1_end"] != nil || bound["s1_conf"] != nil {
		t.Errorf("component 1 bound %v", bound)
	}
	if bound["s3_end"] == nil || bound["s3_conf"] == nil || bound["s3_last_end"] != nil {
		t.Errorf("component 3 bound %v", bound)
	}
}
