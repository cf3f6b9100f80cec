package query

import (
	"math"
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
