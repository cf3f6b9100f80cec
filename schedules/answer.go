package schedules

import (
	"math"
	"time"

	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/plan"
	"github.com/kwhouse/kwhouse/query"
)

// deviceMoney is one device's figures before rounding: money is what its energy costs
// (import) or earns (export) in the plan and in the baseline.
type deviceMoney struct {
	money, base, confidence float64
	carbon                  carbon.Weighed
}

// saved is what the plan saves against the baseline: less cost, or more earnings.
func (m deviceMoney) saved(dir string) float64 {
	if dir == "EXPORT" {
		return m.money - m.base
	}
	return m.base - m.money
}

// answer builds the Schedule of a solved plan.
func (pr prices) answer(n need, slots []plan.Slot, sol plan.Plan) Schedule {
	out := Schedule{LocationID: n.loc.ID, LocationTimezone: n.loc.Timezone, CurrencyCode: n.loc.CurrencyCode,
		MaxPower: *n.req.MaxPower, ShavingThreshold: n.req.ShavingThreshold, Objective: n.opt.Objective,
		CarbonWeight: n.opt.CarbonWeight, Data: []DeviceSchedule{}}
	if out.Objective == "" {
		out.Objective = ObjectiveCost
	}
	var net, netBase, saved float64
	total := deviceMoney{confidence: 1, carbon: carbon.None}
	for d, dn := range n.devices {
		m := pr.deviceMoney(n, dn, slots, sol.Energy[d], sol.Delivered[d])
		ds := DeviceSchedule{DeviceID: dn.req.DeviceID, Direction: dn.direction, StartTime: stamp(dn.start, dn.startZone),
			EndTime: stamp(dn.end, dn.startZone), MaxPower: dn.req.MaxPower, Energy: *dn.req.Energy,
			Shortfall: Quantity{Units: dn.req.Energy.Units, Value: Number(float64(sol.Shortfall[d]) / energyUnits[dn.req.Energy.Units])},
			Tariff:    Money{Value: query.Amount(m.money), Confidence: query.Amount(m.confidence)},
			Savings:   savings(m.saved(dn.direction), m.base),
			Schedule:  entries(slots, sol.Energy[d], dn),
		}
		sign := 1.0
		if dn.direction == "EXPORT" {
			sign = -1
		}
		net, netBase, saved = net+sign*m.money, netBase+sign*m.base, saved+m.saved(dn.direction)
		total.confidence = math.Min(total.confidence, m.confidence)
		total.carbon = total.carbon.Add(m.carbon)
		if n.opt.IncludeCarbon {
			ds.Carbon = carbonOf(m.carbon)
		}
		out.Data = append(out.Data, ds)
	}
	out.Tariff = Money{Value: query.Amount(net), Confidence: query.Amount(total.confidence)}
	out.Savings = savings(saved, netBase)
	if n.opt.IncludeCarbon {
		out.Carbon = carbonOf(total.carbon)
	}
	return out
}

// deviceMoney prices a device's plan, and its baseline: the same energy drawn at its
// max_power (else the location's) from the start of its window.
func (pr prices) deviceMoney(n need, dn deviceNeed, slots []plan.Slot, energy []int64, delivered int64) deviceMoney {
	m := deviceMoney{confidence: 1, carbon: carbon.None}
	for s, e := range energy {
		if e == 0 {
			continue
		}
		rate, conf := pr.rate(dn.direction, slots[s].Start)
		m.money += float64(e) / mJPerKWh * rate
		m.confidence = math.Min(m.confidence, conf)
		grams, known := pr.intensity(slots[s].Start)
		m.carbon = m.carbon.Add(carbon.Weighed{Grams: float64(e) / mJPerKWh * grams, Confidence: known})
	}
	power := dn.maxPower
	if power == 0 {
		power = n.maxPower
	}
	end := float64(dn.start) + float64(delivered)/float64(power) // seconds
	for _, p := range pr.rates[dn.direction] {
		a, z := math.Max(float64(p.Start), float64(dn.start)), math.Min(float64(p.End), end)
		if z > a {
			m.base += (z - a) * float64(power) / mJPerKWh * p.Rate
		}
	}
	return m
}

func savings(value, base float64) Savings {
	out := Savings{Value: query.Amount(value)}
	if base != 0 {
		out.Percentage = query.Amount(value / math.Abs(base) * 100)
	}
	return out
}

func carbonOf(w carbon.Weighed) *Carbon {
	return &Carbon{Units: carbon.Units, Value: query.Amount(w.Grams), Confidence: query.Amount(w.Confidence)}
}

// entries merges the device's slots into stretches of constant power, in the units of its
// max_power (W without one).
func entries(slots []plan.Slot, energy []int64, dn deviceNeed) []Entry {
	units := "W"
	if dn.req.MaxPower != nil {
		units = dn.req.MaxPower.Units
	}
	out := []Entry{}
	var lastEnd int64
	var lastPower float64
	for s, e := range energy {
		if e == 0 {
			continue
		}
		sl := slots[s]
		power := float64(e) / float64(sl.End-sl.Start) / powerUnits[units] // mW → units
		if n := len(out); n > 0 && lastEnd == sl.Start && lastPower == power {
			out[n-1].EndTime, lastEnd = stamp(sl.End, dn.startZone), sl.End
			continue
		}
		out = append(out, Entry{StartTime: stamp(sl.Start, dn.startZone), EndTime: stamp(sl.End, dn.startZone),
			Power: Quantity{Units: units, Value: Number(power)}})
		lastEnd, lastPower = sl.End, power
	}
	return out
}

// stamp formats a time in the offset the request was sent in.
func stamp(t int64, zone *time.Location) string {
	return time.Unix(t, 0).In(zone).Format(time.RFC3339)
}
