package suggest

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"uri", "urii", 1},
		{"kitten", "sitting", 3},
		{"minit", "minute", 2},
		{"", "abc", 3},
		{"héllo", "hello", 1},
		{"nmae", "name", 1},
		{"ca", "abc", 3},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		candidates []string
		want       []string
	}{
		{name: "one insertion", in: "urii", candidates: []string{"uri", "method", "body"}, want: []string{"uri"}},
		{name: "one deletion", in: "recurence", candidates: []string{"action", "recurrence", "state"}, want: []string{"recurrence"}},
		{name: "any case", in: "Htp", candidates: []string{"Http", "Https", "StorageQueue"}, want: []string{"Http"}},
		{name: "two edits in six letters", in: "Minit", candidates: []string{"Minute", "Hour"}, want: []string{"Minute"}},
		{name: "too far for a short name", in: "id", candidates: []string{"uri"}, want: nil},
		{name: "more than two edits", in: "schdeulXY", candidates: []string{"schedule"}, want: nil},
		{name: "ties all suggested", in: "bat", candidates: []string{"cat", "hat", "bath"}, want: []string{"cat", "hat", "bath"}},
		{name: "nearest wins", in: "GETT", candidates: []string{"GET", "PUT"}, want: []string{"GET"}},
		{name: "same but for case is not a suggestion", in: "http", candidates: []string{"Http"}, want: nil},
		{name: "no candidates", in: "x", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Closest(tt.in, tt.candidates)); diff != "" {
				t.Errorf("Closest(%q, %q) (-want +got):\n%s", tt.in, tt.candidates, diff)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	if got, want := DidYouMean("urii", []string{"uri"}), `, did you mean "uri"?`; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
	if got, want := DidYouMean("bat", []string{"cat", "hat"}), `, did you mean "cat" or "hat"?`; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
	if got := DidYouMean("zzz", []string{"uri"}); got != "" {
		t.Errorf("DidYouMean(far) = %q, want \"\"", got)
	}
	if got, want := Or([]string{"a", "b", "c"}, strconv.Quote), `"a", "b" or "c"`; got != want {
		t.Errorf("Or = %q, want %q", got, want)
	}
}
