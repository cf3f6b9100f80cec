package query

import (
	"math"
	"math/rand"
	"testing"

	"github.com/kwhouse/kwhouse/chstore"
)

// TestBucketIndexFindsEachSecondsSegment checks the promises cost_arrays.sql relies on: for
// any second t, arrays_find's steps from its bucket's first segment reach the segment
// holding t without leaving its timeline, and the running sums (base, covBase) differ
// between a record's ends by its seconds × prices and its covered seconds.
func TestBucketIndexFindsEachSecondsSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const t0, t1 = int64(1_700_000_000), int64(1_700_000_000 + 20*86400)
	var segs []segment
	for s := t0 + 600; s < t1; {
		e := s + int64(1+rng.Intn(12))*900
		if rng.Intn(5) > 0 { // some time has no segment (a missing market price)
			segs = append(segs, segment{comp: 1, s: s, e: min(e, t1), rate: rng.Float64(), conf: 1})
		}
		s = e
	}
	arr := buildArrays(segs, t0, t1)
	ca := concatComponent([]costArrays{arr, arr}, 0, arr.n)
	if !ca.Present || ca.Gapless || !ca.OneConf || len(ca.Steps) == 0 {
		t.Fatalf("shape: present %v, gapless %v, one confidence %v, steps %v", ca.Present, ca.Gapless, ca.OneConf, ca.Steps)
	}
	find := func(tl int, sec int64) int { // arrays_find, 1-based
		b := int64(tl)*arr.n + (sec-t0)/arr.bucket
		f := int(ca.first[b])
		i := f
		for _, m := range ca.Steps {
			if int64(ca.start[f+m-1]) <= sec {
				i++
			}
		}
		return i
	}
	integral := func(i int, sec int64) (float64, int64) {
		return ca.base[i-1] + ca.price[i-1]*float64(sec-t0), ca.covBase[i-1] + int64(ca.covers[i-1])*(sec-t0)
	}
	for n := 0; n < 5000; n++ {
		tl := rng.Intn(2)
		rs := t0 + rng.Int63n(t1-t0-1)
		re := min(rs+1+rng.Int63n(6*3600), t1)
		a, b := find(tl, rs), find(tl, re-1)
		ga, ca0 := integral(a, rs)
		gb, cb := integral(b, re)
		money, covered := 0., int64(0)
		for _, s := range segs {
			if o := min(re, s.e) - max(rs, s.s); o > 0 {
				money += float64(o) * s.rate
				covered += o
			}
		}
		if math.Abs(gb-ga-money) > 1e-6 || cb-ca0 != covered {
			t.Fatalf("record [%d, %d) of timeline %d: money %v covered %d, want %v and %d", rs, re, tl+1, gb-ga, cb-ca0, money, covered)
		}
	}
}

func TestArraysLeaveOutWhatTheyCanDerive(t *testing.T) {
	segs := []segment{
		{comp: 1, s: 0, e: 3600, rate: 0.1, conf: 1}, {comp: 1, s: 3600, e: 7200, rate: 0.2, conf: 1},
		{comp: 3, s: 0, e: 1800, rate: 0.05, conf: 1}, {comp: 3, s: 3600, e: 7200, rate: 0.06, conf: 0.5},
	}
	a := buildArrays(segs, 0, 7200)
	for k := range a.comps {
		a.comps[k] = concatComponent([]costArrays{a}, k, a.n)
	}
	one, two, three := a.comps[0], a.comps[1], a.comps[2]
	if !one.Gapless || !one.OneConf || len(one.Steps) != 0 {
		t.Errorf("gapless half hours of one confidence: gapless %v, one confidence %v, steps %v", one.Gapless, one.OneConf, one.Steps)
	}
	if two.Present {
		t.Errorf("a component without segments: %+v", two)
	}
	if three.Gapless || three.OneConf {
		t.Errorf("a gap and two confidences: gapless %v, one confidence %v", three.Gapless, three.OneConf)
	}
	bound := map[string]any{}
	for _, arg := range a.named() {
		n := arg.(chstore.NamedArg)
		bound[n.Name] = n.Value
	}
	if bound["s1_conf1"] != 1.0 || bound["s1_start"] != nil || bound["s1_cov"] != nil || bound["s1_conf"] != nil {
		t.Errorf("component 1 bound %v", bound)
	}
	if bound["s3_cov"] == nil || bound["s3_covers"] == nil || bound["s3_conf"] == nil || bound["s3_conf1"] != nil {
		t.Errorf("component 3 bound %v", bound)
	}
}
