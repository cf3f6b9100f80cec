package ingest

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestSkipPlainStopsAtTheFirstSpecialByte: the 8-byte scan stops in the word holding the
// first '"', '\\' or control character, never past it, at every position and byte value.
func TestSkipPlainStopsAtTheFirstSpecialByte(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 20000; n++ {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0xe0)) // plain, non-ASCII included
			if b[i] == '"' || b[i] == '\\' {
				b[i] = 'x'
			}
		}
		first := len(b)
		if rng.IntN(4) > 0 {
			first = rng.IntN(len(b))
			b[first] = byte(rng.IntN(256))
			if !special(b[first]) {
				b[first] = []byte{'"', '\\', 0, 0x1f, '\n'}[rng.IntN(5)]
			}
		}
		from := rng.IntN(len(b))
		want := first
		if from > first {
			want = len(b)
			for i := from; i < len(b); i++ {
				if special(b[i]) {
					want = i
					break
				}
			}
		}
		got := skipPlain(b, from)
		if got > want || want-got >= 8 && got+8 <= len(b) {
			t.Fatalf("skipPlain(%q, %d) = %d, first special byte at %d", b, from, got, want)
		}
	}
}

// TestStringsDecodeAsEncodingJSONDoes: strings of every length around the 8-byte steps,
// plain, escaped or holding a raw control character, read as encoding/json reads them.
func TestStringsDecodeAsEncodingJSONDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "loc_", "0", "é", "€", `\"`, `\\`, `\n`, `\u0041`, `\/`, "\x01", "\t", "'", " "}
	for n := 0; n < 20000; n++ {
		var text []byte
		for k := rng.IntN(30); k > 0; k-- {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		doc := append(append([]byte{'"'}, text...), '"', ',')
		var want string
		wantErr := json.Unmarshal(doc[:len(doc)-1], &want)
		s := &scanner{b: doc}
		got, err := s.str()
		if (err != nil) != (wantErr != nil) || err == nil && (got != want || s.i != len(doc)-1) {
			t.Fatalf("%q: got %q (%v, end %d), encoding/json %q (%v)", doc, got, err, s.i, want, wantErr)
		}
	}
}

func TestFieldIndexKnowsEveryFieldName(t *testing.T) {
	for i, name := range fieldNames {
		if got := fieldIndex(name); got != i {
			t.Errorf("fieldIndex(%q) = %d, want %d", name, got, i)
		}
	}
	for _, name := range []string{"", "Location_id", "location_id ", "value2", "unit"} {
		if got := fieldIndex(name); got != -1 {
			t.Errorf("fieldIndex(%q) = %d, want -1", name, got)
		}
	}
}
