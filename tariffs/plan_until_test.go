package tariffs

import "testing"

// TestPlanUntilCutsEverySourceAtT: sources ending before t stay, the one spanning t ends
// at t, later ones go, and the price key changes with them (timelines are cached by it).
func TestPlanUntilCutsEverySourceAtT(t *testing.T) {
	a, b := &Tariff{ID: "a"}, &Tariff{ID: "b"}
	p := Plan{Sources: map[int][]Source{CompImportCommodity: {{Tariff: a, From: 0, To: 100, Confidence: 1},
		{Tariff: b, From: 100, To: 200, Confidence: 1}, {Tariff: b, From: 200, To: 300, Confidence: 0.8}}}}
	p.priceKey = priceKeyOf(p.Sources)
	got := p.Until(150)
	ss := got.Sources[CompImportCommodity]
	if len(ss) != 2 || ss[0].To != 100 || ss[1].Tariff != b || ss[1].From != 100 || ss[1].To != 150 {
		t.Fatalf("cut at 150: %+v", ss)
	}
	if len(p.Sources[CompImportCommodity]) != 3 || p.Sources[CompImportCommodity][1].To != 200 {
		t.Fatalf("the plan itself changed: %+v", p.Sources)
	}
	if got.PriceKey() == p.PriceKey() {
		t.Fatal("the cut plan kept the whole plan's price key")
	}
	if n := len(p.Until(0).Sources[CompImportCommodity]); n != 0 {
		t.Fatalf("cut at the first source's start: %d sources", n)
	}
}
