package recurrence_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

// Shorthands for the expected recurrences.
type (
	rec   = recurrence.Recurrence
	sched = recurrence.Schedule
	occ   = recurrence.MonthlyOccurrence
)

const (
	mon = recurrence.Monday
	tue = recurrence.Tuesday
	wed = recurrence.Wednesday
	thu = recurrence.Thursday
	fri = recurrence.Friday
	sat = recurrence.Saturday
	sun = recurrence.Sunday
)

func ints(from, to, step int) []int {
	var out []int
	for i := from; i <= to; i += step {
		out = append(out, i)
	}
	return out
}

// cronCases are specs ParseCron accepts and the recurrences they become.
// FuzzParseCron is seeded from them.
var cronCases = []struct {
	name string
	spec string
	want *rec
}{
	// Descriptors.
	{"@yearly", "@yearly", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1}, Months: []int{1}}}},
	{"@annually", "@annually", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1}, Months: []int{1}}}},
	{"@monthly", "@monthly", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1}}}},
	{"@weekly", "@weekly", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, WeekDays: week(sun)}}},
	{"@daily", "@daily", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
	{"@midnight", "@midnight", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
	{"@hourly", "@hourly", &rec{Frequency: recurrence.Hour, Schedule: &sched{Minutes: []int{0}}}},
	{"descriptor in any case", "@Daily", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
	{"@every minutes", "@every 15m", &rec{Frequency: recurrence.Minute, Interval: 15}},
	{"@every minutes not dividing the hour", "@every 7m", &rec{Frequency: recurrence.Minute, Interval: 7}},
	{"@every hours and minutes", "@every 1h30m", &rec{Frequency: recurrence.Minute, Interval: 90}},
	{"@every one hour", "@every 1h", &rec{Frequency: recurrence.Hour}},
	{"@every 60m is an hour", "@every 60m", &rec{Frequency: recurrence.Hour}},
	{"@every day in elapsed time", "@every 24h", &rec{Frequency: recurrence.Hour, Interval: 24}},
	{"@every longest", "@every 1000h", &rec{Frequency: recurrence.Hour, Interval: 1000}},
	{"@every seconds", "@every 10s", &rec{Frequency: recurrence.Second, Interval: 10}},
	{"@every second", "@every 1s", &rec{Frequency: recurrence.Second}},
	{"@every minutes and seconds", "@every 1m30s", &rec{Frequency: recurrence.Second, Interval: 90}},
	{"@every most seconds", "@every 1000s", &rec{Frequency: recurrence.Second, Interval: 1000}},
	{"@every whole minutes in seconds", "@every 120s", &rec{Frequency: recurrence.Minute, Interval: 2}},

	// Seconds, robfig/cron's six-field dialect.
	{"every second", "* * * * * *", &rec{Frequency: recurrence.Minute, Schedule: &sched{Seconds: ints(0, 59, 1), Minutes: ints(0, 59, 1)}}},
	{"every 10 seconds", "*/10 * * * * *", &rec{Frequency: recurrence.Minute, Schedule: &sched{Seconds: ints(0, 50, 10), Minutes: ints(0, 59, 1)}}},
	{"at second 30 of nine o'clock", "30 0 9 * * *", &rec{Frequency: recurrence.Day, Schedule: &sched{Seconds: []int{30}, Minutes: []int{0}, Hours: []int{9}}}},
	{"seconds on weekdays", "15,45 */30 9-16 * * MON-FRI", &rec{Frequency: recurrence.Week, Schedule: &sched{Seconds: []int{15, 45}, Minutes: []int{0, 30}, Hours: ints(9, 16, 1), WeekDays: week(mon, tue, wed, thu, fri)}}},

	// Frequencies: the shortest period the spec repeats in.
	{"every minute", "* * * * *", &rec{Frequency: recurrence.Minute, Schedule: &sched{Minutes: ints(0, 59, 1)}}},
	{"every 15 minutes", "*/15 * * * *", &rec{Frequency: recurrence.Hour, Schedule: &sched{Minutes: []int{0, 15, 30, 45}}}},
	{"every minute of one hour", "* 9 * * *", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: ints(0, 59, 1), Hours: []int{9}}}},
	{"weekdays at nine", "0 9 * * 1-5", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{9}, WeekDays: week(mon, tue, wed, thu, fri)}}},
	{"the benchmark spec", "*/15 9-16 * * 1-5", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0, 15, 30, 45}, Hours: ints(9, 16, 1), WeekDays: week(mon, tue, wed, thu, fri)}}},
	{"weekdays, every hour", "*/30 * * * 1-5", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0, 30}, WeekDays: week(mon, tue, wed, thu, fri)}}},
	{"first of the month", "0 0 1 * *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1}}}},
	{"every day of June", "0 0 * 6 *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: ints(1, 31, 1), Months: []int{6}}}},
	{"every other month is months, not an interval", "0 0 1 */2 *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1}, Months: []int{1, 3, 5, 7, 9, 11}}}},
	{"leap day", "0 12 29 2 *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{12}, MonthDays: []int{29}, Months: []int{2}}}},

	// Names, ?, steps over ranges, 7 for Sunday.
	{"names in any case", "0 9 * jan,JUL Mon-fri", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{9}, Months: []int{1, 7},
		MonthlyOccurrences: []occ{{Day: mon}, {Day: tue}, {Day: wed}, {Day: thu}, {Day: fri}}}}},
	{"question mark", "0 9 ? * MON", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{9}, WeekDays: week(mon)}}},
	{"steps over ranges", "0-30/10 9-17/4 * * *", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0, 10, 20, 30}, Hours: []int{9, 13, 17}}}},
	{"N/step runs to the end", "5/20 * * * *", &rec{Frequency: recurrence.Hour, Schedule: &sched{Minutes: []int{5, 25, 45}}}},
	{"step over names", "0 0 * FEB-DEC/3 *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: ints(1, 31, 1), Months: []int{2, 5, 8, 11}}}},
	{"lists of ranges", "0,30 8-10,14 * * *", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0, 30}, Hours: []int{8, 9, 10, 14}}}},
	{"7 is Sunday", "0 0 * * 7", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, WeekDays: week(sun)}}},
	{"range up to 7", "0 0 * * 5-7", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, WeekDays: week(fri, sat, sun)}}},
	{"leading zeros", "00 09 * * *", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{9}}}},

	// Day of month and day of week: OR-ed when both are restricted.
	{"Friday the 13th is either", "0 0 13 * 5", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{13}, MonthlyOccurrences: []occ{{Day: fri}}}}},
	{"stepped day of month is restricted", "0 0 */2 * 1", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0},
		MonthDays: ints(1, 31, 2), MonthlyOccurrences: []occ{{Day: mon}}}}},
	{"*/1 is unrestricted", "0 0 */1 * 1", &rec{Frequency: recurrence.Week, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, WeekDays: week(mon)}}},
	{"every day of the month or Monday", "0 0 1-31 * 1", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
	{"the 15th or any day of the week", "0 0 15 * 0-6", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
	{"day of month with every weekday unrestricted", "0 0 1,15 * *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1, 15}}}},

	// L and #.
	{"last day", "0 0 L * *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{-1}}}},
	{"days before the last", "0 0 1,L-2,l * *", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1, -3, -1}}}},
	{"last Friday", "0 0 * * 5L", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthlyOccurrences: []occ{{Day: fri, Occurrence: -1}}}}},
	{"second Monday and last Friday", "0 0 * * FRIL,MON#2", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0},
		MonthlyOccurrences: []occ{{Day: mon, Occurrence: 2}, {Day: fri, Occurrence: -1}}}}},
	{"every Friday covers the last", "0 0 * * 5,5L", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthlyOccurrences: []occ{{Day: fri}}}}},
	{"the 1st or the first Monday", "0 0 1 * 1#1", &rec{Frequency: recurrence.Month, Schedule: &sched{Minutes: []int{0}, Hours: []int{0}, MonthDays: []int{1},
		MonthlyOccurrences: []occ{{Day: mon, Occurrence: 1}}}}},

	// Seconds, zones, whitespace.
	{"seconds 0", "0 */15 * * * *", &rec{Frequency: recurrence.Hour, Schedule: &sched{Minutes: []int{0, 15, 30, 45}}}},
	{"seconds 0 with ?", "00 0 12 * * ?", &rec{Frequency: recurrence.Day, Schedule: &sched{Minutes: []int{0}, Hours: []int{12}}}},
	{"CRON_TZ", "CRON_TZ=Europe/Berlin 30 2 * * *", &rec{Frequency: recurrence.Day, TimeZone: "Europe/Berlin", Schedule: &sched{Minutes: []int{30}, Hours: []int{2}}}},
	{"TZ", "TZ=America/New_York 0 9 * * 1-5", &rec{Frequency: recurrence.Week, TimeZone: "America/New_York",
		Schedule: &sched{Minutes: []int{0}, Hours: []int{9}, WeekDays: week(mon, tue, wed, thu, fri)}}},
	{"zone and descriptor", "CRON_TZ=Asia/Tokyo @daily", &rec{Frequency: recurrence.Day, TimeZone: "Asia/Tokyo", Schedule: &sched{Minutes: []int{0}, Hours: []int{0}}}},
}

func TestParseCron(t *testing.T) {
	for _, tt := range cronCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := recurrence.ParseCron(tt.spec)
			if err != nil {
				t.Fatalf("ParseCron(%q): %v", tt.spec, err)
			}
			want := *tt.want
			want.Cron = strings.Join(strings.Fields(tt.spec), " ")
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("ParseCron(%q) (-want +got):\n%s", tt.spec, diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("ParseCron(%q).Validate() = %v", tt.spec, err)
			}
		})
	}
}

func TestParseCronCollapsesWhitespace(t *testing.T) {
	got, err := recurrence.ParseCron("  CRON_TZ=UTC\t0  9 * *\t* \n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cron != "CRON_TZ=UTC 0 9 * * *" {
		t.Errorf("Cron = %q, want the spec with single spaces", got.Cron)
	}
}

// cronErrors are specs ParseCron refuses, with the message it gives.
var cronErrors = []struct{ spec, err string }{
	{"", "cron: the spec is empty; expected 5 fields (minute, hour, day of month, month, day of week), or 6 with seconds first"},
	{"0 0 * *", "cron: expected 5 fields (minute, hour, day of month, month, day of week), or 6 with seconds first; found 4"},
	{"0 0 0 * * * *", "cron: expected 5 fields (minute, hour, day of month, month, day of week), or 6 with seconds first; found 7"},
	{"60 * * * *", "cron: field 1 (minutes): 60 is out of range 0-59"},
	{"0 24 * * *", "cron: field 2 (hours): 24 is out of range 0-23"},
	{"0 0 0 * *", "cron: field 3 (day of month): 0 is out of range 1-31"},
	{"0 0 32 * *", "cron: field 3 (day of month): 32 is out of range 1-31"},
	{"0 0 * 13 *", "cron: field 4 (month): 13 is out of range 1-12"},
	{"0 0 * 0 *", "cron: field 4 (month): 0 is out of range 1-12"},
	{"0 0 * * 8", "cron: field 5 (day of week): 8 is out of range 0-7"},
	{"0 0 * * 1-8", "cron: field 5 (day of week): 8 is out of range 0-7"},
	{"9999999999 * * * *", "cron: field 1 (minutes): 9999999999 is out of range 0-59"},
	{"a * * * *", `cron: field 1 (minutes): "a" is not a number`},
	{"*-5 * * * *", `cron: field 1 (minutes): "*" in "*-5" is not a number`},
	{"-5 * * * *", `cron: field 1 (minutes): "-5": a range needs a start and an end`},
	{"0 0 * 3- *", `cron: field 4 (month): "3-": a range needs a start and an end`},
	{"0 0 * JUNE *", `cron: field 4 (month): "JUNE" is not a month (1-12 or JAN-DEC)`},
	{"0 0 * * FUN", `cron: field 5 (day of week): "FUN" is not a day of the week (0-7 or SUN-SAT)`},
	{"1,,2 * * * *", `cron: field 1 (minutes): "1,,2" has an empty list element`},
	{"0 22-2 * * *", "cron: field 2 (hours): 22-2 runs backwards (its start is after its end); list the parts instead, such as 22-23,0-2"},
	{"0 0 * * FRI-MON", "cron: field 5 (day of week): FRI-MON runs backwards (its start is after its end); list the parts instead, such as 5-6,0-1"},
	{"*/0 * * * *", `cron: field 1 (minutes): the step in "*/0" must be at least 1`},
	{"*/x * * * *", `cron: field 1 (minutes): the step "x" in "*/x" is not a number`},
	{"1/2/3 * * * *", `cron: field 1 (minutes): "1/2/3" has more than one /`},
	{"0 0 30 2 *", "cron: field 3 (day of month): no day it names occurs in February (field 4), so the spec never runs"},
	{"0 0 31 4,6,9,11 *", "cron: field 3 (day of month): no day it names occurs in April, June, September or November (field 4), so the spec never runs"},
	{"0 0 0 30,31 FEB *", "cron: field 4 (day of month): no day it names occurs in February (field 5), so the spec never runs"},
	{"0 0 L-29 2 *", "cron: field 3 (day of month): no day it names occurs in February (field 4), so the spec never runs"},
	{"0 0 15W * *", "cron: field 3 (day of month): 15W (the weekday nearest a day) cannot be expressed exactly as a recurrence"},
	{"0 0 LW * *", "cron: field 3 (day of month): LW (the last weekday of the month) cannot be expressed exactly as a recurrence"},
	{"0 0 L-31 * *", "cron: field 3 (day of month): L-31 is not L-0 to L-30 (days before the last)"},
	{"0 0 L/2 * *", `cron: field 3 (day of month): "L/2": a step does not apply to L`},
	{"0 0 * * L", "cron: field 5 (day of week): L alone has no single meaning in this field; write 6 or SAT for Saturday, or 5L for the last Friday of the month"},
	{"0 0 * * 5#6", "cron: field 5 (day of week): 5#6: the occurrence after # must be 1 to 5"},
	{"0 0 * * 1-5#2", "cron: field 5 (day of week): 1-5#2: # takes one day of the week, not a range (5#2 is the second Friday, 5L the last)"},
	{"0 0 * * 5L/2", `cron: field 5 (day of week): "5L/2": a step does not apply to L`},
	{"0 0 * * 9L", "cron: field 5 (day of week): 9 is out of range 0-7"},
	{"0 L * * *", `cron: field 2 (hours): "L" is not a number`},
	{"60 0 0 * * *", "cron: field 1 (seconds): 60 is out of range 0-59"},
	{"*/0 0 0 * * *", `cron: field 1 (seconds): the step in "*/0" must be at least 1`},
	{"0 0 24 * * *", "cron: field 3 (hours): 24 is out of range 0-23"},
	{"@fortnightly", "cron: @fortnightly: is not a descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every DURATION)"},
	{"@reboot", "cron: @reboot: has no time to run at; a job without a recurrence runs once, at its startTime"},
	{"@daily 5", "cron: @daily: takes no fields after it"},
	{"@every", "cron: @every: takes one duration, such as @every 15m"},
	{"@every soon", `cron: @every: "soon" is not a duration such as 15m or 1h30m`},
	{"@every 500ms", "cron: @every: 500ms is shorter than a second, the finest step of a recurrence"},
	{"@every 1.5s", "cron: @every: 1.5s is not a whole number of seconds"},
	{"@every 1001s", "cron: @every: 16m41s is more than 1000 seconds and not a whole number of minutes"},
	{"@every 1001m", "cron: @every: 16h41m0s is more than 1000 minutes and not a whole number of hours"},
	{"@every 1001h", "cron: @every: 1001h0m0s is more than 1000 hours, the longest interval of frequency Hour"},
	{"CRON_TZ=Mars/Olympus 0 0 * * *", `cron: CRON_TZ: "Mars/Olympus" is not a known time zone (an IANA name such as Europe/Berlin)`},
	{"CRON_TZ=Local 0 0 * * *", `cron: CRON_TZ: "Local" is not a known time zone (an IANA name such as Europe/Berlin)`},
	{"CRON_TZ= 0 0 * * *", "cron: CRON_TZ: names no time zone"},
	{"TZ=Europe/Berlin", "cron: TZ: no schedule follows the time zone"},
}

func TestParseCronErrors(t *testing.T) {
	for _, tt := range cronErrors {
		got, err := recurrence.ParseCron(tt.spec)
		if err == nil {
			t.Errorf("ParseCron(%q) = %+v, want error %q", tt.spec, got, tt.err)
			continue
		}
		if err.Error() != tt.err {
			t.Errorf("ParseCron(%q) error\n got %s\nwant %s", tt.spec, err, tt.err)
		}
		var ce *recurrence.CronError
		if !errors.As(err, &ce) {
			t.Errorf("ParseCron(%q) error %T is not a *CronError", tt.spec, err)
		}
	}
}

func TestCronErrorFields(t *testing.T) {
	_, err := recurrence.ParseCron("0 0 24 * * *")
	var ce *recurrence.CronError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CronError", err)
	}
	want := recurrence.CronError{Field: 3, Name: "hours", Reason: "24 is out of range 0-23"}
	if diff := cmp.Diff(want, *ce); diff != "" {
		t.Errorf("CronError (-want +got):\n%s", diff)
	}
}

// TestCronStartDoesNotMatter checks that a compiled spec runs at the
// spec's instants whatever start it is compiled with: interval 1 and every
// schedule field given, so nothing counts from the start or defaults from
// it. "0 0 1 */2 *" in particular runs in odd months, not every second
// month from the start.
func TestCronStartDoesNotMatter(t *testing.T) {
	tests := []struct {
		spec  string
		start time.Time
		want  []time.Time
	}{
		{"0 9 * * 1-5", ts(t, "2026-01-03T10:17:23.5Z"), // a Saturday
			[]time.Time{utc(2026, 1, 5, 9, 0), utc(2026, 1, 6, 9, 0), utc(2026, 1, 7, 9, 0), utc(2026, 1, 8, 9, 0), utc(2026, 1, 9, 9, 0), utc(2026, 1, 12, 9, 0)}},
		{"0 9 * * 1-5", ts(t, "2026-01-07T09:00:00Z"), // on an occurrence
			[]time.Time{utc(2026, 1, 7, 9, 0), utc(2026, 1, 8, 9, 0), utc(2026, 1, 9, 9, 0), utc(2026, 1, 12, 9, 0)}},
		{"0 0 1 */2 *", ts(t, "2026-02-15T00:00:00Z"),
			[]time.Time{utc(2026, 3, 1, 0, 0), utc(2026, 5, 1, 0, 0), utc(2026, 7, 1, 0, 0)}},
		{"*/15 * * * *", ts(t, "2026-01-01T10:07:59.999Z"),
			[]time.Time{utc(2026, 1, 1, 10, 15), utc(2026, 1, 1, 10, 30), utc(2026, 1, 1, 10, 45), utc(2026, 1, 1, 11, 0)}},
		{"0 0 13 * 5", ts(t, "2026-02-01T00:00:00Z"), // Fridays and the 13th
			[]time.Time{utc(2026, 2, 6, 0, 0), utc(2026, 2, 13, 0, 0), utc(2026, 2, 20, 0, 0), utc(2026, 2, 27, 0, 0), utc(2026, 3, 6, 0, 0), utc(2026, 3, 13, 0, 0)}},
		{"0 0 * * 5L", ts(t, "2025-12-31T00:00:00Z"),
			[]time.Time{utc(2026, 1, 30, 0, 0), utc(2026, 2, 27, 0, 0), utc(2026, 3, 27, 0, 0)}},
		{"0 12 29 2 *", ts(t, "2025-03-01T00:00:00Z"),
			[]time.Time{utc(2028, 2, 29, 12, 0), utc(2032, 2, 29, 12, 0)}},
		{"@yearly", ts(t, "2026-06-15T08:00:00Z"),
			[]time.Time{utc(2027, 1, 1, 0, 0), utc(2028, 1, 1, 0, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" from "+tt.start.Format(time.RFC3339Nano), func(t *testing.T) {
			r, err := recurrence.ParseCron(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			checkWalk(t, mustCompile(t, r, tt.start), tt.start, tt.want)
		})
	}
}

// TestCronCountAndEnd checks that count counts runs of the spec from the
// first, and that endTime is inclusive, as for any recurrence.
func TestCronCountAndEnd(t *testing.T) {
	start := ts(t, "2026-01-03T10:00:00Z") // a Saturday
	r := &recurrence.Recurrence{Cron: "0 9 * * 1-5", Count: 3}
	want := []time.Time{utc(2026, 1, 5, 9, 0), utc(2026, 1, 6, 9, 0), utc(2026, 1, 7, 9, 0)}
	if diff := cmp.Diff(want, take(mustCompile(t, r, start), start, 10)); diff != "" {
		t.Errorf("count 3 (-want +got):\n%s", diff)
	}
	end := utc(2026, 1, 7, 9, 0)
	r = &recurrence.Recurrence{Cron: "0 9 * * 1-5", EndTime: &end}
	if diff := cmp.Diff(want, take(mustCompile(t, r, start), start, 10)); diff != "" {
		t.Errorf("endTime (-want +got):\n%s", diff)
	}
}

func TestExpandCron(t *testing.T) {
	end := utc(2026, 6, 1, 0, 0)
	weekdays9 := &sched{Minutes: []int{0}, Hours: []int{9}, WeekDays: week(mon, tue, wed, thu, fri)}
	tests := []struct {
		name string
		in   *rec
		want *rec
		err  string
	}{
		{name: "no cron", in: &rec{Frequency: recurrence.Day}, want: &rec{Frequency: recurrence.Day}},
		{name: "cron alone", in: &rec{Cron: "0 9 * * 1-5"},
			want: &rec{Cron: "0 9 * * 1-5", Frequency: recurrence.Week, Schedule: weekdays9}},
		{name: "count and endTime kept", in: &rec{Cron: "0  9 * * 1-5", Count: 3, EndTime: &end},
			want: &rec{Cron: "0 9 * * 1-5", Frequency: recurrence.Week, Count: 3, EndTime: &end, Schedule: weekdays9}},
		{name: "equal fields, lists in another order",
			in: &rec{Cron: "0 9 * * 1-5", Frequency: recurrence.Week, Interval: 1,
				Schedule: &sched{Hours: []int{9}, WeekDays: week(fri, mon, thu, tue, wed)}},
			want: &rec{Cron: "0 9 * * 1-5", Frequency: recurrence.Week, Interval: 1, Schedule: weekdays9}},
		{name: "time zone without a prefix", in: &rec{Cron: "30 2 * * *", TimeZone: "Europe/Paris"},
			want: &rec{Cron: "30 2 * * *", Frequency: recurrence.Day, TimeZone: "Europe/Paris", Schedule: &sched{Minutes: []int{30}, Hours: []int{2}}}},
		{name: "time zone from the prefix", in: &rec{Cron: "CRON_TZ=Europe/Berlin 30 2 * * *"},
			want: &rec{Cron: "CRON_TZ=Europe/Berlin 30 2 * * *", Frequency: recurrence.Day, TimeZone: "Europe/Berlin", Schedule: &sched{Minutes: []int{30}, Hours: []int{2}}}},
		{name: "the same zone by its Windows name", in: &rec{Cron: "CRON_TZ=Europe/Berlin 30 2 * * *", TimeZone: "W. Europe Standard Time"},
			want: &rec{Cron: "CRON_TZ=Europe/Berlin 30 2 * * *", Frequency: recurrence.Day, TimeZone: "W. Europe Standard Time", Schedule: &sched{Minutes: []int{30}, Hours: []int{2}}}},
		{name: "@every interval given", in: &rec{Cron: "@every 15m", Frequency: recurrence.Minute, Interval: 15},
			want: &rec{Cron: "@every 15m", Frequency: recurrence.Minute, Interval: 15}},

		{name: "bad spec", in: &rec{Cron: "0 24 * * *"}, err: "cron: field 2 (hours): 24 is out of range 0-23"},
		{name: "another frequency", in: &rec{Cron: "0 9 * * 1-5", Frequency: recurrence.Day},
			err: `frequency: "Day" differs from the cron spec, which gives Week`},
		{name: "another interval", in: &rec{Cron: "0 9 * * 1-5", Interval: 2},
			err: "interval: 2 differs from the cron spec, which gives 1"},
		{name: "another zone", in: &rec{Cron: "CRON_TZ=Europe/Berlin 0 9 * * *", TimeZone: "America/New_York"},
			err: `timeZone: "America/New_York" differs from the cron spec, which gives "Europe/Berlin"`},
		{name: "other schedule values, all reported",
			in: &rec{Cron: "*/15 9 * * 1-5", Schedule: &sched{Minutes: []int{0, 30}, Hours: []int{10}, WeekDays: week(mon), MonthDays: []int{1}}},
			err: "schedule.minutes: [0,30] differs from the cron spec, which gives [0,15,30,45]\n" +
				"schedule.hours: [10] differs from the cron spec, which gives [9]\n" +
				"schedule.monthDays: [1] differs from the cron spec, which gives none\n" +
				`schedule.weekDays: ["Monday"] differs from the cron spec, which gives ["Monday","Tuesday","Wednesday","Thursday","Friday"]`},
		{name: "hours where the spec has every hour", in: &rec{Cron: "*/15 * * * *", Schedule: &sched{Hours: ints(0, 23, 1)}},
			err: "schedule.hours: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23] differs from the cron spec, which gives none"},
		{name: "other monthly occurrences", in: &rec{Cron: "0 0 * * 5L", Schedule: &sched{MonthlyOccurrences: []occ{{Day: fri, Occurrence: 1}}}},
			err: `schedule.monthlyOccurrences: [{"day":"Friday","Occurrence":1}] differs from the cron spec, which gives [{"day":"Friday","Occurrence":-1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.ExpandCron()
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ExpandCron() error\n got %v\nwant %s", err, tt.err)
				}
				if got != nil {
					t.Errorf("ExpandCron() = %+v with an error, want nil", got)
				}
				for _, fe := range fieldErrors(t, err) {
					if fe.Path == "" {
						t.Errorf("FieldError %v has no path", fe)
					}
				}
				if verr := tt.in.Validate(); verr == nil {
					t.Errorf("Validate() = nil, want the errors of ExpandCron")
				}
				return
			}
			if err != nil {
				t.Fatalf("ExpandCron(): %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ExpandCron() (-want +got):\n%s", diff)
			}
			if err := tt.in.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

// TestValidateCron checks that a recurrence with a spec needs no frequency
// and that Validate reports the spec's problem at "cron" along with the
// other fields' problems.
func TestValidateCron(t *testing.T) {
	if err := (&rec{Cron: "0 9 * * *"}).Validate(); err != nil {
		t.Errorf("Validate(cron alone) = %v", err)
	}
	err := (&rec{Cron: "0 24 * * *", Count: -1, Schedule: &sched{Hours: []int{25}}}).Validate()
	want := []recurrence.FieldError{
		{Path: "count", Value: "-1", Reason: "must be at least 1"},
		{Path: "schedule.hours[0]", Value: "25", Reason: "is not an hour (0-23)"},
		{Path: "cron", Reason: "field 2 (hours): 24 is out of range 0-23"},
	}
	if diff := cmp.Diff(want, fieldErrors(t, err)); diff != "" {
		t.Errorf("Validate() (-want +got):\n%s", diff)
	}
	// Without a spec, frequency is still required.
	if err := (&rec{}).Validate(); err == nil || !strings.Contains(err.Error(), "frequency: is required") {
		t.Errorf("Validate(empty) = %v, want frequency required", err)
	}
	// Compile runs the spec.
	rule := mustCompile(t, &rec{Cron: "@hourly"}, utc(2026, 1, 1, 10, 30))
	if got := rule.Next(utc(2026, 1, 1, 10, 30)); !got.Equal(utc(2026, 1, 1, 11, 0)) {
		t.Errorf("Next = %v, want 11:00", got)
	}
	if _, err := recurrence.Compile(&rec{Cron: "0 0 30 2 *"}, utc(2026, 1, 1, 0, 0)); err == nil {
		t.Error("Compile(Feb 30) = nil error")
	}
}

// throughJSON marshals r, reads it back and expands its spec again.
func throughJSON(t testing.TB, r *recurrence.Recurrence) *recurrence.Recurrence {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back recurrence.Recurrence
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	x, err := back.ExpandCron()
	if err != nil {
		t.Fatalf("%s: ExpandCron after JSON: %v", data, err)
	}
	return x
}

// TestCronJSON checks that a recurrence from a spec survives JSON: the
// cron member and the expanded fields, read back to an equal recurrence.
func TestCronJSON(t *testing.T) {
	for _, tt := range cronCases {
		r, err := recurrence.ParseCron(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, throughJSON(t, r)); diff != "" {
			t.Errorf("%q after JSON (-want +got):\n%s", tt.spec, diff)
		}
	}
}
