package jobdef_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseJobTimeMessages checks that a time in the ISO 8601 basic format
// is answered with its extended form, and a date or time of day that does
// not exist with what does not exist.
func TestParseJobTimeMessages(t *testing.T) {
	const act = `"action": {"type": "Https", "request": {"uri": "https://example.com/", "method": "GET"}}`
	tests := []struct{ in, want string }{
		{"20260804T000000Z", `startTime: "20260804T000000Z" is in the ISO 8601 basic format, which is not accepted; use the extended form "2026-08-04T00:00:00Z"`},
		{"20260804T0930+0200", `startTime: "20260804T0930+0200" is in the ISO 8601 basic format, which is not accepted; use the extended form "2026-08-04T09:30+02:00"`},
		{"20260804", `startTime: "20260804" is in the ISO 8601 basic format, which is not accepted; use the extended form "2026-08-04"`},
		{"20260230T0000Z", `startTime: "20260230T0000Z" is in the ISO 8601 basic format, which is not accepted, and not a date: February 2026 has no day 30`},
		{"2026-02-30", `startTime: "2026-02-30" is not a date: February 2026 has no day 30`},
		{"2028-02-30T10:00Z", `startTime: "2028-02-30T10:00Z" is not a date: February 2028 has no day 30`},
		{"2026-13-01", `startTime: "2026-13-01" is not a date: there is no month 13`},
		{"2026-08-04T24:00Z", `startTime: "2026-08-04T24:00Z" is not a time: there is no hour 24 (00-23)`},
		{"tomorrow", `startTime: "tomorrow" is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`},
		{"2026-0804", `startTime: "2026-0804" is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`},
	}
	for _, tt := range tests {
		got := parseProblems(t, `{"startTime": "`+tt.in+`", `+act+`}`)
		if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
			t.Errorf("startTime %q: problems (-want +got):\n%s", tt.in, diff)
		}
	}
}
