package names

import "testing"

// TestValidEveryByte: Valid agrees with the pattern for every byte as the
// first of a name and as a later one.
func TestValidEveryByte(t *testing.T) {
	for c := range 256 {
		for _, name := range []string{string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "z"} {
			if got, want := Valid(name), namePattern.MatchString(name); got != want {
				t.Errorf("Valid(%q) = %v, want %v", name, got, want)
			}
		}
	}
}
