package tariffs

import (
	"context"
	"fmt"
	"time"
)

// Tier periods: what the consumption counter of banded rates resets with.
const (
	TierMonth = "MONTH"
	TierDay   = "DAY"
)

// Period is a UTC stretch [Start, End) with one set of bands, inside one tier period.
type Period struct {
	Start, End int64 // Unix seconds
	TierStart  int64 // Unix second the tier period containing this period began
	Bands      Bands
}

// expand maps the schedule onto UTC time over [from, to) in zone loc (walk), merging
// adjacent equal periods. Each local day costs O(rules) plus its pieces, and each
// distinct set of applying rules is resolved once; ctx is checked every day, so a request
// that ends stops its expansion.
func expand(ctx context.Context, rules []rule, loc *time.Location, tier string, from, to int64) ([]Period, error) {
	var out []Period
	err := walk(ctx, rules, loc, tier, from, to, func(p Period, _ *rule) { out = appendMerged(out, p) })
	return out, err
}

// walk maps the schedule onto UTC time over [from, to) in zone loc and hands each stretch
// with its winning rule to emit, in time order. It walks stretches of constant UTC
// offset: inside one, local wall time runs linearly with UTC, so a local hour skipped by
// a spring-forward change never appears (no length) and one repeated by a fall-back
// change appears twice (priced twice). Stretches are cut at tier period starts. It stops
// with ctx's error when ctx ends.
func walk(ctx context.Context, rules []rule, loc *time.Location, tier string, from, to int64, emit func(Period, *rule)) error {
	days := map[int64][]dayPiece{} // by local wall day number
	resolver := newDayResolver(rules)
	for u := from; u < to; {
		_, off := time.Unix(u, 0).In(loc).Zone()
		end := stretchEnd(u, to, loc)
		for wall, wallEnd := u+int64(off), end+int64(off); wall < wallEnd; {
			day := floorDiv(wall, 86400)
			dayEnd := min(wallEnd, (day+1)*86400)
			pieces, ok := days[day]
			if !ok {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("expand rate periods: %w", err)
				}
				d := time.Unix(day*86400, 0).UTC()
				pieces, _ = resolver.day(int(d.Month()), d.Day(), isoWeekday(d))
				days[day] = pieces
			}
			tierStart := tierStartOf(day, tier, loc)
			for _, p := range pieces {
				a, b := max(wall, day*86400+int64(p.from)), min(dayEnd, day*86400+int64(p.to))
				if a < b && p.rule != nil {
					emit(Period{Start: a - int64(off), End: b - int64(off), TierStart: tierStart, Bands: p.rule.bands}, p.rule)
				}
			}
			wall = dayEnd
		}
		u = end
	}
	return nil
}

// stretchEnd returns the end of the constant-offset stretch containing u, capped at limit.
func stretchEnd(u, limit int64, loc *time.Location) int64 {
	_, end := time.Unix(u, 0).In(loc).ZoneBounds()
	if end.IsZero() || end.Unix() > limit || end.Unix() <= u {
		return limit
	}
	return end.Unix()
}

// tierStartOf returns the UTC instant the tier period of local wall day `day` began.
func tierStartOf(day int64, tier string, loc *time.Location) int64 {
	d := time.Unix(day*86400, 0).UTC()
	if tier == TierDay {
		return localMidnight(d.Year(), d.Month(), d.Day(), loc)
	}
	return localMidnight(d.Year(), d.Month(), 1, loc)
}

// localMidnight is the first instant of a local date (later than wall midnight where a
// change skips midnight itself).
func localMidnight(y int, m time.Month, d int, loc *time.Location) int64 {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if t.Day() != d { // normalised backwards across a gap at midnight
		t = time.Date(y, m, d, 1, 0, 0, 0, loc)
	}
	return t.Unix()
}

func appendMerged(out []Period, p Period) []Period {
	if n := len(out); n > 0 {
		last := &out[n-1]
		if last.End == p.Start && last.TierStart == p.TierStart && last.Bands.equal(p.Bands) {
			last.End = p.End
			return out
		}
	}
	return append(out, p)
}

func isoWeekday(t time.Time) int {
	if wd := int(t.Weekday()); wd != 0 {
		return wd
	}
	return 7
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
