package query

import "github.com/kwhouse/kwhouse"

// DefaultMaxRawItems is the default bound on the records of an unaggregated interval
// answer (config costs.max_raw_items).
const DefaultMaxRawItems = 10_000

// SetMaxRawItems bounds the records of an unaggregated POST /costs/interval answer: a
// window holding more is refused with errTooManyItems. n < 1 keeps the default.
func (c *Pricer) SetMaxRawItems(n int) {
	if n > 0 {
		c.maxRawItems = n
	}
}

// errTooManyItems is the 400 of a raw window holding more than max records.
func errTooManyItems(max int) error {
	return kwhouse.Invalid("too_many_items", "end_time",
		"the window holds more than %d records, the most an answer without aggregation lists: narrow the window or ask for aggregation=DAY or MONTH", max)
}
