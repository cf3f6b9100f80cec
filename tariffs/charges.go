package tariffs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/charges"
)

// DemandCharge is one demand (capacity) charge of a tariff: per local month, the highest
// mean power over its matching intervals (at least MinimumKW) times RatePerKW
// (docs/costs.md, "Bill charges").
type DemandCharge struct {
	Months          []string      `json:"months,omitempty"`
	DaysAndHours    []DemandHours `json:"days_and_hours,omitempty"`
	RatePerKW       *float64      `json:"rate_per_kw"`
	IntervalMinutes *int          `json:"interval_minutes"`
	MinimumKW       float64       `json:"minimum_kw"`
}

// DemandHours are the days and times of day a demand charge counts, in the schedule grammar.
type DemandHours struct {
	Days  []DayName         `json:"days"`
	Hours []DemandHourRange `json:"hours"`
}

// DemandHourRange is a time-of-day range [valid_from, valid_to) of a demand charge.
type DemandHourRange struct {
	ValidFrom string `json:"valid_from"`
	ValidTo   string `json:"valid_to"`
}

// Bounds of the bill charges of a tariff.
const (
	maxDemandCharges  = 16
	maxDemandWindows  = 96
	defaultIntervalMn = 15
)

// validateCharges checks standing_charge, demand_charges and tax_percentage.
func (in *Input) validateCharges(p *kwhouse.Problems) {
	if in.StandingCharge != nil {
		switch {
		case !kwhouse.Within(*in.StandingCharge, kwhouse.MaxPrice) || *in.StandingCharge < 0:
			p.Add("invalid_number", "standing_charge", "standing_charge must be a number from 0 to %g", kwhouse.MaxPrice)
		case in.Direction == Export:
			p.Add("unsupported_combination", "standing_charge", "a standing charge belongs on an IMPORT tariff")
		}
	}
	if in.TaxPercentage != nil && !(*in.TaxPercentage >= 0 && *in.TaxPercentage <= 100) {
		p.Add("invalid_number", "tax_percentage", "tax_percentage must be a number from 0 to 100")
	}
	if len(in.DemandCharges) > maxDemandCharges {
		p.Add("too_many_items", "demand_charges", "at most %d demand charges", maxDemandCharges)
		return
	}
	for i := range in.DemandCharges {
		if _, err := in.DemandCharges[i].compile(fmt.Sprintf("demand_charges[%d]", i)); err != nil {
			p.AddErr(err)
		}
	}
}

// compile checks d (its errors name path) and returns when it counts and its numbers.
func (d *DemandCharge) compile(path string) (charges.Demand, error) {
	var out charges.Demand
	switch {
	case d.RatePerKW == nil:
		return out, kwhouse.Invalid("parameter_missing", path+".rate_per_kw", "rate_per_kw is required")
	case !kwhouse.Within(*d.RatePerKW, kwhouse.MaxPrice) || *d.RatePerKW < 0:
		return out, kwhouse.Invalid("invalid_number", path+".rate_per_kw", "rate_per_kw must be a number from 0 to %g", kwhouse.MaxPrice)
	case !kwhouse.Within(d.MinimumKW, kwhouse.MaxTierKWh) || d.MinimumKW < 0:
		return out, kwhouse.Invalid("invalid_number", path+".minimum_kw", "minimum_kw must be a number from 0 to %g", kwhouse.MaxTierKWh)
	}
	minutes := defaultIntervalMn
	if d.IntervalMinutes != nil {
		minutes = *d.IntervalMinutes
	}
	if minutes != 15 && minutes != 30 && minutes != 60 {
		return out, kwhouse.Invalid("invalid_value", path+".interval_minutes", "interval_minutes must be 15, 30 or 60")
	}
	covers, err := d.window(path)
	if err != nil {
		return out, err
	}
	return charges.Demand{Covers: covers, RatePerKW: *d.RatePerKW, Interval: time.Duration(minutes) * time.Minute,
		MinimumKW: d.MinimumKW}, nil
}

// window compiles the months, days and hours of d (absent: all) into a test of a local time.
func (d *DemandCharge) window(path string) (func(time.Time) bool, error) {
	months := d.Months
	if len(months) == 0 {
		months = []string{"All"}
	}
	base, err := ScheduleEntry{Months: months}.match(path)
	if err != nil {
		return nil, err
	}
	if len(d.DaysAndHours) > maxDemandWindows {
		return nil, kwhouse.Invalid("too_many_items", path+".days_and_hours", "at most %d entries", maxDemandWindows)
	}
	var rules []rule
	for j, dh := range d.DaysAndHours {
		pj := fmt.Sprintf("%s.days_and_hours[%d]", path, j)
		days, _, err := parseDays(pj+".days", dh.Days)
		if err != nil {
			return nil, err
		}
		if len(dh.Hours) == 0 {
			return nil, kwhouse.Invalid("parameter_missing", pj+".hours", "at least one hours entry is needed")
		}
		for k, h := range dh.Hours {
			r := base
			r.days = days
			pk := fmt.Sprintf("%s.hours[%d]", pj, k)
			if r.from, err = parseClock(h.ValidFrom, false); err != nil {
				return nil, kwhouse.Invalid("invalid_time", pk+".valid_from", "%v", err)
			}
			if r.to, err = parseClock(h.ValidTo, true); err != nil {
				return nil, kwhouse.Invalid("invalid_time", pk+".valid_to", "%v", err)
			}
			rules = append(rules, r)
		}
	}
	return func(l time.Time) bool { return covers(base, rules, l) }, nil
}

// covers reports whether local time l is in the months of base and, when rules are
// given, in the days and hours of one of them (valid_from > valid_to wraps within the
// date, as in a schedule).
func covers(base rule, rules []rule, l time.Time) bool {
	if !base.months[int(l.Month())] {
		return false
	}
	if len(rules) == 0 {
		return true
	}
	wd := int(l.Weekday())
	if wd == 0 {
		wd = 7
	}
	sec := l.Hour()*3600 + l.Minute()*60 + l.Second()
	for _, r := range rules {
		if !r.days[wd] {
			continue
		}
		if (r.from < r.to && sec >= r.from && sec < r.to) || (r.from > r.to && (sec < r.to || sec >= r.from)) {
			return true
		}
	}
	return false
}

// Charges is what t charges beyond energy, for the charges package.
func (t *Tariff) Charges() (charges.Tariff, error) {
	zone, err := catalog.LoadZone(t.Timezone)
	if err != nil {
		return charges.Tariff{}, fmt.Errorf("zone of tariff %s: %w", t.ID, err)
	}
	out := charges.Tariff{ID: t.ID, Zone: zone, From: t.ContractStartDate.Time(), To: t.ContractEndDate.Time(),
		Standing: deref(t.StandingCharge), TaxPercent: deref(t.TaxPercentage)}
	if out.Key, err = t.demandKey(); err != nil {
		return charges.Tariff{}, err
	}
	for i := range t.DemandCharges {
		d, err := t.DemandCharges[i].compile(fmt.Sprintf("demand_charges[%d]", i))
		if err != nil {
			return charges.Tariff{}, fmt.Errorf("tariff %s: %w", t.ID, err)
		}
		out.Demand = append(out.Demand, d)
	}
	return out, nil
}

// demandRules numbers how demand peaks are measured: kept peaks of another number are
// measured again.
const demandRules = 1

// demandKey names what t's demand peaks are measured by: its id, zone, contract and demand
// entries (a hash; any change to one of them is another key).
func (t *Tariff) demandKey() (string, error) {
	b, err := json.Marshal(struct {
		Rules    int
		ID, Zone string
		From, To int64
		Demand   []DemandCharge
	}{demandRules, t.ID, t.Timezone, t.ContractStartDate.Time().UnixNano(), t.ContractEndDate.Time().UnixNano(),
		withDefaults(t.DemandCharges)})
	if err != nil {
		return "", fmt.Errorf("demand key of tariff %s: %w", t.ID, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// withDefaults returns the demand charges as stored: interval_minutes filled in.
func withDefaults(ds []DemandCharge) []DemandCharge {
	out := make([]DemandCharge, len(ds))
	for i, d := range ds {
		if d.IntervalMinutes == nil {
			n := defaultIntervalMn
			d.IntervalMinutes = &n
		}
		out[i] = d
	}
	return out
}

// HasCharges reports whether t charges anything beyond energy.
func (t *Tariff) HasCharges() bool {
	return deref(t.StandingCharge) != 0 || len(t.DemandCharges) > 0 || deref(t.TaxPercentage) != 0
}
