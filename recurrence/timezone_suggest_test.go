package recurrence_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jobclock/scheduler/recurrence"
)

// TestTimeZoneSuggestion checks that a time zone spelled in the wrong case,
// or with a typo, is refused with the IANA spelling suggested, by
// LoadTimeZone, by validation at the recurrence's timeZone and by a cron
// spec's CRON_TZ prefix; and that a name like no zone gets no suggestion.
func TestTimeZoneSuggestion(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"europe/berlin", `did you mean "Europe/Berlin"?`},
		{"AMERICA/NEW_YORK", `did you mean "America/New_York"?`},
		{"america/port-au-prince", `did you mean "America/Port-au-Prince"?`},
		{"etc/gmt+2", `did you mean "Etc/GMT+2"?`},
		{"Europe/Berln", `did you mean "Europe/Berlin"?`},
		{"Mars/Olympus_Mons", ""},
	} {
		_, err := recurrence.LoadTimeZone(tt.name)
		if err == nil {
			t.Errorf("LoadTimeZone(%q) succeeded, want an error", tt.name)
			continue
		}
		check := func(what, msg string) {
			t.Helper()
			if tt.want == "" && strings.Contains(msg, "did you mean") || tt.want != "" && !strings.Contains(msg, tt.want) {
				t.Errorf("%s for %q: %q, want it to say %q", what, tt.name, msg, tt.want)
			}
		}
		check("LoadTimeZone", err.Error())
		if u, ok := errors.AsType[*recurrence.UnknownTimeZoneError](err); !ok || u.Name != tt.name || (len(u.Suggestions) > 0) != (tt.want != "") {
			t.Errorf("LoadTimeZone(%q) = %#v, want an *UnknownTimeZoneError naming it, with suggestions only when one is likely", tt.name, err)
		}
		var fe *recurrence.FieldError
		err = (&recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: tt.name}).Validate()
		if !asFieldError(err, &fe) || fe.Path != "timeZone" {
			t.Errorf("Validate with timeZone %q = %v, want a problem at timeZone", tt.name, err)
		} else {
			check("Validate", fe.Reason)
		}
		_, err = recurrence.ParseCron("CRON_TZ=" + tt.name + " 0 9 * * *")
		if err == nil {
			t.Errorf("ParseCron with CRON_TZ=%s succeeded", tt.name)
		} else {
			check("ParseCron", err.Error())
		}
	}
}
