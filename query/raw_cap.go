package query

import "github.com/kwhouse/kwhouse"

// DefaultMaxRawItems is the default bound on the records of an unaggregated interval
// answer (config costs.max_raw_items).
const DefaultMaxRawItems = 10_000

// SetMaxRawItems bounds the records of an unaggregated POST /costs/interval answer and of
// a POST /costs/session answer: more is refused with errTooManyItems. n < 1 keeps the
// default.
func (c *Pricer) SetMaxRawItems(n int) {
	if n > 0 {
		c.maxRawItems = n
	}
}

// errTooManyItems is the 400 of a raw window, or of a session, holding more than max
// records.
func errTooManyItems(max int, session string) error {
	if session != "" {
		return kwhouse.Invalid("too_many_items", "id",
			"session %s holds more than %d records, the most an answer lists: price its window with POST /costs/interval and aggregation=DAY or MONTH", session, max)
	}
	return kwhouse.Invalid("too_many_items", "end_time",
		"the window holds more than %d records, the most an answer without aggregation lists: narrow the window or ask for aggregation=DAY or MONTH", max)
}
