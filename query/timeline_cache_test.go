package query

import "testing"

func TestSpanOfHoldsTheWindowAndIsSharedByTheDaysWindows(t *testing.T) {
	const day = 86400
	d0 := int64(20_000) * day // a UTC midnight
	for _, c := range []struct{ w0, w1, s0, s1 int64 }{
		{d0 + 3600, d0 + day + 3600, d0, d0 + 3*day},         // next 24 hours
		{d0 + 23*3600, d0 + 3*day, d0, d0 + 3*day},           // ends on the span's end
		{d0 + 3600, d0 + 7*day + 3600, d0, d0 + 9*day},       // next 7 days
		{d0 + 20*3600, d0 + 7*day + 20*3600, d0, d0 + 9*day}, // later the same day: the same span
		{d0 - 3600, d0 + 2*day, d0 - day, d0 + 2*day},        // before midnight: the day before's
		{-day - 3600, -3600, -2 * day, -2*day + 3*day},       // before 1970
	} {
		s0, s1 := spanOf(c.w0, c.w1)
		if s0 != c.s0 || s1 != c.s1 || s0 > c.w0 || s1 < c.w1 {
			t.Errorf("spanOf(%d, %d) = [%d, %d), want [%d, %d)", c.w0, c.w1, s0, s1, c.s0, c.s1)
		}
	}
}
