package schedules

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// Bounds on single quantities: within them power × time and energy sums fit int64 in
// milliwatts and millijoules.
const (
	maxPowerW   = 1e9 // 1 GW
	maxEnergyWh = 1e9 // 1 GWh
)

// powerUnits and energyUnits are the units accepted, with their size in mW and mJ.
var (
	powerUnits  = map[string]float64{"W": 1e3, "KW": 1e6}
	energyUnits = map[string]float64{"WH": 3.6e6, "KWH": 3.6e9}
)

// deviceNeed is a validated device request in the solver's units (mW, mJ, seconds).
type deviceNeed struct {
	req        DeviceRequest
	direction  string
	start, end int64
	startZone  *time.Location // the offset start_time was sent in, for answers
	maxPower   int64          // 0: none of its own
	energy     int64
}

// need is a validated request.
type need struct {
	req      Request
	opt      Options
	loc      catalog.Location
	maxPower int64
	now      int64
	devices  []deviceNeed
}

// validate reports every problem of the request's shape (kwhouse.Problems).
func (s *Service) validate(req Request, opt Options, now time.Time) (need, error) {
	var p kwhouse.Problems
	p.ID("location_id", kwhouse.PrefixLocation, req.LocationID, true)
	n := need{req: req, opt: opt, now: now.Unix()}
	if req.MaxPower == nil {
		p.Add("parameter_missing", "max_power", "max_power (the location's power cap) is required")
	} else {
		n.maxPower = quantity(&p, "max_power", *req.MaxPower, powerUnits, maxPowerW)
	}
	checkThreshold(&p, req.ShavingThreshold)
	checkOptions(&p, opt)
	switch {
	case len(req.Data) == 0:
		p.Add("parameter_missing", "data", "data must list at least one device")
	case len(req.Data) > s.limits.MaxDevices:
		p.Add("too_many_devices", "data", "at most %d devices per schedule", s.limits.MaxDevices)
	}
	seen := map[string]int{}
	for i, d := range req.Data {
		prefix := fmt.Sprintf("data[%d]", i)
		if j, dup := seen[d.DeviceID]; dup && d.DeviceID != "" {
			p.Add("duplicate_device", prefix+".device_id", "device %s is already planned at data[%d]", d.DeviceID, j)
		}
		seen[d.DeviceID] = i
		n.devices = append(n.devices, s.checkDevice(&p, prefix, d, now))
	}
	return n, p.Err()
}

func (s *Service) checkDevice(p *kwhouse.Problems, prefix string, d DeviceRequest, now time.Time) deviceNeed {
	dn := deviceNeed{req: d, direction: d.Direction, startZone: time.UTC}
	p.ID(prefix+".device_id", kwhouse.PrefixDevice, d.DeviceID, true)
	if dn.direction == "" {
		dn.direction = "IMPORT"
	}
	if dn.direction != "IMPORT" && dn.direction != "EXPORT" {
		p.Add("invalid_value", prefix+".direction", "direction must be IMPORT or EXPORT")
	}
	if d.MaxPower != nil {
		dn.maxPower = quantity(p, prefix+".max_power", *d.MaxPower, powerUnits, maxPowerW)
	}
	if d.Energy == nil {
		p.Add("parameter_missing", prefix+".energy", "energy (the energy the device needs) is required")
	} else {
		dn.energy = quantity(p, prefix+".energy", *d.Energy, energyUnits, maxEnergyWh)
	}
	s.checkWindow(p, prefix, d, &dn, now)
	return dn
}

// checkWindow sets the device's window: start_time (default now; earlier is now) to
// end_time, which must lie after now and within the horizon.
func (s *Service) checkWindow(p *kwhouse.Problems, prefix string, d DeviceRequest, dn *deviceNeed, now time.Time) {
	start := now
	if d.StartTime != nil {
		t, err := time.Parse(time.RFC3339, *d.StartTime)
		if err != nil {
			p.Add("invalid_value", prefix+".start_time", "must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z")
			return
		}
		start, dn.startZone = t, t.Location()
	}
	if d.EndTime == nil {
		p.Add("parameter_missing", prefix+".end_time", "end_time (when the energy must be delivered) is required")
		return
	}
	end, err := time.Parse(time.RFC3339, *d.EndTime)
	switch {
	case err != nil:
		p.Add("invalid_value", prefix+".end_time", "must be an RFC 3339 date-time such as 2024-01-02T03:04:05Z")
	case !end.After(start):
		p.Add("invalid_window", prefix+".end_time", "end_time must be after start_time")
	case !end.After(now):
		p.Add("window_in_past", prefix+".end_time", "end_time is in the past: a schedule plans from now on")
	case end.Sub(now) > s.limits.Horizon:
		p.Add("window_too_long", prefix+".end_time", "end_time may be at most %s after now (the price horizon)", s.limits.Horizon)
	}
	dn.start, dn.end = max(start.Unix(), now.Unix()), end.Unix()
}

// quantity checks {units, value} against units (name → size in the solver's unit) and
// at most bound of the smallest unit (W or WH), and returns it in the solver's unit.
func quantity(p *kwhouse.Problems, param string, q Quantity, units map[string]float64, bound float64) int64 {
	base, names := "W", "W or KW"
	if _, wh := units["WH"]; wh {
		base, names = "WH", "WH or KWH"
	}
	size, ok := units[q.Units]
	if !ok {
		p.Add("invalid_units", param+".units", "units must be %s", names)
		return 0
	}
	v := float64(q.Value) * size
	switch {
	case q.Value <= 0:
		p.Add("invalid_value", param+".value", "must be greater than 0")
		return 0
	case v > bound*units[base]:
		p.Add("invalid_value", param+".value", "must be at most %g %s", bound, base)
		return 0
	case math.Round(v) < 1:
		p.Add("invalid_value", param+".value", "is too small: less than a milli%s", strings.ToLower(base[:1]))
		return 0
	}
	return int64(math.Round(v))
}

func checkThreshold(p *kwhouse.Problems, t *Threshold) {
	if t == nil {
		return
	}
	if t.Absolute != nil && (math.IsNaN(*t.Absolute) || math.IsInf(*t.Absolute, 0)) {
		p.Add("invalid_value", "shaving_threshold.absolute", "absolute must be a finite price")
	}
	if t.Relative != nil && !(*t.Relative > 0 && *t.Relative <= 1) {
		p.Add("invalid_value", "shaving_threshold.relative", "relative must be within (0, 1]")
	}
}

func checkOptions(p *kwhouse.Problems, opt Options) {
	switch opt.Objective {
	case "", ObjectiveCost, ObjectiveCarbon:
	case ObjectiveBlend:
		if opt.CarbonWeight == nil {
			p.Add("parameter_missing", "carbon_weight", "objective=blend needs carbon_weight (money per gram CO2e)")
		}
	default:
		p.Add("invalid_value", "objective", "objective must be cost, carbon or blend")
	}
	if w := opt.CarbonWeight; w != nil && !(*w >= 0 && !math.IsInf(*w, 0)) {
		p.Add("invalid_value", "carbon_weight", "carbon_weight must be a finite number ≥ 0")
	}
}

// resolve validates the request and looks up the location and devices it names: an
// unknown one, or a device whose records of the last deviceLookback are all at other
// locations, is a 400 naming the field. Devices remembered as placed at the location
// (placements) need no read; the others are looked up at once, in one round trip's wait.
func (s *Service) resolve(ctx context.Context, scope kwhouse.Scope, req Request, opt Options, now time.Time) (need, error) {
	n, err := s.validate(req, opt, now)
	if err != nil {
		return n, err
	}
	if n.loc, err = s.catalog.LocationInfo(ctx, scope, req.LocationID); err != nil {
		return n, refError(err, "location_id", req.LocationID)
	}
	ids := make([]string, len(n.devices))
	for i, d := range n.devices {
		ids[i] = d.req.DeviceID
	}
	exists, elsewhere, err := s.lookUpDevices(ctx, scope, req.LocationID, ids, now)
	if err != nil {
		return n, err
	}
	var p kwhouse.Problems
	for i, id := range ids {
		param := fmt.Sprintf("data[%d].device_id", i)
		if !exists(id) {
			p.Add("resource_missing", param, "no such object: %s", id)
		} else if other, ok := elsewhere[id]; ok {
			p.Add("device_at_other_location", param, "device %s reports from %s, not %s", id, other, req.LocationID)
		}
	}
	return n, p.Err()
}

// lookUpDevices says which of ids are devices of the scope, and which of them report only
// from other locations (with one of those). The reads run at once: the document lookup
// (ids found are remembered for a minute), the placement of the devices not remembered as
// placed at the location, and the elsewhere check of those same devices.
func (s *Service) lookUpDevices(ctx context.Context, scope kwhouse.Scope, location string, ids []string, now time.Time) (func(string) bool, map[string]string, error) {
	var exists func(string) bool
	elsewhere := map[string]string{}
	unknown := s.placed.unknown(scope, location, ids, now)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		exists, err = s.docs.ExistingIDs(gctx, scope, catalog.KindDevice, ids)
		return err
	})
	if len(unknown) > 0 {
		g.Go(func() error { return s.placed.read(gctx, scope, location, unknown, now) })
		g.Go(func() (err error) {
			elsewhere, err = s.pricer.DevicesElsewhere(gctx, scope, location, unknown, now.Add(-deviceLookback), now)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return exists, elsewhere, nil
}

// deviceLookback is how far back a device's records place it at a location.
const deviceLookback = 90 * 24 * time.Hour

func refError(err error, param, id string) error {
	if kwhouse.KindOf(err) == kwhouse.KindNotFound {
		return kwhouse.Invalid("resource_missing", param, "no such object: %s", id)
	}
	return err
}
