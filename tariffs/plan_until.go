package tariffs

// Until is the plan with every component's sources cut at t (Unix seconds): time from t
// on is priced by no tariff, so pricing a reading with it gives the money of the
// reading's part before t. Tier counters run in time order, so the part before t is
// priced exactly as the whole plan prices it (query/charges_split.go splits a reading's
// money at a change of tariff this way).
func (p Plan) Until(t int64) Plan {
	out := p
	out.Sources = make(map[int][]Source, len(p.Sources))
	for comp, ss := range p.Sources {
		var cut []Source
		for _, s := range ss {
			if s.From >= t {
				break
			}
			s.To = min(s.To, t)
			cut = append(cut, s)
		}
		out.Sources[comp] = cut
	}
	out.priceKey = priceKeyOf(out.Sources)
	return out
}
