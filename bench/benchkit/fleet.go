package benchkit

import "time"

// TOUSchedule is the time-of-use schedule of the benchmarks' fleet fixtures (bench/costs,
// bench/modes), as the API's tariff "schedule" JSON: night 00:00–07:00 0.09, day 0.25,
// peak 16:00–19:00 0.38 (weekdays), weekend day 0.22.
const TOUSchedule = `[{"months":["All"],"days_and_hours":[
 {"days":["Weekday"],"hours":[{"valid_from":"00:00:00","valid_to":"07:00:00","rate":[{"fixed":0.09}]},
   {"valid_from":"07:00:00","valid_to":"16:00:00","rate":[{"fixed":0.25}]},
   {"valid_from":"16:00:00","valid_to":"19:00:00","rate":[{"fixed":0.38}]},
   {"valid_from":"19:00:00","valid_to":"00:00:00","rate":[{"fixed":0.25}]}]},
 {"days":["Weekend"],"hours":[{"valid_from":"00:00:00","valid_to":"07:00:00","rate":[{"fixed":0.09}]},
   {"valid_from":"07:00:00","valid_to":"00:00:00","rate":[{"fixed":0.22}]}]}]}]`

// FleetWh is the energy, in Wh, of location i's half-hour starting at t in the fleet
// fixtures: 150–549 Wh, varying by location, hour and day.
func FleetWh(i int, t time.Time) float64 {
	return 150 + float64((i*37+t.Hour()*11+t.Day()*7)%400)
}
