package query

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

var (
	bucketStoredStmt = chstore.Register("query.bucket_stored", "buckets.sql: the stored priced buckets of a batch, every version")
	bucketCountsStmt = chstore.Register("query.bucket_counts", "buckets.sql: the change counts a batch's buckets depend on, per UTC date")
	bucketStoredSQL  = renderFixed("bucket_stored")
	bucketCountsSQL  = renderFixed("bucket_counts")
)

// renderFixed renders a template that has no optional parts, once.
func renderFixed(name string) string {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, nil); err != nil {
		panic(err)
	}
	return buf.String()
}

// bucketState is a local day of a location (or device) that has a stored bucket or any
// reading counted: the latest stored bucket beside the change counts there are now.
type bucketState struct {
	Loc, Dev                 string
	Day                      time.Time // the local date, at UTC midnight
	Stored                   uint8
	DayStart                 uint32
	Empty                    uint8
	NImport, NExport         uint64
	Energy, Money            float64
	MoneyCom, MoneyNon       float64
	Confidence               float64
	ReadingsSeen, PricesSeen uint64
	ReadingsNow, PricesNow   uint64
	Valid                    uint8
}

func (s bucketState) sum() fleetSum {
	return fleetSum{Loc: s.Loc, Dev: s.Dev, Key: s.DayStart, Energy: s.Energy, Money: s.Money, MoneyCom: s.MoneyCom,
		MoneyNon: s.MoneyNon, Confidence: s.Confidence, NImport: s.NImport, NExport: s.NExport}
}

// storedBucket is a row of bucket_stored (buckets.sql).
type storedBucket struct {
	state    bucketState
	day      uint32 // day number of state.Day
	sameKind uint8  // priced in the batch's zone, tiered as the batch is
	version  uint64
}

// countRow is a row of bucket_counts (buckets.sql).
type countRow struct {
	kind     uint8 // 0 readings, 1 prices
	loc, dev string
	day      uint32 // UTC date, days since 1970-01-01 (0 for prices: every date)
	n        uint64
}

// bucketStates reads the batch's buckets of a run of days beside their counts now, in
// (location, device, day) order; the stored buckets and the counts are read side by side.
func (c *Pricer) bucketStates(ctx context.Context, scope kwhouse.Scope, daily FleetRequest, b fleetBatch,
	zone *time.Location, run dayRun) ([]bucketState, error) {
	first, end := run.first, run.end
	const day = 24 * time.Hour
	date := func(t time.Time) string { return t.Format(time.DateOnly) }
	last := end.Add(-day / 2) // the last whole day's date (a local day lasts 23–25 hours)
	chain := time.Duration(0)
	if b.tiered {
		chain = 35 * day // a count reaches later days of its tier chain (countsByDay)
	}
	args := append([]any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("devices", daily.GroupBy == GroupDevice),
		chstore.Named("dir", daily.Direction), chstore.Named("tz", b.zone), chstore.Named("chained", b.tiered),
		chstore.Named("d0", date(first)), chstore.Named("d1", date(last)),
		chstore.Named("u0", date(first.UTC().Add(-3*day-chain))), chstore.Named("u1", date(last.UTC().Add(3*day))),
		chstore.Named("p0", date(first.UTC().Add(-3*day))), chstore.Named("p1", date(last.UTC().Add(3*day)))}, run.spanArgs()...)
	ctx = chstore.WithExternal(ctx, chstore.External{Name: "_locs",
		Columns: []chstore.ExternalColumn{{Name: "location_id", Type: "String", Values: b.ids}}})
	var stored []storedBucket
	var counts []countRow
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { stored, err = c.storedBuckets(gctx, args); return err })
	g.Go(func() (err error) { counts, err = c.changeCounts(gctx, args); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	d0, d1 := dayNumber(first), dayNumber(last)
	return mergeStates(latestBuckets(stored), countsByDay(counts, zone, b.tiered, d0, d1)), nil
}

func (c *Pricer) storedBuckets(ctx context.Context, args []any) ([]storedBucket, error) {
	rows, err := c.db.Query(ctx, bucketStoredStmt.With(bucketStoredSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("priced buckets: %w", err)
	}
	defer rows.Close()
	var out []storedBucket
	for rows.Next() {
		var b storedBucket
		var d uint32
		s := &b.state
		if err := rows.Scan(&s.Loc, &s.Dev, &d, &b.sameKind, &s.DayStart, &s.Empty, &s.NImport, &s.NExport,
			&s.Energy, &s.Money, &s.MoneyCom, &s.MoneyNon, &s.Confidence, &s.ReadingsSeen, &s.PricesSeen, &b.version); err != nil {
			return nil, fmt.Errorf("scan priced bucket: %w", err)
		}
		s.Day, s.Stored, b.day = dateOf(d), 1, d
		out = append(out, b)
	}
	return out, rows.Err()
}

func (c *Pricer) changeCounts(ctx context.Context, args []any) ([]countRow, error) {
	rows, err := c.db.Query(ctx, bucketCountsStmt.With(bucketCountsSQL), args...)
	if err != nil {
		return nil, fmt.Errorf("change counts of priced buckets: %w", err)
	}
	defer rows.Close()
	var out []countRow
	for rows.Next() {
		var r countRow
		if err := rows.Scan(&r.kind, &r.loc, &r.dev, &r.day, &r.n); err != nil {
			return nil, fmt.Errorf("scan change count: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// stateKey names a day of a location or device by day number.
type stateKey struct {
	loc, dev string
	day      uint32
}

// latestBuckets keeps each bucket's latest version, whole (the first read of equal ones).
func latestBuckets(stored []storedBucket) map[stateKey]storedBucket {
	out := make(map[stateKey]storedBucket, len(stored))
	for _, b := range stored {
		k := stateKey{b.state.Loc, b.state.Dev, b.day}
		if have, ok := out[k]; !ok || b.version > have.version {
			out[k] = b
		}
	}
	return out
}

// dayCounts are the change counts per local day of a run: records written per (location,
// device, day), price changes per (location, day) and of every day per location.
type dayCounts struct {
	readings map[stateKey]uint64
	dated    map[stateKey]uint64 // dev ""
	every    map[string]uint64
}

// countsByDay adds up counts per UTC date into the local days [d0, d1] of zone that they
// touch (day numbers). A count of records reaches the one or two local days its UTC date
// overlaps, and in a tiered batch every later day of the tier chain too (a tiered day
// depends on the days before it from three days before its local month: the tier period's
// start in any tariff zone, less the lookback's day). A bucket's records may end up to a
// day after it (buckets whose records reach further are not kept), so a price change on a
// UTC date touches the local days that overlap [date - 1 day, date + 1 day).
func countsByDay(rows []countRow, zone *time.Location, chained bool, d0, d1 uint32) dayCounts {
	out := dayCounts{readings: map[stateKey]uint64{}, dated: map[stateKey]uint64{}, every: map[string]uint64{}}
	local := map[int64]uint32{} // Unix time → its local day number (a batch has few distinct ones)
	localDay := func(u int64) uint32 {
		d, ok := local[u]
		if !ok {
			d = dayNumber(time.Unix(u, 0).In(zone))
			local[u] = d
		}
		return d
	}
	add := func(m map[stateKey]uint64, loc, dev string, from, to uint32, n uint64) {
		for d := max(from, d0); d <= min(to, d1); d++ {
			m[stateKey{loc, dev, d}] += n
		}
	}
	for _, r := range rows {
		u0 := int64(r.day) * 86400
		switch {
		case r.kind == 1 && r.day == 0:
			out.every[r.loc] += r.n
		case r.kind == 1:
			add(out.dated, r.loc, "", localDay(u0-86400), localDay(u0+86399), r.n)
		default:
			l0, l1 := localDay(u0), localDay(u0+86399)
			for l := l0; l <= l1; l++ {
				add(out.readings, r.loc, r.dev, l, l+chainReach(l, chained)-1, r.n)
			}
		}
	}
	return out
}

// chainReach is how many days from local day d (a day number) a count of d reaches: 1,
// or in a tier chain to the end of the local month of d + 3 days.
func chainReach(d uint32, chained bool) uint32 {
	if !chained {
		return 1
	}
	t := dateOf(d + 3)
	return uint32(time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC).Unix()/86400) - d
}

// mergeStates puts each day that has a stored bucket or any reading counted beside its
// counts now, in (location, device, day) order. A bucket is valid when it was priced in
// the batch's zone, tiered as the batch is now, under the counts there are now.
func mergeStates(stored map[stateKey]storedBucket, n dayCounts) []bucketState {
	keys := make([]stateKey, 0, max(len(stored), len(n.readings)))
	for k := range stored {
		keys = append(keys, k)
	}
	for k := range n.readings {
		if _, ok := stored[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b stateKey) int {
		if c := strings.Compare(a.loc, b.loc); c != 0 {
			return c
		}
		if c := strings.Compare(a.dev, b.dev); c != 0 {
			return c
		}
		return cmp.Compare(a.day, b.day)
	})
	out := make([]bucketState, len(keys))
	for i, k := range keys {
		b, ok := stored[k]
		s := &out[i]
		if ok {
			*s = b.state
		} else {
			s.Loc, s.Dev, s.Day = k.loc, k.dev, dateOf(k.day)
		}
		s.ReadingsNow = n.readings[k]
		s.PricesNow = n.dated[stateKey{k.loc, "", k.day}] + n.every[k.loc]
		if ok && b.sameKind == 1 && s.ReadingsSeen == s.ReadingsNow && s.PricesSeen == s.PricesNow {
			s.Valid = 1
		}
	}
	return out
}

// dayNumber is the date of t (in its own zone) as days since 1970-01-01.
func dayNumber(t time.Time) uint32 {
	y, m, d := t.Date()
	return uint32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// dateOf is day number d at UTC midnight.
func dateOf(d uint32) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }
