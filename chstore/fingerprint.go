package chstore

import "fmt"

// Change-count fingerprints (docs/costs.md, "Priced buckets"): the SQL pieces that both the
// schema's materialized views and the query package's reads render, so a fingerprint
// written on ingest and one computed at read time are made by one definition.

// DayWeight is the weight of a date (the SQL expression date) in a fingerprint of change
// counts: an odd pseudo-random UInt64 of its day number, so a sum of count × weight
// differs whenever one date's count does, and two dates' differences cancel with odds of
// about 2^-63 (UInt64 sums wrap).
func DayWeight(date string) string {
	return fmt.Sprintf("bitOr(intHash64(toUInt32(%s)), toUInt64(1))", date)
}

// A month's reach starts ReachBefore days before its first day and ends ReachAfter days
// after its last (ReachMonths).
const (
	ReachBefore = 4
	ReachAfter  = 2
)

// ReachMonths are the months whose reach holds a UTC date (the SQL expression date), as an
// array of their first days: month M's reach is the UTC dates [first(M) - 4 days,
// last(M) + 2 days], every date a change count of local month M in any zone (|offset| <
// 24 h) can come from (count_ranges in query/buckets.sql: a date's local days, a tier
// chain's three days before the month, a price change's day either side). A date lies in
// the reach of one month or two.
func ReachMonths(date string) string {
	a := fmt.Sprintf("toStartOfMonth(addDays(%s, -%d))", date, ReachAfter)
	b := fmt.Sprintf("toStartOfMonth(addDays(%s, %d))", date, ReachBefore)
	return fmt.Sprintf("if(%[1]s = %[2]s, [%[1]s], [%[1]s, %[2]s])", a, b)
}
