// Package plan decides when devices run: the energy each device needs, inside its window,
// under its own power limit and a power cap all devices share, at the least total cost.
// It is exact: a min-cost max-flow over the slots of time, not a greedy rule.
package plan

import "fmt"

// Slot is a stretch [Start, End) of time, in seconds, inside which every cost is constant.
type Slot struct{ Start, End int64 }

// Device is one device's need. Energy is in the caller's unit of energy (e.g. mJ) and
// MaxPower in that unit per second (mW for mJ); MaxPower 0 means no limit of its own.
type Device struct {
	Start, End int64 // the window energy may flow in, seconds
	MaxPower   int64
	Energy     int64
}

// Problem is a planning question. Cost(d, s) is device d's cost per unit of energy in slot
// s (any finite number, negative included), ok false where d may not use s; a slot is
// only offered to a device whose window holds it whole.
type Problem struct {
	Slots   []Slot
	Devices []Device
	// MaxPower caps the sum of all devices' power in every instant (0: no cap).
	MaxPower int64
	Cost     func(d, s int) (cost float64, ok bool)
}

// Plan is the answer: Energy[d][s] is what device d takes in slot s.
type Plan struct {
	Energy    [][]int64
	Delivered []int64 // per device
	Shortfall []int64 // per device: asked − delivered
	Cost      float64 // the sum of energy × cost
}

// Solve delivers as much energy in total as the caps allow and, among the plans that
// deliver that much, returns one of least cost.
func Solve(p Problem) (Plan, error) {
	if err := p.check(); err != nil {
		return Plan{}, err
	}
	g, edges := p.graph()
	g.run()
	out := Plan{Energy: make([][]int64, len(p.Devices)), Delivered: make([]int64, len(p.Devices)),
		Shortfall: make([]int64, len(p.Devices))}
	for d := range p.Devices {
		out.Energy[d] = make([]int64, len(p.Slots))
	}
	for _, e := range edges {
		f := g.flow(e.edge)
		out.Energy[e.device][e.slot] = f
		out.Delivered[e.device] += f
		out.Cost += float64(f) * e.cost
	}
	for d, dev := range p.Devices {
		out.Shortfall[d] = dev.Energy - out.Delivered[d]
	}
	return out, nil
}

// check refuses problems the graph cannot represent.
func (p Problem) check() error {
	for i, s := range p.Slots {
		if s.End <= s.Start || (i > 0 && s.Start < p.Slots[i-1].End) {
			return fmt.Errorf("plan: slot %d [%d, %d) is empty or overlaps the one before", i, s.Start, s.End)
		}
	}
	for i, d := range p.Devices {
		if d.Energy < 0 || d.MaxPower < 0 {
			return fmt.Errorf("plan: device %d has a negative energy or power", i)
		}
	}
	if p.MaxPower < 0 {
		return fmt.Errorf("plan: negative power cap")
	}
	return nil
}

// unlimited stands for "no cap": more than any total energy of a problem.
const unlimited = int64(1) << 62

// capacity is power × seconds, or unlimited for power 0.
func capacity(power int64, s Slot) int64 {
	if power == 0 {
		return unlimited
	}
	return power * (s.End - s.Start)
}

// useEdge is a device → slot edge of the graph.
type useEdge struct {
	device, slot, edge int
	cost               float64
}

// graph builds source → device (its energy), device → slot (its power × length, for
// slots inside its window it may use, at its cost), slot → sink (the shared cap × length).
func (p Problem) graph() (*network, []useEdge) {
	n, m := len(p.Devices), len(p.Slots)
	g := newNetwork(n+m+2, 0, n+m+1)
	for d, dev := range p.Devices {
		g.add(0, 1+d, dev.Energy, 0)
	}
	var edges []useEdge
	for d, dev := range p.Devices {
		for s, sl := range p.Slots {
			if sl.Start < dev.Start || sl.End > dev.End {
				continue
			}
			c, ok := p.Cost(d, s)
			if !ok {
				continue
			}
			edges = append(edges, useEdge{device: d, slot: s, cost: c, edge: g.add(1+d, 1+n+s, capacity(dev.MaxPower, sl), c)})
		}
	}
	for s, sl := range p.Slots {
		g.add(1+n+s, n+m+1, capacity(p.MaxPower, sl), 0)
	}
	return g, edges
}
