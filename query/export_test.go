package query

import (
	"context"
	"time"
)

// JoinOnly returns a Pricer like c that prices every window through the JOIN of fleet.sql,
// the path tiered tariffs and long market windows take.
func JoinOnly(c *Pricer) *Pricer {
	d := *c
	d.joinOnly = true
	return &d
}

// FinalAlways returns a Pricer like c whose fleet array queries read with FINAL however
// small the batch.
func FinalAlways(c *Pricer) *Pricer {
	d := *c
	d.finalFrom = 1
	return &d
}

// DedupAlways returns a Pricer like c whose fleet queries deduplicate readings at once
// rather than after a read that found re-sent ones.
func DedupAlways(c *Pricer) *Pricer {
	d := *c
	d.dedupFirst = true
	return &d
}

// WithoutHints returns a Pricer like c that never skips the undeduplicated first read of a
// fleet query, however dirty earlier reads were: every query takes the path under test.
func WithoutHints(c *Pricer) *Pricer {
	d := *c
	d.hints = nil
	return &d
}

// MeasureFromChangedDays makes c's answers measure every stale demand month that has kept
// days from its first changed day, however few they are (a pricer pass's way). Call it
// before c answers.
func MeasureFromChangedDays(c *Pricer) { c.wholeStale = 0 }

// WithoutBuckets returns a Pricer like c that prices every fleet bucket afresh.
func WithoutBuckets(c *Pricer) *Pricer {
	d := *c
	d.buckets = nil
	return &d
}

// WithBuckets returns a Pricer like c that keeps priced buckets, with counts of its own.
func WithBuckets(c *Pricer) *Pricer {
	d := *c
	d.buckets = &bucketStore{versions: clockVersions{now: time.Now}}
	return &d
}

// WaitAnswerStores waits for the answers c is storing in its answer cache and the priced
// buckets it is writing back: what its answers do after they are sent.
func WaitAnswerStores(c *Pricer) {
	if c.answers != nil {
		c.answers.stores.Wait()
	}
	if c.buckets != nil {
		_ = c.buckets.writes.waitAll(context.Background())
	}
}
