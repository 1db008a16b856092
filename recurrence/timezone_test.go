package recurrence_test

import (
	"testing"

	"github.com/jobclock/scheduler/recurrence"
)

// TestLoadTimeZoneWindows: Windows names, as Outlook writes them in
// iCalendar TZIDs, name the zone of CLDR's windowsZones table.
func TestLoadTimeZoneWindows(t *testing.T) {
	for _, tt := range []struct{ windows, iana string }{
		{"W. Europe Standard Time", "Europe/Berlin"},
		{"Aleutian Standard Time", "America/Adak"},
		{"Middle East Standard Time", "Asia/Beirut"},
		{"Central Asia Standard Time", "Asia/Bishkek"}, // UTC+6; Almaty keeps +5 since 2024
		{"Greenland Standard Time", "America/Nuuk"},
		{"Russia Time Zone 11", "Asia/Kamchatka"},
		{"Lord Howe Standard Time", "Australia/Lord_Howe"},
		{"UTC-08", "Etc/GMT+8"},
	} {
		loc, err := recurrence.LoadTimeZone(tt.windows)
		if err != nil {
			t.Errorf("LoadTimeZone(%q): %v", tt.windows, err)
			continue
		}
		if got := loc.String(); got != tt.iana {
			t.Errorf("LoadTimeZone(%q) = %s, want %s", tt.windows, got, tt.iana)
		}
	}
}
