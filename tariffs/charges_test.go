package tariffs

import (
	"testing"
	"time"
)

// A demand charge's months, days and hours follow the schedule grammar: named months,
// Weekday, and a range that wraps within its date.
func TestDemandChargeWindow(t *testing.T) {
	rate := 1.0
	d := DemandCharge{Months: []string{"Jun", "July"}, RatePerKW: &rate, DaysAndHours: []DemandHours{
		{Days: []DayName{"Weekday"}, Hours: []DemandHourRange{{"12:00:00", "18:00:00"}}},
		{Days: []DayName{"7"}, Hours: []DemandHourRange{{"22:00:00", "06:00:00"}}},
	}}
	got, err := d.compile("demand_charges[0]")
	if err != nil {
		t.Fatal(err)
	}
	if got.Interval != 15*time.Minute || got.RatePerKW != 1 {
		t.Errorf("compiled %+v", got)
	}
	at := func(s string) time.Time { x, _ := time.Parse("2006-01-02 15:04", s); return x }
	for s, want := range map[string]bool{
		"2024-06-04 12:00": true,  // Tuesday on peak
		"2024-06-04 18:00": false, // valid_to is excluded
		"2024-06-04 11:45": false,
		"2024-06-08 13:00": false, // Saturday
		"2024-06-09 23:00": true,  // Sunday, wrapped range's evening
		"2024-06-09 05:45": true,  // Sunday, wrapped range's morning (same date)
		"2024-06-10 05:45": false, // Monday morning: the wrap does not reach past its date
		"2024-08-06 13:00": false, // August
		"2024-07-02 13:00": true,
	} {
		if got.Covers(at(s)) != want {
			t.Errorf("%s covered: %v, want %v", s, !want, want)
		}
	}
	all, err := (&DemandCharge{RatePerKW: &rate}).compile("x")
	if err != nil || !all.Covers(at("2024-02-03 03:00")) {
		t.Errorf("no months, days or hours covers every time: %v", err)
	}
}
