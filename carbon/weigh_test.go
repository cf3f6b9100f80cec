package carbon

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func unix(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func TestWeighHandComputed(t *testing.T) {
	half := []Interval{
		{unix("2024-01-10T10:00:00Z"), unix("2024-01-10T10:30:00Z"), 200},
		{unix("2024-01-10T10:30:00Z"), unix("2024-01-10T11:00:00Z"), 100},
		// 11:00–11:30 missing
		{unix("2024-01-10T11:30:00Z"), unix("2024-01-10T12:00:00Z"), 50},
	}
	for _, tc := range []struct {
		name   string
		rs, re string
		wh     float64
		grams  float64
		conf   float64
	}{
		// 1 kWh over 10:15–10:45: half at 200, half at 100 = 0.5 × 200 + 0.5 × 100 = 150 g.
		{"straddles two intervals", "2024-01-10T10:15:00Z", "2024-01-10T10:45:00Z", 1000, 150, 1},
		// 3 kWh over 10:00–10:30 at 200 = 600 g.
		{"inside one", "2024-01-10T10:00:00Z", "2024-01-10T10:30:00Z", 3000, 600, 1},
		// 2 kWh over 10:30–11:30: 1 kWh at 100, 1 kWh with no intensity = 100 g, confidence 0.
		{"reaches a gap", "2024-01-10T10:30:00Z", "2024-01-10T11:30:00Z", 2000, 100, 0},
		// 1 kWh over 11:00–11:30: nothing known: 0 g, confidence 0.
		{"all missing", "2024-01-10T11:00:00Z", "2024-01-10T11:30:00Z", 1000, 0, 0},
		// 4 kWh over 09:00–13:00: 0.5 × 200 + 0.5 × 100 + 0.5 × 50 (1 kWh an hour) = 175 g.
		{"wider than the series", "2024-01-10T09:00:00Z", "2024-01-10T13:00:00Z", 4000, 175, 0},
	} {
		got := Weigh(unix(tc.rs), unix(tc.re), tc.wh, half)
		if math.Abs(got.Grams-tc.grams) > 1e-9 || got.Confidence != tc.conf {
			t.Errorf("%s: %+v, want %g g confidence %g", tc.name, got, tc.grams, tc.conf)
		}
	}
}

// A fall-back day in London has 25 hours: a day-long record spreads its energy over 25 h
// of intensities, each hour weighing 1/25 of it.
func TestWeighFallBackDay(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	start := time.Date(2024, 10, 27, 0, 0, 0, 0, london).Unix()
	end := time.Date(2024, 10, 28, 0, 0, 0, 0, london).Unix()
	if end-start != 25*3600 {
		t.Fatalf("the fall-back day is %d s long", end-start)
	}
	var ivs []Interval
	for h := int64(0); h < 25; h++ {
		ivs = append(ivs, Interval{start + h*3600, start + (h+1)*3600, float64(100 + h)}) // 100..124 g/kWh
	}
	// 25 kWh: 1 kWh an hour × Σ(100..124) = 2,800 g.
	if got := Weigh(start, end, 25000, ivs); math.Abs(got.Grams-2800) > 1e-9 || got.Confidence != 1 {
		t.Errorf("fall-back day: %+v, want 2800 g confidence 1", got)
	}
}

func TestCutCoversTheSpanExactly(t *testing.T) {
	ivs := []Interval{{10, 20, 1}, {30, 40, 2}}
	got := fmt.Sprint(Cut(5, 35, ivs))
	want := "[{5 10 0 false} {10 20 1 true} {20 30 0 false} {30 35 2 true}]"
	if got != want {
		t.Errorf("Cut(5, 35) = %s, want %s", got, want)
	}
	if got := fmt.Sprint(Cut(12, 18, ivs)); got != "[{12 18 1 true}]" {
		t.Errorf("Cut inside one interval = %s", got)
	}
	if got := fmt.Sprint(Cut(50, 60, ivs)); got != "[{50 60 0 false}]" {
		t.Errorf("Cut after the series = %s", got)
	}
}
