package charges

import (
	"testing"
	"time"
)

// BenchmarkComputeMonthByDay is one London location's bill of June 2024 by local day (31
// buckets, energy per day, a standing charge, a demand entry and tax): a fleet answer of
// 1,000 locations computes 1,000 of them.
func BenchmarkComputeMonthByDay(b *testing.B) {
	zone, _ := time.LoadLocation("Europe/London")
	t := Tariff{ID: "t", Key: "k", Zone: zone, From: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Standing: 0.5, TaxPercent: 5,
		Demand: []Demand{{Covers: func(time.Time) bool { return true }, RatePerKW: 3, Interval: 15 * time.Minute, MinimumKW: 2.5}}}
	req := Request{Tariffs: []Tariff{t}, From: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)}
	for d := 0; d < 31; d++ {
		s := time.Date(2024, 5, 31+d, 23, 0, 0, 0, time.UTC)
		req.Buckets = append(req.Buckets, Bucket{Start: s, End: s.Add(24 * time.Hour)})
		req.Energy = append(req.Energy, Energy{At: s, TariffID: "t", Money: 1}, Energy{At: s, TariffID: "t", Money: 0.5})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Compute(req)
	}
}

// BenchmarkMonthPeaksYear measures the peaks of each month of 2024 of one London location
// from its year of half-hourly readings (17,616 with the day before), as an answer that
// finds none of them kept does: each month from its own readings (MonthReadings).
func BenchmarkMonthPeaksYear(b *testing.B) {
	zone, _ := time.LoadLocation("Europe/London")
	t := &Tariff{Zone: zone, From: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		Demand: []Demand{{Covers: func(time.Time) bool { return true }, RatePerKW: 3, Interval: 15 * time.Minute, MinimumKW: 2.5}}}
	var rs []Reading
	s := time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 17568+48; i++ {
		st := s.Add(time.Duration(i) * 30 * time.Minute)
		rs = append(rs, Reading{Start: st, End: st.Add(30 * time.Minute), Wh: float64(i % 1000)})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for m := 1; m <= 12; m++ {
			st := time.Date(2024, time.Month(m), 1, 0, 0, 0, 0, zone)
			m := Bucket{Start: st, End: st.AddDate(0, 1, 0)}
			MonthPeaks(t, m, MonthReadings(rs, m))
		}
	}
}

// BenchmarkComputeYearByMonth is one London location's bill of 2024 by local month (12
// buckets, energy per month, a standing charge, a demand entry with each month's peaks
// given, and tax): a fleet answer's year of 1,000 locations computes 1,000 of them.
func BenchmarkComputeYearByMonth(b *testing.B) {
	zone, _ := time.LoadLocation("Europe/London")
	t := Tariff{ID: "t", Key: "k", Zone: zone, From: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Standing: 0.5, TaxPercent: 5,
		Demand: []Demand{{Covers: func(time.Time) bool { return true }, RatePerKW: 3, Interval: 15 * time.Minute, MinimumKW: 2.5}}}
	req := Request{Tariffs: []Tariff{t}, From: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		MonthBuckets: true}
	for m := 1; m <= 12; m++ {
		s := time.Date(2024, time.Month(m), 1, 0, 0, 0, 0, zone)
		req.Buckets = append(req.Buckets, Bucket{Start: s, End: s.AddDate(0, 1, 0)})
		req.Energy = append(req.Energy, Energy{At: s, TariffID: "t", Money: 1}, Energy{At: s, TariffID: "t", Money: 0.5})
	}
	req.Months = DemandMonths(req.Tariffs, req.From, req.To, true)
	for i := range req.Months {
		req.Months[i].Peaks = []float64{3}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Compute(req)
	}
}
