package query

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// A tie at the 7th decimal is written the same whichever side of it a float sum landed:
// one server and a cluster add a day's terms in different orders.
func TestAmountTiesRoundTheSameInEveryOrder(t *testing.T) {
	tie := 2.4065475
	for _, v := range []float64{tie, math.Nextafter(tie, 0), math.Nextafter(math.Nextafter(tie, 0), 0), math.Nextafter(tie, 10)} {
		got, err := Amount(v).AppendText(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "2.406548" {
			t.Errorf("%.17g written %s, want 2.406548", v, got)
		}
	}
	for v, want := range map[float64]string{2.4065474: "2.406547", -2.4065475: "-2.406548", 0.0000004: "0", 1234567.1234565: "1234567.123457"} {
		got, _ := Amount(v).AppendText(nil)
		if string(got) != want {
			t.Errorf("%.17g written %s, want %s", v, got, want)
		}
	}
}

// An amount is written as strconv writes its rounded float, shortest form, at every
// magnitude: whole millionths near every power of ten, either side of ties, and random
// amounts from a billionth to 10¹⁸.
func TestAmountTextIsTheShortestFormOfItsRoundedFloat(t *testing.T) {
	want := func(a Amount) string {
		v := a.Rounded()
		if v == 0 {
			v = 0
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	var cases []float64
	for e := -9; e <= 18; e++ {
		p := math.Pow(10, float64(e))
		for _, v := range []float64{p, p - 1e-6, p + 1e-6, p * 0.999999, p * 1.000001, p * 1.5, p * 0.0000005, p*3 + 0.0000005} {
			cases = append(cases, v, -v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		cases = append(cases, (r.Float64()*2-1)*math.Pow(10, float64(r.IntN(28)-9)))
	}
	cases = append(cases, 0, math.Copysign(0, -1), 999999999.9999995, 1e9-1e-6, math.MaxFloat64, -math.MaxFloat64)
	for _, v := range cases {
		got, err := Amount(v).AppendText(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want(Amount(v)) {
			t.Fatalf("%.17g written %s, want %s", v, got, want(Amount(v)))
		}
	}
}
