package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/strictjson"
)

// CumulativeInput is the body of PUT /meters/cumulative/epoch: register readings of one
// meter, each at a Unix time.
type CumulativeInput struct {
	LocationID         string            `json:"location_id"`
	DeviceID           string            `json:"device_id"`
	SessionReferenceID string            `json:"session_reference_id"`
	Direction          string            `json:"direction"`
	TariffRate         string            `json:"tariff_rate"`
	Units              string            `json:"units"`
	Data               []RegisterReading `json:"data"`
}

// RegisterReading is one register value.
type RegisterReading struct {
	Time              *int64   `json:"time"`
	Value             *float64 `json:"value"`
	RecordReferenceID string   `json:"record_reference_id"`
}

// validate checks the fields common to every reading, reporting every problem
// (kwhouse.Problems), and returns the register's key and the Wh per unit.
func (in *CumulativeInput) validate(max int) (Record, float64, error) {
	raw := rawRecord{}
	set := func(f int, v string) {
		if v != "" {
			raw.fields[f], raw.set[f] = v, true
		}
	}
	set(fLocationID, in.LocationID)
	set(fDeviceID, in.DeviceID)
	set(fDirection, in.Direction)
	set(fTariffRate, in.TariffRate)
	key := Record{LocationID: in.LocationID, DeviceID: in.DeviceID, SessionRef: in.SessionReferenceID}
	if len(in.Data) > max {
		return key, 0, tooManyRecords(max) // 413, not a field's problem
	}
	var p kwhouse.Problems
	p.ID("location_id", kwhouse.PrefixLocation, in.LocationID, true)
	p.ID("device_id", kwhouse.PrefixDevice, in.DeviceID, false)
	if len(in.SessionReferenceID) > 255 {
		p.Add("string_too_long", "session_reference_id", "at most 255 characters")
	}
	if len(in.Data) == 0 {
		p.Add("parameter_missing", "data", "data needs at least one reading")
	}
	if field, msg := key.setDirections(&raw); msg != "" {
		p.Add("invalid_value", field, "%s", msg)
	}
	scale := 0.0
	switch strings.ToUpper(in.Units) {
	case "WH":
		scale = 1
	case "KWH":
		scale = 1000
	case "":
		p.Add("parameter_missing", "units", "units is required (WH or KWH)")
	default:
		p.Add("invalid_value", "units", "units of a register must be WH or KWH")
	}
	return key, scale, p.Err()
}

// ReadingsBound stops reading a body of register readings at its first reading over
// ingest.max_records_per_request (413).
func (s *Service) ReadingsBound() strictjson.Bound {
	return strictjson.Bound{Max: s.maxRecords, TooMany: func() error { return tooManyRecords(s.maxRecords) }}
}

// register is a reading in Wh at a Unix time.
type register struct {
	num   int
	time  int64
	wh    float64
	ref   string
	valid bool
}

// SubmitCumulative turns register readings into interval records: readings are sorted by
// time, each one after the first becomes the interval from the previous accepted reading
// with their difference as energy. The first continues the register's last stored reading
// before it. A decrease (meter reset) or a repeated time fails that reading.
func (s *Service) SubmitCumulative(ctx context.Context, scope kwhouse.Scope, in CumulativeInput) (Batch, error) {
	key, scale, err := in.validate(s.maxRecords)
	if err != nil {
		return Batch{}, err
	}
	if err := s.checkKeyOwner(ctx, scope, key); err != nil {
		return Batch{}, err
	}
	if err := s.chargeFor(ctx, scope, len(in.Data)); err != nil {
		return Batch{}, err
	}
	p := &parsed{failed: failures{keep: s.maxFailed}}
	regs := parseRegisters(in, scale, p)
	prev, err := s.lastRegister(ctx, scope, key, regs)
	if err != nil {
		return Batch{}, err
	}
	intervals(key, prev, regs, p)
	b, err := s.store(ctx, scope, p, nil)
	if err != nil {
		return Batch{}, err
	}
	if err := s.saveRegisters(ctx, scope, key, regs); err != nil {
		return Batch{}, err
	}
	return s.completed(ctx, scope, b, nil)
}

// parseRegisters returns in's valid readings (values in Wh) sorted by time, and records
// each bad one's failure in p.
func parseRegisters(in CumulativeInput, scale float64, p *parsed) []register {
	regs := make([]register, 0, len(in.Data))
	for i, d := range in.Data {
		num := i // 0-based position in data, as FlatPeak's record_num
		switch {
		case d.Time == nil || d.Value == nil:
			p.fail(num, d.RecordReferenceID, "time and value are required")
		case *d.Time < minTime || *d.Time > maxTime:
			p.fail(num, d.RecordReferenceID, "time must be a Unix time in seconds between 1970-01-02 and 2105-12-31")
		case math.IsNaN(*d.Value) || math.IsInf(*d.Value, 0) || *d.Value < 0:
			p.fail(num, d.RecordReferenceID, "value must be a finite number, not negative")
		case !kwhouse.Within(*d.Value*scale, kwhouse.MaxRegisterWh):
			p.fail(num, d.RecordReferenceID, fmt.Sprintf("value is %g Wh; a register reading may be at most %g Wh", *d.Value*scale, kwhouse.MaxRegisterWh))
		case len(d.RecordReferenceID) > 255:
			p.fail(num, d.RecordReferenceID[:255], "record_reference_id is longer than 255 characters")
		default:
			regs = append(regs, register{num: num, time: *d.Time, wh: *d.Value * scale, ref: d.RecordReferenceID})
		}
	}
	sort.SliceStable(regs, func(i, j int) bool { return regs[i].time < regs[j].time })
	return regs
}

// intervals accepts into p the interval from each reading of regs (sorted) to the one
// before it, prev (the register's last stored reading, or nil) before the first, and marks
// the readings a later request continues from valid. A reading that repeats the previous
// one is a retry, counted and skipped; one at the same time with another value, one lower
// than the previous (a meter reset) or a step too large or too long is refused.
func intervals(key Record, prev *register, regs []register, p *parsed) {
	for i := range regs {
		r := &regs[i]
		switch {
		case prev != nil && r.time == prev.time && r.wh == prev.wh:
			p.submitted++ // the same reading sent again (a retry): nothing new
			continue
		case prev != nil && r.time == prev.time:
			p.fail(r.num, r.ref, fmt.Sprintf("a reading at time %d already exists", r.time))
			continue
		case prev != nil && r.wh < prev.wh:
			p.fail(r.num, r.ref, fmt.Sprintf("register went down from %g Wh to %g Wh (meter reset?): reading not used", prev.wh, r.wh))
			continue
		case prev != nil && r.wh-prev.wh > kwhouse.MaxEnergyWh:
			p.fail(r.num, r.ref, fmt.Sprintf("%g Wh since the previous reading; a step may be at most %g Wh", r.wh-prev.wh, kwhouse.MaxEnergyWh))
			continue
		}
		r.valid = true
		if prev == nil {
			p.submitted++ // the register's first reading: stored, no interval yet
		} else {
			rec := key
			rec.Start, rec.End, rec.EnergyWh, rec.Confidence, rec.RecordRef = prev.time, r.time, r.wh-prev.wh, 1, r.ref
			if time.Duration(rec.End-rec.Start)*time.Second > MaxRecordSpan {
				r.valid = false
				p.fail(r.num, r.ref, "more than 31 days after the previous reading")
				continue
			}
			p.accept(r.num, rec)
		}
		prev = r
	}
}

// lastRegister returns the latest stored reading before the first new one, or nil.
func (s *Service) lastRegister(ctx context.Context, scope kwhouse.Scope, key Record, regs []register) (*register, error) {
	if len(regs) == 0 {
		return nil, nil
	}
	var t time.Time
	var wh float64
	db := s.writer.db
	err := db.QueryRow(ctx, lastRegisterStmt,
		scope.AccountID, scope.LiveByte(), key.LocationID, key.DeviceID, DirectionName(key.Direction),
		DirectionName(key.TariffRate), regs[0].time).Scan(&t, &wh)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last register reading: %w", err)
	}
	return &register{time: t.Unix(), wh: wh, num: 0}, nil
}

func (s *Service) saveRegisters(ctx context.Context, scope kwhouse.Scope, key Record, regs []register) error {
	db := s.writer.db
	b, err := db.Insert(ctx, insertRegistersStmt)
	if err != nil {
		return fmt.Errorf("save register readings: %w", err)
	}
	n := 0
	ver, err := s.versions.Next(ctx, len(regs))
	if err != nil {
		_ = b.Abort()
		return fmt.Errorf("register versions: %w", err)
	}
	for i, r := range regs {
		if !r.valid {
			continue
		}
		n++
		if err := b.Append(scope.AccountID, scope.LiveByte(), key.LocationID, key.DeviceID, key.Direction,
			key.TariffRate, time.Unix(r.time, 0).UTC(), r.wh, ver+uint64(i)); err != nil {
			return fmt.Errorf("save register reading: %w", err)
		}
	}
	if n == 0 {
		return b.Abort()
	}
	return b.Send()
}

// checkKeyOwner refuses a register whose location or device is not the caller's.
func (s *Service) checkKeyOwner(ctx context.Context, scope kwhouse.Scope, key Record) error {
	ok, err := s.owners.ExistingIDs(ctx, scope, "location", []string{key.LocationID})
	if err != nil {
		return err
	}
	if !ok(key.LocationID) {
		return kwhouse.Invalid("resource_missing", "location_id", "no such location: %s", key.LocationID)
	}
	if key.DeviceID == "" {
		return nil
	}
	if ok, err = s.owners.ExistingIDs(ctx, scope, "device", []string{key.DeviceID}); err != nil {
		return err
	}
	if !ok(key.DeviceID) {
		return kwhouse.Invalid("resource_missing", "device_id", "no such device: %s", key.DeviceID)
	}
	return nil
}

// FINAL with filters on sorting-key columns only: every version of a row shares them.
var lastRegisterStmt = chstore.Register("ingest.last_register", `SELECT time, value_wh FROM meter_registers FINAL
		WHERE account_id = ? AND live_mode = ? AND location_id = ? AND device_id = ? AND direction = ?
		  AND tariff_rate = ? AND time <= toDateTime(?, 'UTC') ORDER BY time DESC LIMIT 1`)

var insertRegistersStmt = chstore.Register("ingest.insert_registers", `INSERT INTO meter_registers (account_id, live_mode,
		location_id, device_id, direction, tariff_rate, time, value_wh, version) VALUES`)
