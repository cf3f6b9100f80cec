package tariffs

import (
	"math"
	"sort"
)

// Source says which tariff prices [From, To) of one component (direction and type), and
// with what confidence: 1 inside its contract, decaying with distance outside it.
type Source struct {
	Tariff     *Tariff
	From, To   int64
	Confidence float64
}

const extrapolationStep = 90 * 86400

// ExtrapolatedConfidence is the confidence of a price taken from a contract d seconds
// away: max(0.2, 0.8 − 0.2 × ⌊d / 90 days⌋).
func ExtrapolatedConfidence(d int64) float64 {
	return math.Max(0.2, 0.8-0.2*float64(d/extrapolationStep))
}

// sources covers [from, to) for the tariffs of one component (contracts do not overlap).
// Time outside every contract goes to the nearest contract; at equal distance to the one
// that already ended.
func sources(ts []*Tariff, from, to int64) []Source {
	if len(ts) == 0 || from >= to {
		return nil
	}
	sorted := append([]*Tariff(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].ContractStartDate.Time().Before(sorted[j].ContractStartDate.Time())
	})
	var out []Source
	add := func(src Source) {
		src.From, src.To = max(src.From, from), min(src.To, to)
		if src.From < src.To {
			out = append(out, src)
		}
	}
	first := sorted[0]
	fs, _ := first.Contract()
	out = append(out, decayBefore(first, fs, from)...)
	for i, t := range sorted {
		cs, ce := t.Contract()
		add(Source{Tariff: t, From: cs, To: ce, Confidence: 1})
		if i+1 < len(sorted) {
			next := sorted[i+1]
			ns, _ := next.Contract()
			if ns > ce {
				mid := ce + (ns-ce+1)/2 // [ce, mid) is nearer the ended contract or equally near
				for _, s := range decayAfter(t, ce, mid) {
					add(s)
				}
				for _, s := range decayBefore(next, ns, mid) {
					add(s)
				}
			}
		}
	}
	last := sorted[len(sorted)-1]
	_, le := last.Contract()
	for _, s := range decayAfter(last, le, to) {
		add(s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	return clip(out, from, to)
}

// decayAfter covers [end, until) after a contract ending at end, in 90-day steps.
func decayAfter(t *Tariff, end, until int64) []Source {
	var out []Source
	for k := int64(0); end+k*extrapolationStep < until; k++ {
		a, b := end+k*extrapolationStep, end+(k+1)*extrapolationStep
		if ExtrapolatedConfidence(k*extrapolationStep) == 0.2 {
			b = until
		}
		out = append(out, Source{Tariff: t, From: a, To: min(b, until), Confidence: ExtrapolatedConfidence(k * extrapolationStep)})
		if b >= until {
			break
		}
	}
	return out
}

// decayBefore covers [since, start) before a contract starting at start, in 90-day steps
// counted back from start. A distance of exactly k × 90 days belongs to step k.
func decayBefore(t *Tariff, start, since int64) []Source {
	var out []Source
	for k := int64(0); start-k*extrapolationStep > since; k++ {
		// d = start − x for x in (a, b]; ⌊d/90d⌋ = k for x in (start−(k+1)·90d, start−k·90d].
		// Half-open periods [a, b) approximate that by one second at each step edge.
		a, b := start-(k+1)*extrapolationStep, start-k*extrapolationStep
		if ExtrapolatedConfidence(k*extrapolationStep) == 0.2 {
			a = since
		}
		out = append(out, Source{Tariff: t, From: max(a, since), To: b, Confidence: ExtrapolatedConfidence(k * extrapolationStep)})
		if a <= since {
			break
		}
	}
	return out
}

func clip(ss []Source, from, to int64) []Source {
	out := ss[:0]
	for _, s := range ss {
		s.From, s.To = max(s.From, from), min(s.To, to)
		if s.From < s.To {
			out = append(out, s)
		}
	}
	return out
}
