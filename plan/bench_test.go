package plan

import (
	"math/rand"
	"testing"
)

// benchProblem is a site of n chargers (3.7–22 kW) under a 40 kW supply over half-hourly
// prices for days days; each charger needs a third to two thirds of what its window (a
// random stretch of at least two hours) could hold. Energy in mJ, power in mW.
func benchProblem(n, days int) Problem {
	r := rand.New(rand.NewSource(3))
	slots := days * 48
	p := Problem{MaxPower: 40_000_000}
	prices := make([]float64, slots)
	for s := range prices {
		p.Slots = append(p.Slots, Slot{Start: int64(s) * 1800, End: int64(s+1) * 1800})
		prices[s] = 0.15 + 0.1*r.NormFloat64()
	}
	powers := []int64{3_700_000, 7_400_000, 11_000_000, 22_000_000}
	for d := 0; d < n; d++ {
		a := r.Intn(slots / 2)
		b := a + 4 + r.Intn(slots-a-4)
		pw := powers[r.Intn(len(powers))]
		energy := int64(float64(pw*int64(b-a)*1800) * (1 + r.Float64()) / 3)
		p.Devices = append(p.Devices, Device{Start: int64(a) * 1800, End: int64(b) * 1800, MaxPower: pw, Energy: energy})
	}
	p.Cost = func(d, s int) (float64, bool) { return prices[s], true }
	return p
}

// The planner alone (no price reads, no store): make bench-schedules measures the API.
func BenchmarkSolve24h10Devices(b *testing.B) { benchSolve(b, 10, 1) }

func BenchmarkSolve7Days50Devices(b *testing.B) { benchSolve(b, 50, 7) }

func benchSolve(b *testing.B, n, days int) {
	p := benchProblem(n, days)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Solve(p); err != nil {
			b.Fatal(err)
		}
	}
}
