package scheduler

import (
	"strings"
	"testing"
)

// TestNewETag: an entity tag is 16 lowercase hexadecimal digits, each of
// the 16 digits turns up in every place, and tags do not repeat.
func TestNewETag(t *testing.T) {
	const n = 4000
	seen := make(map[string]bool, n)
	var places [16][16]bool
	for range n {
		tag := newETag()
		if len(tag) != 16 || strings.Trim(tag, "0123456789abcdef") != "" {
			t.Fatalf("newETag() = %q, want 16 lowercase hexadecimal digits", tag)
		}
		if seen[tag] {
			t.Fatalf("newETag() gave %q twice in %d calls", tag, n)
		}
		seen[tag] = true
		for i := range len(tag) {
			places[i][strings.IndexByte("0123456789abcdef", tag[i])] = true
		}
	}
	for i, digits := range places {
		for d, ok := range digits {
			if !ok {
				t.Errorf("digit %x never at place %d of %d tags", d, i, n)
			}
		}
	}
}
