package tariffs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
)

// yearsOf lists the UTC calendar years that [from, to) touches, within what DateTime holds.
func yearsOf(from, to int64) []int {
	a := time.Unix(max(from, 0), 0).UTC().Year()
	b := time.Unix(max(to-1, 0), 0).UTC().Year()
	var out []int
	for y := max(a, 1970); y <= min(b, 2105); y++ {
		out = append(out, y)
	}
	return out
}

// ensureExpanded makes sure the stored rate periods of ts cover the calendar years of
// [from, to). Tariffs that price alike share their periods (RatesID): each is expanded
// once, and concurrent requests needing the same year share one expansion (yearFlights).
func (s *Service) ensureExpanded(ctx context.Context, scope kwhouse.Scope, ts []*Tariff, from, to int64) error {
	years := yearsOf(from, to)
	byRates := map[string]*Tariff{}
	var ids []string
	for _, t := range ts {
		id := t.RatesID()
		if _, seen := byRates[id]; seen {
			continue
		}
		byRates[id] = t
		if len(s.missingYears(scope, []string{id}, years)) > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := s.loadYears(ctx, scope, ids); err != nil {
		return err
	}
	for {
		todo := s.missingYears(scope, ids, years)
		if len(todo) == 0 {
			return nil
		}
		f, owned, others := s.flights.claim(todo)
		if f != nil {
			err := s.expandOwned(ctx, byRates, owned)
			s.flights.land(f, owned)
			if err != nil {
				return err
			}
		}
		for _, o := range others {
			select {
			case <-o.done: // stored, or failed: then the next round claims what is missing
			case <-ctx.Done():
				return fmt.Errorf("wait for rate expansion: %w", ctx.Err())
			}
		}
	}
}

// missingYears lists the years of ids not known to be stored in scope.
func (s *Service) missingYears(scope kwhouse.Scope, ids []string, years []int) []yearKey {
	var out []yearKey
	for _, id := range ids {
		for _, y := range years {
			if k := (yearKey{scope, id, y}); !s.years.has(k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// expandOwned expands and stores the years claimed, then records them as stored.
func (s *Service) expandOwned(ctx context.Context, byRates map[string]*Tariff, owned []yearKey) error {
	todo := make([]tariffYear, len(owned))
	for i, k := range owned {
		todo[i] = tariffYear{byRates[k.id], k.year}
	}
	if err := s.expandYears(ctx, owned[0].scope, todo); err != nil {
		return err
	}
	for _, k := range owned {
		s.years.add(k)
	}
	return nil
}

// ExpandedYears counts the calendar years of rate periods this process computed from
// schedules (kwhouse_tariff_years_expanded_total).
func (s *Service) ExpandedYears() uint64 { return s.expanded.Load() }

// tariffYear is one UTC calendar year of a tariff's rate periods.
type tariffYear struct {
	t    *Tariff
	year int
}

func (s *Service) loadYears(ctx context.Context, scope kwhouse.Scope, ids []string) error {
	rows, err := s.db.Query(ctx, rateYearsStmt, scope.AccountID, scope.LiveByte(), chstore.Set(ids))
	if err != nil {
		return fmt.Errorf("expanded years: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var y uint16
		if err := rows.Scan(&id, &y); err != nil {
			return fmt.Errorf("scan expanded year: %w", err)
		}
		s.years.add(yearKey{scope, id, int(y)})
	}
	return rows.Err()
}

// Periods returns the UTC rate periods of t over [from, to), computed from its schedule;
// it stops with ctx's error when ctx ends.
func (t *Tariff) Periods(ctx context.Context, from, to int64) ([]Period, error) {
	rules, loc, err := t.compiled()
	if err != nil {
		return nil, err
	}
	return expand(ctx, rules, loc, t.TierPeriod, from, to)
}

// compiled returns t's schedule rules and its zone: what expanding and explaining it start from.
func (t *Tariff) compiled() ([]rule, *time.Location, error) {
	rules, err := t.Schedule.compile(t.MarketRates)
	if err != nil {
		return nil, nil, fmt.Errorf("compile schedule of %s: %w", t.ID, err)
	}
	loc, err := catalog.LoadZone(t.Timezone)
	if err != nil {
		return nil, nil, fmt.Errorf("zone of %s: %w", t.ID, err)
	}
	return rules, loc, nil
}

// expandYears writes the periods of the given years in one batch, then records the years
// as done in another: a crash between the two only means the years are written again
// (same rows, replaced).
func (s *Service) expandYears(ctx context.Context, scope kwhouse.Scope, todo []tariffYear) error {
	b, err := s.db.Insert(ctx, insertRatesStmt)
	if err != nil {
		return fmt.Errorf("expand rates: %w", err)
	}
	ver := uint64(s.now().UnixNano())
	for _, ty := range todo {
		if err := appendYear(ctx, b, scope, ty, ver); err != nil {
			_ = b.Abort() // the expansion's error is the one to report
			return err
		}
		s.expanded.Add(1)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("expand rates: %w", err)
	}
	// INSERT … VALUES with bound values through Exec would leave 18.16 waiting for a data
	// block over the native protocol: every insert goes through a batch.
	yb, err := s.db.Insert(ctx, insertRateYearsStmt)
	if err != nil {
		return fmt.Errorf("record expanded years: %w", err)
	}
	for _, ty := range todo {
		if err := yb.Append(scope.AccountID, scope.LiveByte(), ty.t.RatesID(), uint16(ty.year)); err != nil {
			return fmt.Errorf("record year %d of %s: %w", ty.year, ty.t.ID, err)
		}
	}
	return yb.Send()
}

// appendYear adds the periods of one UTC year of a tariff to batch b.
func appendYear(ctx context.Context, b chstore.Batch, scope kwhouse.Scope, ty tariffYear, ver uint64) error {
	t := ty.t
	from := time.Date(ty.year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	to := time.Date(ty.year+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	periods, err := t.Periods(ctx, from, to)
	if err != nil {
		return err
	}
	for _, p := range periods {
		hi := make([]float64, len(p.Bands.UpperWh))
		for i, u := range p.Bands.UpperWh {
			hi[i] = finiteUpper(u)
		}
		if err := b.Append(scope.AccountID, scope.LiveByte(), t.RatesID(), time.Unix(p.Start, 0).UTC(), time.Unix(p.End, 0).UTC(),
			time.Unix(p.TierStart, 0).UTC(), hi, p.Bands.Fixed, p.Bands.SurFix, p.Bands.SurPct, t.MarketID, ver); err != nil {
			return fmt.Errorf("expand %s %d: %w", t.ID, ty.year, err)
		}
	}
	return nil
}

// Unbounded is the stored upper bound of an open-ended band (Float64 +inf does not survive
// every client's formatting, 1e300 Wh does).
const Unbounded = 1e300

func finiteUpper(u float64) float64 {
	if math.IsInf(u, 1) {
		return Unbounded
	}
	return u
}

var rateYearsStmt = chstore.Register("tariffs.rate_years", `SELECT tariff_id, year FROM tariff_rate_years
		WHERE account_id = ? AND live_mode = ? AND tariff_id IN ?`)

var insertRatesStmt = chstore.Register("tariffs.insert_rates", `INSERT INTO tariff_rates (account_id, live_mode, tariff_id,
		start_time, end_time, tier_start, band_hi, band_fixed, band_sfix, band_spct, market_id, version) VALUES`)

var insertRateYearsStmt = chstore.Register("tariffs.insert_rate_years", "INSERT INTO tariff_rate_years (account_id, live_mode, tariff_id, year) VALUES")

// RatesID names t's rate periods in tariff_rates (its tariff_id column): a hash of all
// they are computed from — schedule, zone, tier period, market — so that tariffs which
// price alike, such as a fleet's thousands of contracts for one product, share one
// expansion, and storage grows with distinct products, not with locations.
func (t *Tariff) RatesID() string {
	if id, ok := ratesIDs.Load(t.ID); ok {
		return id.(string)
	}
	id := t.computeRatesID()
	ratesIDs.Store(t.ID, id)
	return id
}

// ratesIDs remembers RatesID by tariff id: what it hashes never changes after creation.
var ratesIDs sync.Map

func (t *Tariff) computeRatesID() string {
	b, err := json.Marshal(struct {
		Schedule              Schedule
		Zone, TierPeriod, Mkt string
		Market                bool
	}{t.Schedule, t.Timezone, t.TierPeriod, t.MarketID, t.MarketRates})
	if err != nil {
		return t.ID // a stored schedule always encodes; never shared then
	}
	sum := sha256.Sum256(b)
	return "rts_" + hex.EncodeToString(sum[:12])
}
