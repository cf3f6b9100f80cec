package kwhouse

import "testing"

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"loc_0123456789abcdef01234567":    true,
		NewID(PrefixLocation):             true,
		"loc_0123456789ABCDEF01234567":    false, // upper case
		"loc_0123456789abcdef0123456":     false, // 23 digits
		"loc_0123456789abcdef012345678":   false, // 25
		"dev_0123456789abcdef01234567":    false, // another prefix
		"loc_0123456789abcdef0123456g":    false,
		"loc_/123456789abcdef01234567":    false, // '0'-1
		"loc_0123456789:bcdef01234567":    false, // '9'+1
		"loc_0123456789`bcdef01234567":    false, // 'a'-1
		"loc_0123456789abcde\x0001234567": false,
		"loc_0123456789abcdé01234567":     false,
		"":                                false,
	} {
		if got := ValidID(PrefixLocation, id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
