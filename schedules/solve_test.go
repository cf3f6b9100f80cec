package schedules

import (
	"slices"
	"testing"

	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/plan"
	"github.com/kwhouse/kwhouse/query"
)

// Time is cut at window bounds and where a price, its confidence or the intensity
// changes; not between half-hours of one price.
func TestSlotsMergeEqualPricesButKeepWindowBounds(t *testing.T) {
	pr := prices{from: 0, to: 4 * 1800, rates: map[string][]query.RatePeriod{
		"IMPORT": {
			{Start: 0, End: 1800, Rate: 0.10, Confidence: 1},
			{Start: 1800, End: 3600, Rate: 0.10, Confidence: 1},       // same: merged
			{Start: 3600, End: 5400, Rate: 0.10, Confidence: 0.5},     // extrapolated: cut
			{Start: 5400, End: 4 * 1800, Rate: 0.10, Confidence: 0.5}, // same, but a window ends at 6000
		}}}
	devices := []deviceNeed{{start: 0, end: 4 * 1800}, {start: 900, end: 6000}}
	want := []plan.Slot{{Start: 0, End: 900}, {Start: 900, End: 3600}, {Start: 3600, End: 6000}, {Start: 6000, End: 7200}}
	if got := pr.slots(devices); !slices.Equal(got, want) {
		t.Errorf("slots %v, want %v", got, want)
	}
	// With intensities read, a change of intensity cuts too.
	pr.carbon = []carbon.Piece{{Start: 0, End: 1200, Intensity: 100, Covered: true},
		{Start: 1200, End: 2400, Intensity: 90, Covered: true}, {Start: 2400, End: 7200, Intensity: 90, Covered: true}}
	want = []plan.Slot{{Start: 0, End: 900}, {Start: 900, End: 1200}, {Start: 1200, End: 3600}, {Start: 3600, End: 6000}, {Start: 6000, End: 7200}}
	if got := pr.slots(devices); !slices.Equal(got, want) {
		t.Errorf("with intensities: slots %v, want %v", got, want)
	}
}
