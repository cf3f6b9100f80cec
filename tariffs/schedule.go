package tariffs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/strictjson"
)

// Schedule is a tariff's time-of-use grammar, in local time of the tariff's zone.
type Schedule []ScheduleEntry

// ScheduleEntry applies to some months (and optionally some dates of the month).
type ScheduleEntry struct {
	Months       []string      `json:"months"`
	Dates        []int         `json:"dates,omitempty"`
	DaysAndHours []DaysAndHour `json:"days_and_hours"`
}

// DaysAndHour applies to some days of the week.
type DaysAndHour struct {
	Days  []DayName   `json:"days"`
	Hours []HourRange `json:"hours"`
}

// DayName is a day word ("Mon", "Weekday", "All") or an ISO day number sent as a string
// or an integer.
type DayName string

// UnmarshalJSON accepts strings and integers.
func (d *DayName) UnmarshalJSON(b []byte) error {
	if s, err := strictjson.String(b); err == nil {
		*d = DayName(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("a day is a name or an ISO day number")
	}
	*d = DayName(n.String())
	return nil
}

// HourRange is a time-of-day range with its rate bands.
type HourRange struct {
	ValidFrom string `json:"valid_from"`
	ValidTo   string `json:"valid_to"`
	Rate      []Band `json:"rate"`
}

// Band is one tier of a rate: up to ToKWh (nil: no bound) consumed in the tier period.
type Band struct {
	Fixed               *float64 `json:"fixed,omitempty"` // absent on market tariffs: FlatPeak declares it a number, not nullable
	ToKWh               *float64 `json:"to_kwh"`
	SurchargeFixed      *float64 `json:"surcharge_fixed"`
	SurchargePercentage *float64 `json:"surcharge_percentage"`
}

// Specificity ranks, lower is more specific.
const (
	rankDates = iota
	rankNamedMonths
	rankAllMonths
)

const (
	rankNamedDays = iota
	rankWeekPart
	rankAllDays
)

// rule is a validated hour range with its matching sets.
type rule struct {
	months    [13]bool // 1..12
	dates     [32]bool // 1..31; all false: any date
	hasDates  bool
	days      [8]bool // ISO 1..7
	from, to  int     // seconds of the day, [from, to) or wrapped when from > to
	entryRank int
	dayRank   int
	order     int    // position in the schedule: ties go to the earlier rule
	path      string // where in the schedule: schedule[0].days_and_hours[1].hours[2]
	bands     Bands
}

// Bands are the resolved rate bands of a rule: upper bounds in Wh (+Inf for the last).
type Bands struct {
	UpperWh []float64
	Fixed   []float64
	SurFix  []float64
	SurPct  []float64
}

func (b Bands) equal(o Bands) bool {
	return floatsEqual(b.UpperWh, o.UpperWh) && floatsEqual(b.Fixed, o.Fixed) &&
		floatsEqual(b.SurFix, o.SurFix) && floatsEqual(b.SurPct, o.SurPct)
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var monthWords = map[string]int{}
var dayWords = map[string]int{}

func init() {
	for m := time.January; m <= time.December; m++ {
		monthWords[strings.ToLower(m.String())] = int(m)
		monthWords[strings.ToLower(m.String()[:3])] = int(m)
	}
	for d := 1; d <= 7; d++ {
		wd := time.Weekday(d % 7)
		dayWords[strings.ToLower(wd.String())] = d
		dayWords[strings.ToLower(wd.String()[:3])] = d
		dayWords[strconv.Itoa(d)] = d
	}
}

// compile validates s and returns its rules; errors name the rule and its path.
func (s Schedule) compile(market bool) ([]rule, error) {
	if len(s) == 0 {
		return nil, kwhouse.Invalid("parameter_missing", "schedule", "a schedule needs at least one entry")
	}
	var rules []rule
	for i, e := range s {
		p := fmt.Sprintf("schedule[%d]", i)
		base, err := e.match(p)
		if err != nil {
			return nil, err
		}
		if len(e.DaysAndHours) == 0 {
			return nil, kwhouse.Invalid("parameter_missing", p+".days_and_hours", "at least one days_and_hours entry is needed")
		}
		for j, dh := range e.DaysAndHours {
			pj := fmt.Sprintf("%s.days_and_hours[%d]", p, j)
			days, dayRank, err := parseDays(pj+".days", dh.Days)
			if err != nil {
				return nil, err
			}
			if len(dh.Hours) == 0 {
				return nil, kwhouse.Invalid("parameter_missing", pj+".hours", "at least one hours entry is needed")
			}
			for k, h := range dh.Hours {
				r := base
				r.days, r.dayRank, r.order = days, dayRank, len(rules)
				r.path = fmt.Sprintf("%s.hours[%d]", pj, k)
				if err := h.compile(r.path, market, &r); err != nil {
					return nil, err
				}
				rules = append(rules, r)
			}
		}
	}
	return rules, nil
}

// match parses months and dates of an entry.
func (e ScheduleEntry) match(p string) (rule, error) {
	var r rule
	if len(e.Months) == 0 {
		return r, kwhouse.Invalid("parameter_missing", p+".months", `months is required (["All"] for every month)`)
	}
	r.entryRank = rankNamedMonths
	for _, m := range e.Months {
		w := strings.ToLower(strings.TrimSpace(m))
		if w == "all" {
			r.entryRank = rankAllMonths
			for x := 1; x <= 12; x++ {
				r.months[x] = true
			}
			continue
		}
		n, ok := monthWords[w]
		if !ok {
			return r, kwhouse.Invalid("invalid_month", p+".months", "%q is not a month (All, Jan…Dec or full names)", m)
		}
		r.months[n] = true
	}
	for _, d := range e.Dates {
		if d < 1 || d > 31 {
			return r, kwhouse.Invalid("invalid_date", p+".dates", "dates are days of the month, 1 to 31; got %d", d)
		}
		r.dates[d], r.hasDates = true, true
	}
	if r.hasDates {
		r.entryRank = rankDates
	}
	return r, nil
}

func parseDays(p string, names []DayName) ([8]bool, int, error) {
	var days [8]bool
	if len(names) == 0 {
		return days, 0, kwhouse.Invalid("parameter_missing", p, `days is required (["All"] for every day)`)
	}
	rank := rankNamedDays
	for _, n := range names {
		w := strings.ToLower(strings.TrimSpace(string(n)))
		switch w {
		case "all":
			rank = max(rank, rankAllDays)
			for d := 1; d <= 7; d++ {
				days[d] = true
			}
		case "weekday", "weekdays":
			rank = max(rank, rankWeekPart)
			for d := 1; d <= 5; d++ {
				days[d] = true
			}
		case "weekend", "weekends":
			rank = max(rank, rankWeekPart)
			days[6], days[7] = true, true
		default:
			d, ok := dayWords[w]
			if !ok {
				return days, 0, kwhouse.Invalid("invalid_day", p, "%q is not a day (All, Weekday, Weekend, Mon…Sun, full names or 1–7)", n)
			}
			days[d] = true
		}
	}
	return days, rank, nil
}

func (h HourRange) compile(p string, market bool, r *rule) error {
	from, err := parseClock(h.ValidFrom, false)
	if err != nil {
		return kwhouse.Invalid("invalid_time", p+".valid_from", "%v", err)
	}
	to, err := parseClock(h.ValidTo, true)
	if err != nil {
		return kwhouse.Invalid("invalid_time", p+".valid_to", "%v", err)
	}
	r.from, r.to = from, to
	bands, err := compileBands(p+".rate", h.Rate, market)
	if err != nil {
		return err
	}
	r.bands = bands
	return nil
}

// parseClock reads HH:MM:SS. For an end time, 00:00:00 and 24:00:00 mean the end of the day.
func parseClock(s string, end bool) (int, error) {
	if s == "" {
		s = "00:00:00"
	}
	t, err := time.Parse("15:04:05", s)
	if err != nil {
		if s == "24:00:00" && end {
			return 86400, nil
		}
		return 0, fmt.Errorf("%q is not a time of day HH:MM:SS", s)
	}
	sec := t.Hour()*3600 + t.Minute()*60 + t.Second()
	if end && sec == 0 {
		return 86400, nil
	}
	return sec, nil
}

func compileBands(p string, in []Band, market bool) (Bands, error) {
	var b Bands
	if len(in) == 0 {
		return b, kwhouse.Invalid("parameter_missing", p, "a rate needs at least one band")
	}
	prev := 0.0
	for i, band := range in {
		pi := fmt.Sprintf("%s[%d]", p, i)
		if !market && band.Fixed == nil {
			return b, kwhouse.Invalid("parameter_missing", pi+".fixed", "fixed (price per kWh) is required")
		}
		if err := checkBandValues(pi, band); err != nil {
			return b, err
		}
		upper := math.Inf(1)
		if band.ToKWh != nil {
			if i == len(in)-1 {
				return b, kwhouse.Invalid("invalid_tier", pi+".to_kwh", "the last band has no upper bound: to_kwh must be null")
			}
			if *band.ToKWh <= prev {
				return b, kwhouse.Invalid("invalid_tier", pi+".to_kwh", "bands go up: to_kwh must exceed the previous band's")
			}
			prev, upper = *band.ToKWh, *band.ToKWh*1000
		} else if i != len(in)-1 {
			return b, kwhouse.Invalid("invalid_tier", pi+".to_kwh", "only the last band may be unbounded (to_kwh null)")
		}
		b.UpperWh = append(b.UpperWh, upper)
		b.Fixed = append(b.Fixed, deref(band.Fixed))
		b.SurFix = append(b.SurFix, deref(band.SurchargeFixed))
		b.SurPct = append(b.SurPct, deref(band.SurchargePercentage))
	}
	return b, nil
}

// checkBandValues refuses numbers of a band outside the value ranges (kwhouse.MaxPrice …).
func checkBandValues(p string, band Band) error {
	for _, f := range []struct {
		name  string
		v     *float64
		limit float64
	}{{"fixed", band.Fixed, kwhouse.MaxPrice}, {"to_kwh", band.ToKWh, kwhouse.MaxTierKWh},
		{"surcharge_fixed", band.SurchargeFixed, kwhouse.MaxPrice}, {"surcharge_percentage", band.SurchargePercentage, kwhouse.MaxSurchargePercent}} {
		if f.v != nil && !kwhouse.Within(*f.v, f.limit) {
			return kwhouse.Invalid("invalid_number", p+"."+f.name, "%s must be a number from %g to %g", f.name, -f.limit, f.limit)
		}
	}
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// specificity orders rules most specific first: by entry rank, then day rank, then
// position in the schedule (negative: r wins over o).
func (r *rule) specificity(o *rule) int {
	return cmp.Or(cmp.Compare(r.entryRank, o.entryRank), cmp.Compare(r.dayRank, o.dayRank), cmp.Compare(r.order, o.order))
}

// dayPiece is a stretch of a local day with one winning rule.
type dayPiece struct {
	from, to int // seconds of the day
	rule     *rule
}

// applies reports whether r applies on a day with the given month, date and ISO weekday.
func (r *rule) applies(month, date, weekday int) bool {
	return r.months[month] && (!r.hasDates || r.dates[date]) && r.days[weekday]
}

// resolveDay returns the winning rule over each stretch of a local date; a nil rule
// marks uncovered time. It takes O(n log n) for n applying rules: the day is cut at
// every rule's ends, then the rules, best first, each take the stretches of their range
// no better rule took, skipping taken ones through a union-find of the next free stretch.
func resolveDay(rules []rule, month, date, weekday int) []dayPiece {
	points := []int{0, 86400}
	var live []*rule
	for i := range rules {
		if r := &rules[i]; r.applies(month, date, weekday) {
			live = append(live, r)
			points = append(points, r.from, r.to%86400)
		}
	}
	slices.Sort(points)
	points = slices.Compact(points)
	slices.SortFunc(live, (*rule).specificity)
	owner := make([]*rule, len(points)-1)
	next := make([]int, len(points)) // next[i]: a free stretch at or after i (len-1: none)
	for i := range next {
		next[i] = i
	}
	take := func(r *rule, from, to int) {
		a, _ := slices.BinarySearch(points, from)
		b, _ := slices.BinarySearch(points, to)
		for i := freeFrom(next, a); i < b; i = freeFrom(next, i) {
			owner[i], next[i] = r, i+1
		}
	}
	for _, r := range live {
		switch {
		case r.from < r.to:
			take(r, r.from, r.to)
		case r.from > r.to: // wraps: [00:00, to) and [from, 24:00) of the same date
			take(r, 0, r.to)
			take(r, r.from, 86400)
		}
	}
	var out []dayPiece
	for i, r := range owner {
		if n := len(out); n > 0 && out[n-1].rule == r {
			out[n-1].to = points[i+1]
			continue
		}
		out = append(out, dayPiece{from: points[i], to: points[i+1], rule: r})
	}
	return out
}

// freeFrom returns the first free stretch at or after i, shortening the path it walked.
func freeFrom(next []int, i int) int {
	for next[i] != i {
		next[i] = next[next[i]]
		i = next[i]
	}
	return i
}

// dayResolver resolves local days once per distinct set of applying rules: a day's
// pieces depend only on which rules apply to it.
type dayResolver struct {
	rules []rule
	byKey map[string][]dayPiece
	key   []byte
}

func newDayResolver(rules []rule) *dayResolver {
	return &dayResolver{rules: rules, byKey: map[string][]dayPiece{}}
}

// day returns the pieces of a local date and whether they were resolved by this call.
func (d *dayResolver) day(month, date, weekday int) ([]dayPiece, bool) {
	d.key = liveRules(d.key[:0], d.rules, month, date, weekday)
	if pieces, ok := d.byKey[string(d.key)]; ok {
		return pieces, false
	}
	pieces := resolveDay(d.rules, month, date, weekday)
	d.byKey[string(d.key)] = pieces
	return pieces, true
}

// checkComplete refuses a schedule that leaves any time of any day uncovered: every
// combination of month, weekday and date is checked (31 × 12 × 7 local days), each
// distinct set of applying rules once.
func checkComplete(rules []rule) error {
	d := newDayResolver(rules)
	for month := 1; month <= 12; month++ {
		for date := 1; date <= 31; date++ {
			for wd := 1; wd <= 7; wd++ {
				pieces, fresh := d.day(month, date, wd)
				if !fresh {
					continue
				}
				for _, p := range pieces {
					if p.rule == nil {
						return kwhouse.Invalid("incomplete_time_period", "schedule",
							"no rate covers %02d:%02d–%02d:%02d on a %s in %s (date %d)", p.from/3600, p.from%3600/60,
							p.to/3600, p.to%3600/60, time.Weekday(wd%7), time.Month(month), date)
					}
				}
			}
		}
	}
	return nil
}

// liveRules appends to dst the indices of the rules that apply on the given day.
func liveRules(dst []byte, rules []rule, month, date, weekday int) []byte {
	for i := range rules {
		if rules[i].applies(month, date, weekday) {
			dst = strconv.AppendInt(append(dst, ','), int64(i), 10)
		}
	}
	return dst
}
