package tariffs

import (
	"testing"

	"github.com/kwhouse/kwhouse"
)

// A year claimed by one request is waited for by the next, which claims it itself once
// the first has landed without storing it; other years go to whoever asks first.
func TestYearFlightsShareAYearBetweenRequests(t *testing.T) {
	y := newYearFlights()
	sc := kwhouse.Scope{AccountID: "acc_a"}
	k2024, k2025 := yearKey{sc, "rts_x", 2024}, yearKey{sc, "rts_x", 2025}
	first, owned, others := y.claim([]yearKey{k2024})
	if first == nil || len(owned) != 1 || len(others) != 0 {
		t.Fatalf("first claim: flight %v, owned %v, others %d", first, owned, len(others))
	}
	second, owned2, others2 := y.claim([]yearKey{k2024, k2025})
	if second == nil || len(owned2) != 1 || owned2[0] != k2025 || len(others2) != 1 || others2[0] != first {
		t.Fatalf("second claim: owned %v, waits for %d flights; want 2025 owned and the first flight waited for", owned2, len(others2))
	}
	select {
	case <-first.done:
		t.Fatal("the first flight is done before it landed")
	default:
	}
	y.land(first, owned)
	<-first.done // a waiter wakes
	third, owned3, others3 := y.claim([]yearKey{k2024, k2025})
	if third == nil || len(owned3) != 1 || owned3[0] != k2024 || len(others3) != 1 || others3[0] != second {
		t.Fatalf("after the first landed: owned %v, waits for %d; want 2024 claimed again and 2025's flight waited for", owned3, len(others3))
	}
	// Another scope's year is its own.
	if f, o, w := y.claim([]yearKey{{kwhouse.Scope{AccountID: "acc_b"}, "rts_x", 2025}}); f == nil || len(o) != 1 || len(w) != 0 {
		t.Fatalf("another scope: owned %v, waits for %d", o, len(w))
	}
}
