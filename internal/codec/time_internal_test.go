package codec

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestParseTimeUTCAgreesWithLayouts checks ParseTime's shortcut against
// time.Parse with the layouts: every value the shortcut reads, the layouts
// read as the same instant in the same location.
func TestParseTimeUTCAgreesWithLayouts(t *testing.T) {
	check := func(s string, mustRead bool) {
		t.Helper()
		got, ok := parseTimeUTC(s)
		want, err := parseTimeLayouts(s)
		switch {
		case ok && err != nil:
			t.Fatalf("parseTimeUTC(%q) = %v, the layouts refuse it: %v", s, got, err)
		case ok && (got != want || got.Location() != want.Location()):
			t.Fatalf("parseTimeUTC(%q) = %#v, the layouts read %#v", s, got, want)
		case !ok && mustRead:
			t.Fatalf("parseTimeUTC(%q) did not read it", s)
		}
	}
	for _, s := range []string{"2012-08-04", "2012-08-04T00:00Z", "2012-08-04T10:30:59Z", "2012-08-04t00:00z",
		"2012-11-04T23:59", "2012-11-04T23:59:00", "2000-02-29", "2024-02-29T12:00Z", "0000-01-01", "9999-12-31T23:59:59Z",
		"2012-08-04T00:00:05.5Z", "2012-08-04T00:00:05.123456789Z", "2012-08-04T00:00:05.000000001Z", "2012-08-04T00:00:05.120Z",
		"2012-08-04T00:00:05.5"} {
		check(s, true)
	}
	for _, s := range []string{"2012-8-04", "2012-08-4", "2012/08/04", "2012-08-04T24:00Z", "2012-08-04T00:60Z",
		"2012-08-04T00:00:60Z", "2012-08-04T00:00:5Z", "2012-08-04T00:00:05.Z", "2012-08-04T00:00:05.1234567890Z",
		"2012-08-04T00:00:05,5Z", "2012-08-04T00:00:05.5a", "2012-08-04T00:00:05.-5Z", "2012-08-04T0:00Z", "2012-08-04T00-00Z",
		"1900-02-29", "2023-02-29", "2012-04-31", "2012-00-10", "2012-13-10", "2012-08-00", "2012-08-32", "-012-08-04",
		"2012-08-04T00:00+02:00", "2012-08-04T00:00ZZ", "2012-08-04T00:00:00ZZ", "2012-08-04 00:00Z", "20a2-08-04", "2012-08-04T00:00:0aZ"} {
		check(s, false)
	}
	// Every month and day around the edges, and times around theirs.
	for _, y := range []int{1900, 2000, 2023, 2024} {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 32; d++ {
				check(fmt.Sprintf("%04d-%02d-%02d", y, m, d), false)
			}
		}
	}
	for h := 0; h <= 25; h++ {
		for mi := 0; mi <= 61; mi++ {
			check(fmt.Sprintf("2012-08-04T%02d:%02dZ", h, mi), false)
			check(fmt.Sprintf("2012-08-04T%02d:%02d:%02d", h, mi, mi), false)
		}
	}
	// Random strings of the right lengths over digits and separators.
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789-:TtZz+. "
	for range 200000 {
		shape := []byte([]string{"2012-08-04", "2012-08-04T00:00Z", "2012-08-04T00:00:00Z", "2012-08-04T00:00",
			"2012-08-04T00:00:00.123456789Z", "2012-08-04T00:00:00.5"}[r.IntN(6)])
		for range 1 + r.IntN(3) {
			shape[r.IntN(len(shape))] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(shape), false)
	}
	if _, err := ParseTime("2012-08-04T00:00Z"); err != nil {
		t.Fatal(err)
	}
	if got, _ := ParseTime("2012-08-04T10:00Z"); !got.Equal(time.Date(2012, 8, 4, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("ParseTime = %v", got)
	}
}
