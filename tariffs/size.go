package tariffs

import (
	"fmt"

	"github.com/kwhouse/kwhouse"
)

// Schedule size limits (docs/api.md, "Tariff schedules"). Expansion work grows with the
// periods of a day, so a schedule is bounded before anything is computed from it. Real
// tariffs stay far below: a price every 15 minutes is 96 periods a day, and a tariff
// with a different half-hourly profile for each month and three kinds of day has 1,728.
const (
	// MaxHoursPerEntry bounds the periods of one days_and_hours entry's hours list.
	MaxHoursPerEntry = 96
	// MaxSchedulePeriods bounds the periods (hours entries) of a whole schedule.
	MaxSchedulePeriods = 2048
	// MaxBands bounds the tiers of one rate.
	MaxBands = 16
)

// checkSize refuses a schedule past the size limits, naming the list that is too long.
// It runs before the schedule is compiled, on tariffs being created; stored tariffs are
// not re-checked.
func (s Schedule) checkSize() error {
	total := 0
	for i, e := range s {
		for j, dh := range e.DaysAndHours {
			p := fmt.Sprintf("schedule[%d].days_and_hours[%d].hours", i, j)
			if len(dh.Hours) > MaxHoursPerEntry {
				return kwhouse.Invalid("too_many_periods", p,
					"at most %d periods in one hours list (a price every 15 minutes); got %d", MaxHoursPerEntry, len(dh.Hours))
			}
			for k, h := range dh.Hours {
				if len(h.Rate) > MaxBands {
					return kwhouse.Invalid("too_many_bands", fmt.Sprintf("%s[%d].rate", p, k),
						"at most %d bands in one rate; got %d", MaxBands, len(h.Rate))
				}
			}
			total += len(dh.Hours)
		}
	}
	if total > MaxSchedulePeriods {
		return kwhouse.Invalid("too_many_periods", "schedule",
			"at most %d periods (hours entries) in a schedule; got %d", MaxSchedulePeriods, total)
	}
	return nil
}
