package tariffs

import (
	"context"
)

// Explained is a stretch of a tariff's schedule with the entry that prices it, for
// explaining prices (GET /tariffs/audit).
type Explained struct {
	Period
	Entry string // schedule[0].days_and_hours[1].hours[2]
}

// Explain returns the stretches of t over [from, to), each with its schedule entry,
// adjacent stretches of the same entry and tier period merged; it stops when ctx ends.
func (t *Tariff) Explain(ctx context.Context, from, to int64) ([]Explained, error) {
	rules, loc, err := t.compiled()
	if err != nil {
		return nil, err
	}
	var out []Explained
	err = walk(ctx, rules, loc, t.TierPeriod, from, to, func(p Period, r *rule) {
		if n := len(out); n > 0 && out[n-1].End == p.Start && out[n-1].Entry == r.path && out[n-1].TierStart == p.TierStart {
			out[n-1].End = p.End
			return
		}
		out = append(out, Explained{Period: p, Entry: r.path})
	})
	return out, err
}
