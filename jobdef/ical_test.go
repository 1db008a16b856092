package jobdef_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/recurrence"
)

// TestCalendarICal imports the events of an iCalendar text: all-day
// events (over two days, repeated by an RRULE), date-time events in UTC,
// in another zone (TZID) and in the calendar's, with DTEND or DURATION,
// folded lines, and components inside an event, which are ignored.
func TestCalendarICal(t *testing.T) {
	ical := strings.Join([]string{
		"BEGIN:VCALENDAR",
		"VERSION:2.0",
		"BEGIN:VEVENT",
		"SUMMARY:Christmas",
		"DTSTART;VALUE=DATE:20261225",
		"DTEND;VALUE=DATE:20261227",
		"END:VEVENT",
		"BEGIN:VEVENT",
		"DTSTART;VALUE=DATE:20000501",
		"RRULE:FREQ=YEARLY;BY",
		" MONTH=5",
		"END:VEVENT",
		"BEGIN:VEVENT",
		"DTSTART;VALUE=DATE:17001226",
		"RRULE:FREQ=YEARLY",
		"END:VEVENT",
		"BEGIN:VEVENT",
		"DTSTART:20261110T090000Z",
		"DURATION:PT2H",
		"BEGIN:VALARM",
		"DTSTART:19990101T000000Z",
		"END:VALARM",
		"END:VEVENT",
		"BEGIN:VEVENT",
		`DTSTART;TZID="America/New_York":20261111T090000`,
		"DTEND;TZID=America/New_York:20261111T100000",
		"END:VEVENT",
		"BEGIN:VEVENT",
		"DTSTART:20261112T120000",
		"DTEND:20261112T130000",
		"END:VEVENT",
		"END:VCALENDAR",
	}, "\r\n")
	c, err := jobdef.ParseCalendar([]byte(`{"properties": {"timeZone": "Europe/Berlin", "ical": ` + quoteJSON(ical) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	excl, err := c.Compile()
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 12, 24, 23, 59, 0, 0, berlin), false},
		{time.Date(2026, 12, 25, 0, 0, 0, 0, berlin), true},
		{time.Date(2026, 12, 26, 23, 59, 0, 0, berlin), true},
		{time.Date(2026, 12, 27, 0, 0, 0, 0, berlin), false},
		{time.Date(2031, 5, 1, 12, 0, 0, 0, berlin), true}, // the RRULE, unfolded
		{time.Date(2031, 5, 2, 12, 0, 0, 0, berlin), false},
		{time.Date(2099, 12, 26, 12, 0, 0, 0, berlin), true},    // more than 290 years after its start
		{time.Date(2026, 11, 10, 10, 59, 0, 0, time.UTC), true}, // 09:00Z plus PT2H
		{time.Date(2026, 11, 10, 11, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 11, 11, 14, 30, 0, 0, time.UTC), true}, // 09:00-10:00 in New York
		{time.Date(2026, 11, 11, 9, 30, 0, 0, time.UTC), false},
		{time.Date(2026, 11, 12, 12, 30, 0, 0, berlin), true}, // floating: the calendar's zone
		{time.Date(2026, 11, 12, 12, 30, 0, 0, time.UTC), false},
		{time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC), false}, // the alarm is no event
	} {
		if got := excl.Excludes(tt.at); got != tt.want {
			t.Errorf("Excludes(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// TestCalendarICalInvalid: problems are named at properties.ical with
// their line.
func TestCalendarICalInvalid(t *testing.T) {
	for _, tt := range []struct{ ical, want string }{
		{"hello", "line 1: is not an iCalendar text"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026-12-25\nEND:VEVENT\nEND:VCALENDAR", `line 3: DTSTART "2026-12-25" is not a date`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261225T100000Z\nEND:VEVENT\nEND:VCALENDAR", "line 3: a VEVENT with a date-time DTSTART needs DTEND or DURATION"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\nEND:VCALENDAR", "line 2: VEVENT has no DTSTART"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nRRULE:FREQ=SOMETIMES\nEND:VEVENT\nEND:VCALENDAR", `line 4: RRULE "FREQ=SOMETIMES"`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nRRULE:FREQ=DAILY\nEND:VEVENT\nEND:VCALENDAR", "more than 10000 occurrences"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Mars/Olympus:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR", `line 3: DTSTART TZID "Mars/Olympus"`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nDTEND;VALUE=DATE:20261224\nEND:VEVENT\nEND:VCALENDAR", "line 4: DTEND is not after DTSTART"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nEND:VCALENDAR", "line 2: BEGIN:VEVENT has no END:VEVENT"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nEND:VTODO\nEND:VEVENT\nEND:VCALENDAR", "line 4: END:VTODO closes no BEGIN:VTODO"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nEND:VEVENT\n", "line 1: BEGIN:VCALENDAR has no END:VCALENDAR"},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nEXDATE;VALUE=DATE:20261225,2026-12-26\nEND:VEVENT\nEND:VCALENDAR", `line 4: EXDATE "2026-12-26" is not a date`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nRDATE:20261226T100000Z\nEND:VEVENT\nEND:VCALENDAR", `line 4: RDATE "20261226T100000Z" is not of DTSTART's kind`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261225T100000Z\nDURATION:PT1H\nRDATE;VALUE=PERIOD:20261226T100000Z/20261226T090000Z\nEND:VEVENT\nEND:VCALENDAR", `line 5: RDATE period "20261226T100000Z/20261226T090000Z" does not end after it starts`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nEXRULE:FREQ=OFTEN\nEND:VEVENT\nEND:VCALENDAR", `line 4: EXRULE "FREQ=OFTEN" is not a recurrence rule`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:20261201\nRRULE:FREQ=DAILY;COUNT=9\nEND:VEVENT\nBEGIN:VEVENT\nUID:a\nRECURRENCE-ID:20261203T000000Z\nDTSTART;VALUE=DATE:20261204\nEND:VEVENT\nEND:VCALENDAR",
			`line 9: RECURRENCE-ID "20261203T000000Z" is not of the DTSTART of its series' kind`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Customized Time Zone:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 3: DTSTART TZID "Customized Time Zone" is not a known time zone (an IANA or Windows name), and the text has no VTIMEZONE with that TZID`},
		{"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:STANDARD\nDTSTART:16010101T000000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+1\nEND:STANDARD\nEND:VTIMEZONE\n" +
			"BEGIN:VEVENT\nDTSTART;TZID=Custom:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nBEGIN:VEVENT\nDTSTART;TZID=Custom:20261226T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 7: TZOFFSETTO "+1" is not a UTC offset such as +0100 or -0430`},
		{"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:DAYLIGHT\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nEND:DAYLIGHT\nEND:VTIMEZONE\n" +
			"BEGIN:VEVENT\nDTSTART;TZID=Custom:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 4: the DAYLIGHT of VTIMEZONE "Custom" has no DTSTART`},
		{"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:Custom\nEND:VTIMEZONE\nBEGIN:VEVENT\nDTSTART;TZID=Custom:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 2: VTIMEZONE "Custom" has no STANDARD or DAYLIGHT`},
		{"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:STANDARD\nDTSTART:16010101T000000\nRRULE:FREQ=DAILY\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0100\nEND:STANDARD\nEND:VTIMEZONE\n" +
			"BEGIN:VEVENT\nDTSTART;TZID=Custom:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 6: RRULE "FREQ=DAILY" has more than 10000 occurrences before 2100`},
		{"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:Custom\n" + manyOffsets(300) + "END:VTIMEZONE\n" +
			"BEGIN:VEVENT\nDTSTART;TZID=Custom:20261225T100000\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR",
			`line 2: VTIMEZONE "Custom" has more different offsets than a zone may have`},
		// 2 kB of zones that would make 108,000 onsets.
		{"BEGIN:VCALENDAR\n" + manyZones(12) + "END:VCALENDAR", "the text makes more than 100000 instants of events, rules and zones"},
		// Two rules that each fit but together pass the bound of an event.
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\nRRULE:FREQ=DAILY;COUNT=6000\nRRULE:FREQ=DAILY;INTERVAL=2;COUNT=6000\nEND:VEVENT\nEND:VCALENDAR",
			`line 5: RRULE "FREQ=DAILY;INTERVAL=2;COUNT=6000" has more than 10000 occurrences before 2100 (with the event's other ones)`},
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\nRRULE:FREQ=DAILY;COUNT=10000\nRDATE;VALUE=DATE:20990101\nEND:VEVENT\nEND:VCALENDAR",
			"line 5: the event has more than 10000 occurrences before 2100 (DTSTART, RRULEs and RDATEs together)"},
		// 400 bytes of EXRULEs that would make 110,000 instants.
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\n" + strings.Repeat("EXRULE:FREQ=DAILY;COUNT=10000\n", 11) + "END:VEVENT\nEND:VCALENDAR",
			"line 14: the text makes more than 100000 instants of events, rules and zones"},
		// 140 bytes that would expand to 1.8 million excluded days.
		{"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\nDTEND;VALUE=DATE:20100101\nRRULE:FREQ=DAILY;COUNT=500\nEND:VEVENT\nEND:VCALENDAR",
			"line 2: the VEVENT expands to 1826500 excluded days or spans, more than the 50000 left"},
		// Events that each fit but together do not.
		{"BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\nDTEND;VALUE=DATE:20090101\nRRULE:FREQ=YEARLY;COUNT=5\nEND:VEVENT\n", 4) + "END:VCALENDAR",
			"line 17: the VEVENT expands to 16440 excluded days or spans, more than the 680 left of the 50000"},
	} {
		_, err := jobdef.ParseCalendar([]byte(`{"properties": {"ical": ` + quoteJSON(tt.ical) + `}}`))
		var ve *jobdef.ValidationError
		if !errors.As(err, &ve) || ve.Path != "properties.ical" || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCalendar(ical %.300q) = %v, want a problem at properties.ical holding %q", tt.ical, err, tt.want)
		}
	}
}

// quoteJSON returns s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCalendarICalEmptyRules: a rule without an occurrence before 2100
// is refused at its line, whether a static check sees it (a month day no
// month of BYMONTH has, sub-daily steps that never meet BYHOUR, BYMINUTE
// or BYSECOND) or the probe does (a selection that selects nothing, a
// leap day of years that are never leap, an UNTIL before the first one);
// past 5 of the latter, further rules are refused unread.
func TestCalendarICalEmptyRules(t *testing.T) {
	for _, tt := range []struct{ start, rule, want string }{
		{"VALUE=DATE:20260101", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "never occurs: no month of BYMONTH=2 has a day of BYMONTHDAY=30"},
		{"VALUE=DATE:20260101", "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31", "never occurs: no month of BYMONTH=4,6,9,11 has a day of BYMONTHDAY=31"},
		{"VALUE=DATE:20260101", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=-30,30;BYDAY=MO", "never occurs: no month of BYMONTH=2 has a day of BYMONTHDAY=-30,30"},
		{"VALUE=DATE:20260101", "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=31", "never occurs: no month of BYMONTH=2 has a day of BYMONTHDAY=31"},
		{"20261201T100000Z", "FREQ=SECONDLY;INTERVAL=2;BYSECOND=1", "never occurs: its steps from DTSTART never meet its BYHOUR, BYMINUTE and BYSECOND"},
		{"20261202T100000Z", "FREQ=MINUTELY;INTERVAL=2;BYMINUTE=1", "never occurs: its steps"},
		{"20261203T100000Z", "FREQ=HOURLY;INTERVAL=2;BYHOUR=1", "never occurs: its steps"},
		{"VALUE=DATE:20260101", "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3", "never occurs: BYSETPOS=3 selects past the most instants one of its periods holds (2)"},
		{"VALUE=DATE:20260101", "FREQ=YEARLY;BYMONTH=3,4;BYMONTHDAY=1,-1;BYSETPOS=5,-5", "never occurs: BYSETPOS=5,-5 selects past the most instants one of its periods holds (4)"},
		{"20261204T100000Z", "FREQ=DAILY;BYHOUR=8,12;BYMINUTE=0,30;BYSETPOS=-5", "never occurs: BYSETPOS=-5 selects past the most instants one of its periods holds (4)"},
		{"20261205T100000Z", "FREQ=HOURLY;BYSECOND=0,30;BYSETPOS=3", "never occurs: BYSETPOS=3 selects past the most instants one of its periods holds (2)"},
		{"VALUE=DATE:20260101", "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3;BYHOUR=1,2", "has no occurrence before 2100 (or its UNTIL)"},
		{"VALUE=DATE:20250101", "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29", "has no occurrence before 2100"},
		{"20260101T100000Z", "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=2", "never occurs: BYSETPOS=2 selects past the most instants one of its periods holds (1)"},
		{"VALUE=DATE:20260101", "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25;UNTIL=20261101", "has no occurrence before 2100 (or its UNTIL)"},
		{"VALUE=DATE:20260101", "FREQ=WEEKLY;BYDAY=MO;BYMONTH=3;BYYEARDAY=1", "has no occurrence before 2100"},
	} {
		text := "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;" + tt.start + "\nDURATION:PT30M\nRRULE:" + tt.rule + "\nEND:VEVENT\nEND:VCALENDAR"
		if !strings.HasPrefix(tt.start, "VALUE") {
			text = strings.Replace(text, "DTSTART;", "DTSTART:", 1)
		}
		want := "line 5: RRULE " + strconv.Quote(tt.rule) + " " + tt.want
		_, err := jobdef.ParseCalendar([]byte(`{"properties": {"ical": ` + quoteJSON(text) + `}}`))
		var ve *jobdef.ValidationError
		if !errors.As(err, &ve) || ve.Path != "properties.ical" || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCalendar(RRULE %q) = %v, want a problem at properties.ical holding %q", tt.rule, err, want)
		}
	}

	// Past 5 rules the probe finds empty, the others are not read.
	rule := "RRULE:FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29\n"
	text := "BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20250101\n"+rule+"END:VEVENT\n", 7) + "END:VCALENDAR"
	_, err := jobdef.ParseCalendar([]byte(`{"properties": {"ical": ` + quoteJSON(text) + `}}`))
	for _, want := range []string{
		`line 20: RRULE "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29" has no occurrence before 2100`,
		`line 24: RRULE "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29" is not read: the text already has 5 rules without an occurrence before 2100`,
		`line 28: RRULE "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29" is not read`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCalendar(7 empty rules) = %v, want a problem holding %q", err, want)
		}
	}
}

// TestCalendarICalStoredEmptyRules: a calendar as stored (CompileStored)
// reads a rule without an occurrence before 2100 as the versions that
// stored such rules did: it adds nothing, its event keeps its DTSTART, and
// an EXRULE of that kind removes nothing; the other events of the text
// are excluded, and rules past 5 of that kind are read too. A write's
// Compile refuses them.
func TestCalendarICalStoredEmptyRules(t *testing.T) {
	event := func(start, rules string) string {
		return "BEGIN:VEVENT\nDTSTART;VALUE=DATE:" + start + "\n" + rules + "END:VEVENT\n"
	}
	empty := "RRULE:FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29\n" // from 2026: no leap year
	text := "BEGIN:VCALENDAR\n" +
		event("20260104", "") +
		event("20260106", "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\n") +
		event("20260108", "RRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=1\n") +
		event("20260110", "RRULE:FREQ=DAILY;COUNT=3\nEXRULE:FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31\n") +
		strings.Repeat(event("20260115", empty), 7) +
		event("20260120", "RRULE:FREQ=WEEKLY;COUNT=2\nEXRULE:FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3\n") +
		"END:VCALENDAR"
	c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{ICal: text}}
	if _, err := c.Compile(); err == nil || !strings.Contains(err.Error(), "is not read") {
		t.Errorf("Compile() = %v, want the rules refused", err)
	}
	excl, err := c.CompileStored()
	if err != nil {
		t.Fatalf("CompileStored() = %v", err)
	}
	for _, tt := range []struct {
		day  int
		want bool
	}{
		{3, false}, {4, true}, {6, true}, {7, false}, {8, true}, {9, false},
		{10, true}, {11, true}, {12, true}, {13, false},
		{15, true}, {16, false}, {20, true}, {27, true}, {28, false},
	} {
		at := time.Date(2026, 1, tt.day, 12, 0, 0, 0, time.UTC)
		if got := excl.Excludes(at); got != tt.want {
			t.Errorf("CompileStored().Excludes(%v) = %v, want %v", at, got, tt.want)
		}
	}
	for _, at := range []time.Time{time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC), time.Date(2027, 1, 6, 12, 0, 0, 0, time.UTC)} {
		if excl.Excludes(at) {
			t.Errorf("CompileStored().Excludes(%v) = true, want false: an empty rule adds nothing", at)
		}
	}
}

// TestCalendarICalRareRules: rules that occur rarely, or only after the
// first of their periods, are expanded as before: the probe passes them.
func TestCalendarICalRareRules(t *testing.T) {
	event := func(start, rule string) string {
		return "BEGIN:VEVENT\nDTSTART:" + start + "\nDURATION:PT30M\nRRULE:" + rule + "\nEND:VEVENT\n"
	}
	excl := compileICal(t, "UTC", "BEGIN:VCALENDAR\n"+
		event("20261204T100000Z", "FREQ=HOURLY;INTERVAL=5;BYHOUR=1;COUNT=2")+
		// 29 February on a Monday: 2044, 2072.
		event("20260101T120000Z", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO")+
		event("20260101T130000Z", "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=-29")+
		// From 2150 on, a rule adds nothing before 2100 but is no mistake.
		event("21500101T100000Z", "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=FR")+
		"END:VCALENDAR")
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC), true},  // 10:00 + 3 x 5 hours
		{time.Date(2026, 12, 10, 1, 0, 0, 0, time.UTC), true}, // and 24 x 5 hours later
		{time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC), false},
		{time.Date(2044, 2, 29, 12, 0, 0, 0, time.UTC), true},
		{time.Date(2072, 2, 29, 12, 0, 0, 0, time.UTC), true},
		{time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), false},
		{time.Date(2027, 2, 1, 13, 0, 0, 0, time.UTC), false}, // 28 days: no 29th from the end
		{time.Date(2028, 2, 1, 13, 0, 0, 0, time.UTC), true},
	} {
		if got := excl.Excludes(tt.at); got != tt.want {
			t.Errorf("Excludes(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// BenchmarkCalendarICalEmptyRule reads a text of events whose rule has
// no occurrence: those the static checks see (a month day no month has; a
// BYSETPOS past the instants of a minutely rule's periods, which the probe
// took 20–45 ms to find), and a kind only the probe sees; and a text of
// 20 events of that kind (the probe runs for 5 of them). rrule-go alone
// searches each rule to the year 9999.
func BenchmarkCalendarICalEmptyRule(b *testing.B) {
	for _, tt := range []struct {
		name, rule string
		events     int
	}{
		{"static-minutely", "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30", 1},
		{"static-setpos-minutely", "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=2", 1},
		{"probe-monthly", "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3;BYHOUR=1,2", 1},
		{"probe-monthly-x20", "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3;BYHOUR=1,2", 20},
	} {
		event := "BEGIN:VEVENT\nDTSTART:20261201T100000Z\nDURATION:PT1H\nRRULE:" + tt.rule + "\nEND:VEVENT\n"
		body := []byte(`{"properties": {"ical": ` + quoteJSON("BEGIN:VCALENDAR\n"+strings.Repeat(event, tt.events)+"END:VCALENDAR") + `}}`)
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := jobdef.ParseCalendar(body); err == nil {
					b.Fatal("ParseCalendar took a rule without an occurrence")
				}
			}
		})
	}
}

// compileICal compiles a calendar of zone whose ical is text.
func compileICal(t *testing.T, zone, text string) *recurrence.Exclusions {
	t.Helper()
	c, err := jobdef.ParseCalendar([]byte(`{"properties": {"timeZone": ` + quoteJSON(zone) + `, "ical": ` + quoteJSON(text) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	excl, err := c.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return excl
}

// TestCalendarICalText reads what the text of real files holds besides
// events: a byte order mark, LF line ends, lines folded with a tab,
// X- properties, parameter values in quotes that hold ':' and ';', and
// components other than VEVENT (VTODO, VJOURNAL, X- components, VALARM
// inside an event), which are skipped.
func TestCalendarICalText(t *testing.T) {
	ical := "\uFEFF" + strings.Join([]string{
		"BEGIN:VCALENDAR",
		"PRODID:-//Apple Inc.//macOS 14.0//EN",
		"X-WR-CALNAME:Freeze",
		"BEGIN:VTODO",
		"DTSTART;VALUE=DATE:20261201",
		"END:VTODO",
		"BEGIN:VJOURNAL",
		"DTSTART;VALUE=DATE:20261202",
		"END:VJOURNAL",
		"BEGIN:X-VENDOR-THING",
		"DTSTART;VALUE=DATE:20261203",
		"END:X-VENDOR-THING",
		"BEGIN:VEVENT",
		`X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-TITLE="Office; 3rd floor: east":geo:52.5,13.4`,
		`DTSTART;X-LABEL="on call;VALUE=DATE";TZID=Europe/Berlin:20261207T100000`,
		"DTEND;TZID=Europe/Berlin:2026120",
		"\t7T120000",
		"BEGIN:VALARM",
		"TRIGGER:-PT15M",
		"DTSTART;VALUE=DATE:20261204",
		"END:VALARM",
		"END:VEVENT",
		"END:VCALENDAR",
		"",
	}, "\n")
	excl := compileICal(t, "UTC", ical)
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), true}, // 10:00-12:00 in Berlin
		{time.Date(2026, 12, 7, 10, 59, 0, 0, time.UTC), true},
		{time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), false}, // the VTODO
		{time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), false}, // the VJOURNAL
		{time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), false}, // the X- component
		{time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC), false}, // the VALARM
	} {
		if got := excl.Excludes(tt.at); got != tt.want {
			t.Errorf("Excludes(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// TestCalendarICalFiles imports the iCalendar files of testdata/ical and
// checks Excludes at the instants NAME.want lists: the edges of every
// excluded span and the starts of removed instances, computed apart from
// the importer by testdata/ical/oracle.py.
func TestCalendarICalFiles(t *testing.T) {
	for _, tt := range []struct{ name, zone string }{
		{"recurrence-set", "UTC"},
		{"recurrence-id", "Europe/Berlin"},
		{"outlook", "W. Europe Standard Time"},
		{"google-holidays", "Europe/Berlin"},
		{"google-oncall", "UTC"},
		{"apple", "Europe/Berlin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "ical", tt.name+".ics"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "ical", tt.name+".want"))
			if err != nil {
				t.Fatal(err)
			}
			excl := compileICal(t, tt.zone, string(text))
			for line := range strings.Lines(string(want)) {
				at, excluded, _ := strings.Cut(strings.TrimSpace(line), " ")
				instant, err := time.Parse(time.RFC3339, at)
				if err != nil {
					t.Fatal(err)
				}
				if got := excl.Excludes(instant); got != (excluded == "true") {
					t.Errorf("Excludes(%v) = %v, want %s", instant, got, excluded)
				}
			}
		})
	}
}

// manyOffsets returns n STANDARD observances of a VTIMEZONE, each to its
// own offset.
func manyOffsets(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "BEGIN:STANDARD\nDTSTART:%04d0101T000000\nTZOFFSETFROM:+0000\nTZOFFSETTO:+%02d%02d\nEND:STANDARD\n", 1700+i, i/60, i%60)
	}
	return b.String()
}

// manyZones returns n VTIMEZONEs of 9,000 onsets each and an event in
// each.
func manyZones(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "BEGIN:VTIMEZONE\nTZID:Z%d\nBEGIN:STANDARD\nDTSTART:20000101T000000\nRRULE:FREQ=DAILY;COUNT=9000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0100\nEND:STANDARD\nEND:VTIMEZONE\n", i)
		fmt.Fprintf(&b, "BEGIN:VEVENT\nDTSTART;TZID=Z%d:20261225T100000\nDURATION:PT1H\nEND:VEVENT\n", i)
	}
	return b.String()
}

// BenchmarkCalendarICal compiles calendars of the exported files of
// testdata/ical.
func BenchmarkCalendarICal(b *testing.B) {
	for _, tt := range []struct{ name, zone string }{
		{"google-holidays", "Europe/Berlin"},
		{"outlook", "W. Europe Standard Time"},
	} {
		text, err := os.ReadFile(filepath.Join("testdata", "ical", tt.name+".ics"))
		if err != nil {
			b.Fatal(err)
		}
		c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{TimeZone: tt.zone, ICal: string(text)}}
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Compile(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzCalendarICal reads iCalendar texts seeded from the test files:
// whatever the text, Compile returns (it neither panics nor steps on for
// ever), and its problems are named at properties.ical.
func FuzzCalendarICal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "ical", "*.ics"))
	for _, name := range files {
		text, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(text))
	}
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261201T100000Z\nDURATION:PT1H\nRRULE:FREQ=HOURLY;INTERVAL=5;BYHOUR=1;COUNT=2\nEND:VEVENT\nEND:VCALENDAR")
	f.Fuzz(func(t *testing.T, text string) {
		c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{TimeZone: "Europe/Berlin", ICal: text}}
		excl, err := c.Compile()
		if err != nil {
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var ve *jobdef.ValidationError
				if !errors.As(e, &ve) || ve.Path != "properties.ical" {
					t.Fatalf("Compile: %v is not a problem at properties.ical", e)
				}
			}
			return
		}
		excl.Excludes(time.Date(2026, 12, 25, 12, 0, 0, 0, time.UTC))
	})
}

// TestCalendarICalFoldedAllocation: unfolding a long property folded
// into many lines allocates in proportion to the text (joining the folds
// one by one copied the line again for each).
func TestCalendarICalFoldedAllocation(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261225\r\nDESCRIPTION:")
	for i := 0; i < len(long); i += 74 {
		b.WriteString(long[i:min(i+74, len(long))])
		b.WriteString("\r\n ")
	}
	b.WriteString("\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	c := &jobdef.Calendar{Properties: jobdef.CalendarProperties{ICal: b.String()}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := c.Compile(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(32*b.Len()); n > limit {
		t.Errorf("Compile of a %d-byte text allocated %d bytes, want at most %d", b.Len(), n, limit)
	}
}
