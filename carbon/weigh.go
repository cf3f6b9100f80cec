package carbon

import "sort"

// Interval is an intensity (grams CO2e per kWh) in force over [Start, End), Unix seconds.
type Interval struct {
	Start, End int64
	Intensity  float64
}

// Weighed is the carbon of some energy: grams, and the confidence of the figure (0 when
// part of its time has no intensity).
type Weighed struct {
	Grams      float64
	Confidence float64
}

// Add sums two figures: grams add, confidence is the lower.
func (w Weighed) Add(o Weighed) Weighed {
	return Weighed{Grams: w.Grams + o.Grams, Confidence: min(w.Confidence, o.Confidence)}
}

// None is the start of a sum: no grams, full confidence.
var None = Weighed{Confidence: 1}

// Weigh spreads wh evenly over [rs, re), as a record's energy is spread over the price
// periods it spans, and weighs each part by the intensity in force: grams = Σ wh / 1000 ×
// overlap / (re − rs) × intensity. Time without an intensity adds 0 grams and makes the
// confidence 0, as a missing market price does. ivs are in time order and disjoint.
func Weigh(rs, re int64, wh float64, ivs []Interval) Weighed {
	if re <= rs {
		return None
	}
	out, covered := Weighed{Confidence: 1}, int64(0)
	for _, p := range Cut(rs, re, ivs) {
		if p.Covered {
			out.Grams += wh / 1000 * float64(p.End-p.Start) / float64(re-rs) * p.Intensity
			covered += p.End - p.Start
		}
	}
	if covered < re-rs {
		out.Confidence = 0
	}
	return out
}

// Piece is a part of a span with one intensity, or none (Covered false).
type Piece struct {
	Start, End int64
	Intensity  float64
	Covered    bool
}

// Confidence is 1 where an intensity is known, 0 where none is.
func (p Piece) Confidence() float64 {
	if p.Covered {
		return 1
	}
	return 0
}

// Cut splits [s, e) at every interval boundary inside it: pieces in time order covering
// [s, e) exactly, those without an intensity marked uncovered.
func Cut(s, e int64, ivs []Interval) []Piece {
	var out []Piece
	at := s
	i := sort.Search(len(ivs), func(k int) bool { return ivs[k].End > s })
	for ; i < len(ivs) && ivs[i].Start < e && at < e; i++ {
		a, z := max(at, ivs[i].Start), min(e, ivs[i].End)
		if a >= z {
			continue
		}
		if a > at {
			out = append(out, Piece{Start: at, End: a})
		}
		out = append(out, Piece{Start: a, End: z, Intensity: ivs[i].Intensity, Covered: true})
		at = z
	}
	if at < e {
		out = append(out, Piece{Start: at, End: e})
	}
	return out
}
