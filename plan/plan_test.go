package plan

import (
	"math"
	"math/rand"
	"testing"
)

// instance is a random small problem on one-second slots, with its cost table.
type instance struct {
	p     Problem
	costs [][]float64 // NaN: not allowed
}

func randomInstance(r *rand.Rand, devices, slots int, slotLen int64) instance {
	in := instance{costs: make([][]float64, devices)}
	t := int64(0)
	for s := 0; s < slots; s++ {
		in.p.Slots = append(in.p.Slots, Slot{Start: t, End: t + slotLen})
		t += slotLen
		if r.Intn(4) == 0 {
			t += slotLen // a gap now and then
		}
	}
	for d := 0; d < devices; d++ {
		a, b := r.Intn(slots), r.Intn(slots)
		if a > b {
			a, b = b, a
		}
		dev := Device{Start: in.p.Slots[a].Start, End: in.p.Slots[b].End, MaxPower: int64(r.Intn(3)), Energy: int64(r.Intn(5) * int(slotLen))}
		in.p.Devices = append(in.p.Devices, dev)
		in.costs[d] = make([]float64, slots)
		for s := range in.costs[d] {
			in.costs[d][s] = float64(r.Intn(41)-10) / 8 // negative prices too
			if r.Intn(8) == 0 {
				in.costs[d][s] = math.NaN()
			}
		}
	}
	in.p.MaxPower = int64(r.Intn(4))
	in.p.Cost = func(d, s int) (float64, bool) { return in.costs[d][s], !math.IsNaN(in.costs[d][s]) }
	return in
}

// bruteForce enumerates every whole-unit split of every device's energy over the slots
// (a dynamic programme over the slots, the state being what each device still needs) and
// returns the most energy deliverable and the least cost of delivering it. Flows with
// whole capacities have a whole optimum, so this is the exact optimum.
func bruteForce(in instance) (int64, float64) {
	p := in.p
	type key [3]int64
	type best struct {
		missing int64
		cost    float64
	}
	better := func(a, b best) bool {
		return a.missing < b.missing || (a.missing == b.missing && a.cost < b.cost-1e-12)
	}
	var start key
	for d, dev := range p.Devices {
		start[d] = dev.Energy
	}
	states := map[key]float64{start: 0}
	for s, sl := range p.Slots {
		next := map[key]float64{}
		for st, c := range states {
			var try func(d int, st key, c float64, used int64)
			try = func(d int, st key, c float64, used int64) {
				if d == len(p.Devices) {
					if old, ok := next[st]; !ok || c < old {
						next[st] = c
					}
					return
				}
				dev := p.Devices[d]
				limit := int64(0)
				cost, ok := p.Cost(d, s)
				if ok && sl.Start >= dev.Start && sl.End <= dev.End {
					limit = min(st[d], capacity(dev.MaxPower, sl))
					if p.MaxPower > 0 {
						limit = min(limit, capacity(p.MaxPower, sl)-used)
					}
				}
				for x := int64(0); x <= limit; x++ {
					nst := st
					nst[d] -= x
					try(d+1, nst, c+float64(x)*cost, used+x)
				}
			}
			try(0, st, c, 0)
		}
		states = next
	}
	res := best{missing: math.MaxInt64}
	for st, c := range states {
		b := best{cost: c}
		for d := range p.Devices {
			b.missing += st[d]
		}
		if better(b, res) {
			res = b
		}
	}
	var asked int64
	for _, dev := range p.Devices {
		asked += dev.Energy
	}
	return asked - res.missing, res.cost
}

func TestSolveEqualsBruteForceOnSmallInstances(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 30000; i++ {
		in := randomInstance(r, 1+r.Intn(3), 1+r.Intn(12), 1)
		got, err := Solve(in.p)
		if err != nil {
			t.Fatal(err)
		}
		var delivered int64
		for _, v := range got.Delivered {
			delivered += v
		}
		wantE, wantC := bruteForce(in)
		if delivered != wantE || math.Abs(got.Cost-wantC) > 1e-9 {
			t.Fatalf("instance %d %+v: delivered %d at %.12f, brute force %d at %.12f", i, in.p, delivered, got.Cost, wantE, wantC)
		}
	}
}

// Properties on random instances larger than brute force reaches.
func TestSolveKeepsEveryCapAndDeliversAllThatFits(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		in := randomInstance(r, 1+r.Intn(8), 1+r.Intn(60), 1800)
		got, err := Solve(in.p)
		if err != nil {
			t.Fatal(err)
		}
		checkProperties(t, in, got)
	}
}

func checkProperties(t *testing.T, in instance, got Plan) {
	t.Helper()
	p := in.p
	for s, sl := range p.Slots {
		var sum int64
		for d, dev := range p.Devices {
			e := got.Energy[d][s]
			sum += e
			if e < 0 || e > capacity(dev.MaxPower, sl) {
				t.Fatalf("device %d slot %d takes %d over its power %d", d, s, e, dev.MaxPower)
			}
			if e > 0 && (sl.Start < dev.Start || sl.End > dev.End || math.IsNaN(in.costs[d][s])) {
				t.Fatalf("device %d takes energy in slot %d it may not use", d, s)
			}
		}
		if sum > capacity(p.MaxPower, sl) {
			t.Fatalf("slot %d: %d over the shared cap", s, sum)
		}
	}
	for d, dev := range p.Devices {
		var sum int64
		for _, e := range got.Energy[d] {
			sum += e
		}
		if sum != got.Delivered[d] || got.Delivered[d] != dev.Energy-got.Shortfall[d] || got.Shortfall[d] < 0 {
			t.Fatalf("device %d: delivered %d, sum %d, shortfall %d of %d", d, got.Delivered[d], sum, got.Shortfall[d], dev.Energy)
		}
		if got.Shortfall[d] == 0 {
			continue
		}
		// Short: every slot it may use is full, by its own power or by the shared cap.
		for s, sl := range p.Slots {
			if sl.Start < dev.Start || sl.End > dev.End || math.IsNaN(in.costs[d][s]) {
				continue
			}
			var sum int64
			for d2 := range p.Devices {
				sum += got.Energy[d2][s]
			}
			if got.Energy[d][s] < capacity(dev.MaxPower, sl) && sum < capacity(p.MaxPower, sl) {
				t.Fatalf("device %d is short %d but slot %d has room", d, got.Shortfall[d], s)
			}
		}
	}
}

func TestSolveTakesNegativePricesAndSharesTheCap(t *testing.T) {
	// Two devices of 2 kW, a 3 kW cap, four hours at 0.30, -0.05, 0.10, 0.20.
	costs := []float64{0.30, -0.05, 0.10, 0.20}
	p := Problem{MaxPower: 3, Cost: func(d, s int) (float64, bool) { return costs[s], true }}
	for s := range costs {
		p.Slots = append(p.Slots, Slot{Start: int64(s), End: int64(s + 1)})
	}
	p.Devices = []Device{{Start: 0, End: 4, MaxPower: 2, Energy: 3}, {Start: 0, End: 4, MaxPower: 2, Energy: 3}}
	got, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	// Cheapest: 3 at -0.05, 3 at 0.10: cost 0.15.
	if math.Abs(got.Cost-0.15) > 1e-12 {
		t.Fatalf("cost %v, want 0.15: %v", got.Cost, got.Energy)
	}
	if got.Energy[0][1]+got.Energy[1][1] != 3 || got.Energy[0][2]+got.Energy[1][2] != 3 {
		t.Fatalf("not the negative and next cheapest hour: %v", got.Energy)
	}
}

func TestSolveReportsShortfallWhenTheWindowIsTooShort(t *testing.T) {
	p := Problem{Slots: []Slot{{0, 3600}, {3600, 7200}}, Cost: func(int, int) (float64, bool) { return 1, true },
		Devices: []Device{{Start: 0, End: 7200, MaxPower: 1000, Energy: 10_000_000}}}
	got, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Delivered[0] != 7_200_000 || got.Shortfall[0] != 2_800_000 {
		t.Fatalf("delivered %d short %d", got.Delivered[0], got.Shortfall[0])
	}
}

func TestSolveRefusesOverlappingSlots(t *testing.T) {
	_, err := Solve(Problem{Slots: []Slot{{0, 10}, {5, 20}}, Cost: func(int, int) (float64, bool) { return 0, true }})
	if err == nil {
		t.Fatal("overlapping slots accepted")
	}
}
