package jobdef_test

import (
	"strings"
	"testing"

	"github.com/jobclock/scheduler/jobdef"
)

// TestCalendarZoneSuggestion checks that a calendar's timeZone and an
// iCalendar TZID that name no zone suggest the name likely meant, as a
// recurrence's timeZone does, and suggest nothing for a name like no zone.
func TestCalendarZoneSuggestion(t *testing.T) {
	for _, tt := range []struct{ zone, want string }{
		{"europe/berlin", `, did you mean "Europe/Berlin"?`},
		{"Europe/Berln", `, did you mean "Europe/Berlin"?`},
		{"Mars/Olympus", ""},
	} {
		c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{TimeZone: tt.zone, Dates: []string{"2026-12-25"}}}
		_, err := c.Compile()
		want := `properties.timeZone: "` + tt.zone + `" is not a known time zone` + tt.want
		if err == nil || err.Error() != want {
			t.Errorf("calendar timeZone %q: %v, want %s", tt.zone, err, want)
		}
		ical := "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=" + tt.zone + ":20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR"
		c = &jobdef.Calendar{Properties: jobdef.CalendarProperties{ICal: ical}}
		_, err = c.Compile()
		if err == nil || !strings.HasSuffix(err.Error(), "with that TZID"+tt.want) {
			t.Errorf("iCalendar TZID %q: %v, want it to end %q", tt.zone, err, "with that TZID"+tt.want)
		}
	}
}
