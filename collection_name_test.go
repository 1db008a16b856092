package scheduler

import (
	"strings"
	"testing"
)

// TestValidNameIsNamePattern checks validName against the pattern it
// stands for.
func TestValidNameIsNamePattern(t *testing.T) {
	for _, name := range []string{"", "a", "A", "z9", "a-b_c", "1a", "-a", "_a", "a.b", "a b", "ä", "aä", "a/b",
		strings.Repeat("a", 100), strings.Repeat("a", 101), "a\n", "Z" + strings.Repeat("-", 99)} {
		if got, want := validName(name), namePattern.MatchString(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}
