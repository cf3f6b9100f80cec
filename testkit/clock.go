package testkit

import (
	"sync/atomic"
	"time"
)

// Clock is the real clock shifted by an offset the test can move forward.
type Clock struct{ offset atomic.Int64 }

// Now returns the shifted time.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
