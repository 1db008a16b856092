package names

import (
	"regexp"
	"strings"
	"testing"
)

// The rules as regular expressions, as the API documents them.
var (
	namePattern  = regexp.MustCompile(`^[A-Za-z][-_A-Za-z0-9]{0,99}$`)
	scopePattern = regexp.MustCompile(`^[A-Za-z0-9][-_.()A-Za-z0-9]{0,89}$`)
)

var samples = []string{"", "a", "A", "z9", "9", "0a", "a-b_c", "1a", "-a", "_a", ".a", "(a", ")a", "a.b", "a(b)", "a b",
	"ä", "aä", "a/b", "a\n", "a\x00", "a\x7f", "a\xff", "a+b", "a:b", "a@b", "a~b", "a[b", "a`b", "a{b",
	strings.Repeat("a", 90), strings.Repeat("a", 91), strings.Repeat("a", 100), strings.Repeat("a", 101),
	"Z" + strings.Repeat("-", 89), "Z" + strings.Repeat("-", 99), "0" + strings.Repeat(".", 89), "0" + strings.Repeat(")", 90)}

func TestValidIsNamePattern(t *testing.T) {
	for _, name := range samples {
		if got, want := Valid(name), namePattern.MatchString(name); got != want {
			t.Errorf("Valid(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestValidScopeIsScopePattern(t *testing.T) {
	for _, seg := range samples {
		if got, want := ValidScope(seg), scopePattern.MatchString(seg); got != want {
			t.Errorf("ValidScope(%q) = %v, want %v", seg, got, want)
		}
	}
}

func FuzzNamesArePatterns(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), namePattern.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
		if got, want := ValidScope(s), scopePattern.MatchString(s); got != want {
			t.Errorf("ValidScope(%q) = %v, want %v", s, got, want)
		}
	})
}
