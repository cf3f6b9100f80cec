package charges

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.9f, want %.9f", what, got, want)
	}
}

func always(time.Time) bool { return true }

// Sydney's October 2024 has a 23-hour day (6 Oct): still 31 standing charges.
func TestStandingPerLocalDayOverDST(t *testing.T) {
	syd := zone(t, "Australia/Sydney")
	from := time.Date(2024, 10, 1, 0, 0, 0, 0, syd)
	to := time.Date(2024, 11, 1, 0, 0, 0, 0, syd)
	tr := Tariff{ID: "a", Zone: syd, From: from.AddDate(-1, 0, 0), To: to.AddDate(1, 0, 0), Standing: 1.1}
	days := []Bucket{}
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		days = append(days, Bucket{d, d.AddDate(0, 0, 1)})
	}
	top, each := Compute(Request{Tariffs: []Tariff{tr}, From: from, To: to, Buckets: days})
	near(t, "standing", top.Standing, 31*1.1)
	near(t, "total", top.Total, 31*1.1)
	if len(each) != 31 {
		t.Fatalf("%d buckets", len(each))
	}
	near(t, "6 Oct (23 h)", each[5].Standing, 1.1)
	// A window starting at noon of the 1st does not count the 1st.
	top, _ = Compute(Request{Tariffs: []Tariff{tr}, From: from.Add(12 * time.Hour), To: to})
	near(t, "from noon", top.Standing, 30*1.1)
}

// A 30-minute reading straddling two 15-minute intervals is split by time; Kolkata's
// hour intervals start at local :00, i.e. :30 UTC.
func TestIntervalEnergyLocalClock(t *testing.T) {
	utc := time.UTC
	t0 := time.Date(2024, 1, 1, 0, 10, 0, 0, utc)
	got := IntervalEnergy([]Reading{{t0, t0.Add(30 * time.Minute), 600}}, utc, 15*time.Minute, t0.Add(-time.Hour), t0.Add(time.Hour))
	near(t, "00:00", got[time.Date(2024, 1, 1, 0, 0, 0, 0, utc).Unix()], 100)
	near(t, "00:15", got[time.Date(2024, 1, 1, 0, 15, 0, 0, utc).Unix()], 300)
	near(t, "00:30", got[time.Date(2024, 1, 1, 0, 30, 0, 0, utc).Unix()], 200)
	kol := zone(t, "Asia/Kolkata")
	r := Reading{time.Date(2024, 1, 1, 0, 0, 0, 0, utc), time.Date(2024, 1, 1, 1, 0, 0, 0, utc), 1000}
	got = IntervalEnergy([]Reading{r}, kol, time.Hour, r.Start.Add(-2*time.Hour), r.End.Add(2*time.Hour))
	near(t, "23:30 UTC", got[time.Date(2023, 12, 31, 23, 30, 0, 0, utc).Unix()], 500)
	near(t, "00:30 UTC", got[time.Date(2024, 1, 1, 0, 30, 0, 0, utc).Unix()], 500)
}

// A month's demand counts the part inside it of readings starting up to a day before it
// (DemandLookback), as the readings read to measure it are (docs/costs.md, "Bill
// charges"), whatever else the readings given hold. 2 kWh over 31 March 23:30–1 April
// 00:30 UTC is 2 kW in April's first two quarters; 96 kWh over two days is 2 kW in every
// quarter, and adds to them (4 kW) only when it starts at most a day before April.
func TestMonthPeaksCountReadingsStartingUpToADayBefore(t *testing.T) {
	utc := time.UTC
	april := Bucket{time.Date(2024, 4, 1, 0, 0, 0, 0, utc), time.Date(2024, 5, 1, 0, 0, 0, 0, utc)}
	tr := &Tariff{Zone: utc, From: april.Start.AddDate(-1, 0, 0), To: april.End.AddDate(1, 0, 0),
		Demand: []Demand{{Covers: always, RatePerKW: 1, Interval: 15 * time.Minute}}}
	straddling := Reading{time.Date(2024, 3, 31, 23, 30, 0, 0, utc), time.Date(2024, 4, 1, 0, 30, 0, 0, utc), 2000}
	for _, c := range []struct {
		start time.Time
		peak  float64
	}{{time.Date(2024, 3, 30, 0, 30, 0, 0, utc), 2}, {time.Date(2024, 3, 31, 0, 0, 0, 0, utc), 4}} {
		long := Reading{c.start, c.start.Add(48 * time.Hour), 96000}
		near(t, "April's peak with two days of readings from "+c.start.Format(time.DateTime), MonthPeaks(tr, april, []Reading{long, straddling})[0], c.peak)
	}
}

// A US demand charge: on-peak weekdays 12:00–18:00 at 12/kW and all hours at 5/kW, in
// June 2024 (Chicago), over hourly readings.
func TestDemandOnPeakAndAllHours(t *testing.T) {
	chi := zone(t, "America/Chicago")
	m0 := time.Date(2024, 6, 1, 0, 0, 0, 0, chi)
	m1 := time.Date(2024, 7, 1, 0, 0, 0, 0, chi)
	var rs []Reading
	for h := m0; h.Before(m1); h = h.Add(time.Hour) {
		rs = append(rs, Reading{h, h.Add(time.Hour), 2000}) // 2 kW flat
	}
	// Tue 4 June 14:00: 9 kWh in an hour (9 kW, on peak); Sat 8 June 03:00: 20 kWh (20 kW).
	rs = append(rs, Reading{time.Date(2024, 6, 4, 14, 0, 0, 0, chi), time.Date(2024, 6, 4, 15, 0, 0, 0, chi), 7000})
	rs = append(rs, Reading{time.Date(2024, 6, 8, 3, 0, 0, 0, chi), time.Date(2024, 6, 8, 3, 15, 0, 0, chi), 4500})
	onPeak := func(l time.Time) bool {
		return l.Weekday() >= time.Monday && l.Weekday() <= time.Friday && l.Hour() >= 12 && l.Hour() < 18
	}
	tr := Tariff{ID: "us", Zone: chi, From: m0, To: m1.AddDate(1, 0, 0), Demand: []Demand{
		{Covers: onPeak, RatePerKW: 12, Interval: 15 * time.Minute},
		{Covers: always, RatePerKW: 5, Interval: 60 * time.Minute},
	}}
	top, each := Compute(Request{Tariffs: []Tariff{tr}, From: m0, To: m1, Buckets: []Bucket{{m0, m1}}, MonthBuckets: true, Readings: rs})
	// On peak, 15-minute: 14:00–15:00 has 9 kWh evenly: 2.25 kWh a quarter = 9 kW → 108.
	// All hours, 60-minute: 03:00–04:00 has 2 + 4.5 = 6.5 kWh = 6.5 kW; 14:00 has 9 kW → 45.
	// (The 15-minute quarter 03:00–03:15 is 0.5 + 4.5 = 5 kWh = 20 kW, but off peak.)
	near(t, "demand", top.Demand, 9*12+9*5)
	near(t, "month bucket", each[0].Demand, 9*12+9*5)
	// A window that does not hold the whole month counts no demand at the top level.
	top, _ = Compute(Request{Tariffs: []Tariff{tr}, From: m0, To: m1.Add(-time.Hour), Readings: rs})
	near(t, "partial month", top.Demand, 0)
}

// Belgium's capacity tariff: monthly peak of 15-minute mean power, 2.5 kW floor, with
// 21% VAT on energy, standing and capacity; the tariff changes on 15 February.
func TestCapacityFloorTariffChangeAndTax(t *testing.T) {
	bru := zone(t, "Europe/Brussels")
	jan := time.Date(2024, 1, 1, 0, 0, 0, 0, bru)
	feb := time.Date(2024, 2, 1, 0, 0, 0, 0, bru)
	feb15 := time.Date(2024, 2, 15, 0, 0, 0, 0, bru)
	mar := time.Date(2024, 3, 1, 0, 0, 0, 0, bru)
	capacity := func(rate float64) []Demand {
		return []Demand{{Covers: always, RatePerKW: rate, Interval: 15 * time.Minute, MinimumKW: 2.5}}
	}
	a := Tariff{ID: "a", Zone: bru, From: jan, To: feb15, Standing: 0.2, Demand: capacity(4), TaxPercent: 21}
	b := Tariff{ID: "b", Zone: bru, From: feb15, To: mar.AddDate(1, 0, 0), Standing: 0.3, Demand: capacity(5), TaxPercent: 6}
	rs := []Reading{
		{time.Date(2024, 1, 10, 18, 0, 0, 0, bru), time.Date(2024, 1, 10, 18, 15, 0, 0, bru), 450}, // 1.8 kW: the floor
		{time.Date(2024, 2, 3, 19, 0, 0, 0, bru), time.Date(2024, 2, 3, 19, 15, 0, 0, bru), 1000},  // 4 kW, tariff a
		{time.Date(2024, 2, 20, 8, 0, 0, 0, bru), time.Date(2024, 2, 20, 8, 30, 0, 0, bru), 1500},  // 3 kW, tariff b
	}
	energy := []Energy{{jan.Add(time.Hour), "a", 10}, {feb.Add(time.Hour), "a", 20}, {feb15.Add(time.Hour), "b", 30}, {feb15, "", 1}}
	req := Request{Tariffs: []Tariff{a, b}, From: jan, To: mar, Buckets: []Bucket{{jan, feb}, {feb, mar}},
		MonthBuckets: true, Energy: energy, Readings: rs}
	top, each := Compute(req)
	// January (a): energy 10, standing 31 × 0.2, demand max(1.8, 2.5) × 4 = 10; VAT 21%.
	janBase := 10 + 31*0.2 + 10
	near(t, "Jan standing", each[0].Standing, 31*0.2)
	near(t, "Jan demand", each[0].Demand, 10)
	near(t, "Jan tax", each[0].Tax, janBase*0.21)
	near(t, "Jan total", each[0].Total, janBase*1.21)
	// February: a charges 1–14 Feb (standing 14 × 0.2, demand 4 kW × 4 = 16, energy 20, 21%);
	// b charges 15–29 Feb (standing 15 × 0.3, demand max(3, 2.5) × 5 = 15, energy 30, 6%);
	// the untaxed energy 1 has no tariff.
	aFeb, bFeb := 20+14*0.2+16, 30+15*0.3+15
	near(t, "Feb energy", each[1].Energy, 51)
	near(t, "Feb standing", each[1].Standing, 14*0.2+15*0.3)
	near(t, "Feb demand", each[1].Demand, 31)
	near(t, "Feb tax", each[1].Tax, aFeb*0.21+bFeb*0.06)
	near(t, "Feb total", each[1].Total, aFeb*1.21+bFeb*1.06+1)
	near(t, "top total", top.Total, janBase*1.21+aFeb*1.21+bFeb*1.06+1)
}

// walkDays counts the local days of z starting in [lo, hi) one by one.
func walkDays(z *time.Location, lo, hi time.Time) int {
	n := 0
	y, m, d := lo.In(z).Date()
	for day := time.Date(y, m, d, 0, 0, 0, 0, z); day.Before(hi); {
		if !day.Before(lo) {
			n++
		}
		y, m, d = day.Date()
		day = time.Date(y, m, d+1, 0, 0, 0, 0, z)
	}
	return n
}

// dayIndex differences count as walking the local days one by one does, over ranges
// starting and ending at any hour, across DST changes and midnight-less days.
func TestDayIndexCountsLocalDays(t *testing.T) {
	for _, name := range []string{"Australia/Sydney", "Europe/London", "America/Santiago", "Asia/Kolkata", "UTC"} {
		z := zone(t, name)
		base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
		for a := 0; a < 24*70; a += 7 {
			for span := 0; span < 24*70; span += 13 {
				lo := base.Add(time.Duration(a) * time.Hour)
				hi := lo.Add(time.Duration(span) * time.Hour)
				if got, want := int(dayIndex(z, hi)-dayIndex(z, lo)), walkDays(z, lo, hi); got != want {
					t.Fatalf("%s [%v, %v): %d days, want %d", name, lo, hi, got, want)
				}
			}
		}
	}
}

// Each bucket's standing charge counts the days starting in it, in the window and the
// contract, for buckets of any length (some not touching: gaps between them charge no
// bucket) and a contract starting and ending inside buckets.
func TestStandingPerBucketCountsItsDays(t *testing.T) {
	z := zone(t, "America/Santiago")
	from := time.Date(2024, 3, 1, 5, 0, 0, 0, time.UTC)
	to := from.Add(80 * 24 * time.Hour)
	tr := Tariff{ID: "a", Zone: z, From: from.Add(100 * time.Hour), To: to.Add(-50 * time.Hour), Standing: 1}
	var buckets []Bucket
	for s, i := from, 0; s.Before(to); i++ {
		e := minTime(to, s.Add(time.Duration(17+i*11%97)*time.Hour))
		buckets = append(buckets, Bucket{s, e})
		s = e
		if i%5 == 4 {
			s = s.Add(time.Duration(7+i%3*13) * time.Hour)
		}
	}
	top, each := Compute(Request{Tariffs: []Tariff{tr}, From: from, To: to, Buckets: buckets})
	near(t, "top", top.Standing, float64(walkDays(z, tr.From, tr.To)))
	for i, k := range buckets {
		want := walkDays(z, maxTime(k.Start, tr.From), minTime(k.End, tr.To))
		near(t, fmt.Sprintf("bucket %d [%v, %v)", i, k.Start, k.End), each[i].Standing, float64(max(want, 0)))
	}
}
