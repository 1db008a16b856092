package jobdef_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jobclock/scheduler/jobdef"
)

var updateGrid = flag.Bool("update-grid", false, "write testdata/ical/grid-bysetpos.txt from the code as it is")

// gridICal is a stored calendar of many rules with BYSETPOS, of every
// frequency: some select instants, others never do (a position past the
// most instants a period has); and other events around them. Its floating
// times are read in Europe/Berlin.
const gridICal = "BEGIN:VCALENDAR\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260105T090000\r\nDURATION:PT2H\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE;BYSETPOS=-1;UNTIL=20260601T000000Z\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260102\r\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260110\r\nRRULE:FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260115T100000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=2\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260120T080000\r\nDURATION:PT30M\r\nRRULE:FREQ=HOURLY;BYSETPOS=2\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260121T080000\r\nDURATION:PT1H\r\nRRULE:FREQ=HOURLY;BYMINUTE=0,30;BYSETPOS=-2;UNTIL=20260122T000000Z\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260125T080000\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;BYHOUR=8,12;BYMINUTE=0;BYSECOND=0;BYSETPOS=2;UNTIL=20260301T000000Z\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260126T080000\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;BYHOUR=8,12;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260127T070000\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;BYHOUR=8,12;BYSETPOS=-3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260201\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=1,15;BYSETPOS=2\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260202\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=1,15;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260203\r\nRRULE:FREQ=WEEKLY;BYDAY=SA,SU;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260204\r\nRRULE:FREQ=WEEKLY;BYDAY=SA,SU;BYSETPOS=-2;UNTIL=20260401\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260205\r\nRRULE:FREQ=MONTHLY;BYYEARDAY=100;BYSETPOS=1\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260206\r\nRRULE:FREQ=MONTHLY;BYYEARDAY=100;BYSETPOS=2\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260207T100000Z\r\nDURATION:PT15M\r\nRRULE:FREQ=MINUTELY;INTERVAL=7;BYSECOND=0,30;BYSETPOS=-1;BYHOUR=10;BYDAY=SA;UNTIL=20260301T000000Z\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART:20260208T100000Z\r\nDURATION:PT15M\r\nRRULE:FREQ=MINUTELY;BYSECOND=0,30;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260209\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260210\r\nRRULE:FREQ=YEARLY;BYDAY=-1FR;BYMONTH=11;BYSETPOS=1\r\nRDATE;VALUE=DATE:20270704\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestCalendarICalStoredGrid: a stored calendar of many rules with
// BYSETPOS (gridICal) excludes the same instants, every half hour of 2026
// and 2027, as the code before rules whose BYSETPOS is past the instants
// of their periods were found without a probe (testdata/ical/
// grid-bysetpos.txt, written by that code with -update-grid): the rules
// that never select an instant still exclude nothing but their DTSTART's
// instance, and the others what they did.
func TestCalendarICalStoredGrid(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{TimeZone: "W. Europe Standard Time", ICal: gridICal}}
	excl, err := c.CompileStored()
	if err != nil {
		t.Fatalf("CompileStored() = %v", err)
	}
	// Each run of excluded instants of the grid, as its first and last.
	var b strings.Builder
	var first, last time.Time
	flush := func() {
		if !first.IsZero() {
			fmt.Fprintf(&b, "%s %s\n", first.Format(time.RFC3339), last.Format(time.RFC3339))
		}
		first = time.Time{}
	}
	for at := time.Date(2026, 1, 1, 0, 0, 0, 0, berlin); at.Year() < 2028; at = at.Add(30 * time.Minute) {
		if !excl.Excludes(at) {
			flush()
			continue
		}
		if first.IsZero() {
			first = at
		}
		last = at
	}
	flush()
	path := filepath.Join("testdata", "ical", "grid-bysetpos.txt")
	if *updateGrid {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("excluded runs of the grid differ from %s (-want +got):\n%s", path, diff)
	}
}
