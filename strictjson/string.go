package strictjson

import stdjson "encoding/json"

// String decodes b, a JSON string, as encoding/json does. A string of printable ASCII
// without escapes (as stored documents hold times and day names) is taken as it is,
// without the decoder: a tariff holds five such values, and decoding them took a tenth of
// decoding the tariff.
func String(b []byte) (string, error) {
	if s, ok := plainString(b); ok {
		return s, nil
	}
	var s string
	err := stdjson.Unmarshal(b, &s)
	return s, err
}

// plainString returns the text of b when b is a JSON string of printable ASCII without
// escapes, and true; any other b returns false.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(in), true
}
