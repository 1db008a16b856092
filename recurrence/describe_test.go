package recurrence_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// azureExamples is every row of the recurrence schedule examples of Azure
// Scheduler's documentation, with the frequency each row assumes (Day,
// unless weekDays need Week or month days need Month) and interval 1.
// known is the description for a job whose start is Tuesday 2026-01-06
// 12:25 UTC; unknown the description without a start.
var azureExamples = []struct {
	doc            string // the documentation's own words
	freq           recurrence.Frequency
	schedule       string
	known, unknown string
}{
	{"Run at 5 AM every day", recurrence.Day, `{"hours":[5]}`,
		"every day at 05:25 (UTC)", "every day at 05:MM, MM being the start time's minute (UTC)"},
	{"Run at 5:15 AM every day", recurrence.Day, `{"minutes":[15], "hours":[5]}`,
		"every day at 05:15 (UTC)", ""},
	{"Run at 5:15 AM and 5:15 PM every day", recurrence.Day, `{"minutes":[15], "hours":[5,17]}`,
		"every day at 05:15 and 17:15 (UTC)", ""},
	{"Run at 5:15 AM, 5:45 AM, 5:15 PM, and 5:45 PM every day", recurrence.Day, `{"minutes":[15,45], "hours":[5,17]}`,
		"every day at 05:15, 05:45, 17:15 and 17:45 (UTC)", ""},
	{"Run every 15 minutes", recurrence.Day, `{"minutes":[0,15,30,45]}`,
		"every 15 minutes", ""},
	{"Run every hour (the minute from the start time)", recurrence.Day, `{"hours":[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]}`,
		"every hour at minute 25", "every hour at the start time's minute"},
	{"Run every hour on the hour", recurrence.Day, `{"minutes":[0]}`,
		"every hour on the hour", ""},
	{"Run at 15 minutes past the hour every hour", recurrence.Day, `{"minutes":[15]}`,
		"every hour at minute 15", ""},
	{"Run at 5 PM on Saturday every week", recurrence.Week, `{"hours":[17], "weekDays":["saturday"]}`,
		"every week on Saturday at 17:25 (UTC)", "every week on Saturday at 17:MM, MM being the start time's minute (UTC)"},
	{"Run at 5 PM on Monday, Wednesday, and Friday every week", recurrence.Week, `{"hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
		"every week on Monday, Wednesday and Friday at 17:25 (UTC)", "every week on Monday, Wednesday and Friday at 17:MM, MM being the start time's minute (UTC)"},
	{"Run at 5:15 PM and 5:45 PM on Monday, Wednesday, and Friday every week", recurrence.Week, `{"minutes":[15,45], "hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
		"every week on Monday, Wednesday and Friday at 17:15 and 17:45 (UTC)", ""},
	{"Run at 5 AM and 5 PM on Monday, Wednesday, and Friday every week", recurrence.Week, `{"hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
		"every week on Monday, Wednesday and Friday at 05:25 and 17:25 (UTC)", "every week on Monday, Wednesday and Friday at 05:MM and 17:MM, MM being the start time's minute (UTC)"},
	{"Run at 5:15 AM, 5:45 AM, 5:15 PM, and 5:45 PM on Monday, Wednesday, and Friday every week", recurrence.Week, `{"minutes":[15,45], "hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
		"every week on Monday, Wednesday and Friday at 05:15, 05:45, 17:15 and 17:45 (UTC)", ""},
	{"Run every 15 minutes on weekdays", recurrence.Week, `{"minutes":[0,15,30,45], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
		"every 15 minutes on Monday to Friday (UTC)", ""},
	{"Run every 15 minutes on weekdays, between 9 AM and 4:45 PM", recurrence.Week, `{"minutes":[0,15,30,45], "hours": [9, 10, 11, 12, 13, 14, 15, 16], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
		"every 15 minutes from 09:00 to 16:45 on Monday to Friday (UTC)", ""},
	{"Run on Sundays at start time", recurrence.Week, `{"weekDays":["sunday"]}`,
		"every week on Sunday at 12:25 (UTC)", "every week on Sunday at the start time (UTC)"},
	{"Run on Tuesdays and Thursdays at start time", recurrence.Week, `{"weekDays":["tuesday", "thursday"]}`,
		"every week on Tuesday and Thursday at 12:25 (UTC)", "every week on Tuesday and Thursday at the start time (UTC)"},
	{"Run at 6 AM on the twenty-eighth day of every month", recurrence.Month, `{"minutes":[0], "hours":[6], "monthDays":[28]}`,
		"on the 28th of every month at 06:00 (UTC)", ""},
	{"Run at 6 AM on the last day of the month", recurrence.Month, `{"minutes":[0], "hours":[6], "monthDays":[-1]}`,
		"on the last day of every month at 06:00 (UTC)", ""},
	{"Run at 6 AM on the first and last day of every month", recurrence.Month, `{"minutes":[0], "hours":[6], "monthDays":[1,-1]}`,
		"on the 1st and the last day of every month at 06:00 (UTC)", ""},
	{"Run on the first and last day of every month at start time", recurrence.Month, `{"monthDays":[1,-1]}`,
		"on the 1st and the last day of every month at 12:25 (UTC)", "on the 1st and the last day of every month at the start time (UTC)"},
	{"Run on the first and fourteenth day of every month at start time", recurrence.Month, `{"monthDays":[1,14]}`,
		"on the 1st and 14th of every month at 12:25 (UTC)", "on the 1st and 14th of every month at the start time (UTC)"},
	{"Run on the second day of the month at start time", recurrence.Month, `{"monthDays":[2]}`,
		"on the 2nd of every month at 12:25 (UTC)", "on the 2nd of every month at the start time (UTC)"},
	{"Run on the first Friday of every month at 5 AM", recurrence.Month, `{"minutes":[0], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
		"on the first Friday of every month at 05:00 (UTC)", ""},
	{"Run on the first Friday of every month at start time", recurrence.Month, `{"monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
		"on the first Friday of every month at 12:25 (UTC)", "on the first Friday of every month at the start time (UTC)"},
	{"Run on the third Friday from the end of the month, every month, at start time", recurrence.Month, `{"monthlyOccurrences":[{"day":"friday", "occurrence":-3}]}`,
		"on the third-to-last Friday of every month at 12:25 (UTC)", "on the third-to-last Friday of every month at the start time (UTC)"},
	{"Run on the first and last Friday of every month at 5:15 AM", recurrence.Month, `{"minutes":[15], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
		"on the first and last Friday of every month at 05:15 (UTC)", ""},
	{"Run on the first and last Friday of every month at start time", recurrence.Month, `{"monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
		"on the first and last Friday of every month at 12:25 (UTC)", "on the first and last Friday of every month at the start time (UTC)"},
	{"Run on the fifth Friday of every month at start time", recurrence.Month, `{"monthlyOccurrences":[{"day":"friday", "occurrence":5}]}`,
		"on the fifth Friday of every month at 12:25 (UTC)", "on the fifth Friday of every month at the start time (UTC)"},
	{"Run every 15 minutes on the last Friday of the month", recurrence.Month, `{"minutes":[0,15,30,45], "monthlyOccurrences":[{"day":"friday", "occurrence":-1}]}`,
		"every 15 minutes on the last Friday of every month (UTC)", ""},
	{"Run at 5:15 AM, 5:45 AM, 5:15 PM, and 5:45 PM on the third Wednesday of every month", recurrence.Month, `{"minutes":[15,45], "hours":[5,17], "monthlyOccurrences":[{"day":"wednesday", "occurrence":3}]}`,
		"on the third Wednesday of every month at 05:15, 05:45, 17:15 and 17:45 (UTC)", ""},
}

// exampleStart is the start of the known descriptions: Tuesday 12:25 UTC.
var exampleStart = time.Date(2026, 1, 6, 12, 25, 0, 0, time.UTC)

func TestDescribeAzureExamples(t *testing.T) {
	if len(azureExamples) != 31 {
		t.Fatalf("%d examples, want the table's 31 rows", len(azureExamples))
	}
	for _, ex := range azureExamples {
		t.Run(ex.doc, func(t *testing.T) {
			var s recurrence.Schedule
			if err := json.Unmarshal([]byte(ex.schedule), &s); err != nil {
				t.Fatal(err)
			}
			r := &recurrence.Recurrence{Frequency: ex.freq, Interval: 1, Schedule: &s}
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := r.Describe(exampleStart); got != ex.known {
				t.Errorf("Describe(%v) = %q, want %q", exampleStart, got, ex.known)
			}
			unknown := ex.unknown
			if unknown == "" {
				unknown = ex.known // the schedule names everything
			}
			if got := r.Describe(time.Time{}); got != unknown {
				t.Errorf("Describe(zero) = %q, want %q", got, unknown)
			}
			checkAgainstOccurrences(t, r, exampleStart)
		})
	}
}

func TestDescribe(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	ny := mustZone(t, "America/New_York")
	tests := []struct {
		name  string
		rec   string
		start time.Time
		want  string
	}{
		// The documentation's example job.
		{"documented job", `{"frequency":"week","interval":1,"schedule":{"weekDays":["Monday","Wednesday","Friday"],"hours":[10,22],"minutes":[0]},"count":10,"endTime":"2012-11-04T00:00:00Z"}`,
			time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC), "every week on Monday, Wednesday and Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov 2012"},
		// Without a schedule: the start's time, day and month.
		{"every 15 minutes", `{"frequency":"minute","interval":15}`, exampleStart, "every 15 minutes"},
		{"every minute", `{"frequency":"minute"}`, exampleStart, "every minute"},
		{"every hour", `{"frequency":"hour"}`, exampleStart, "every hour at minute 25"},
		{"every 3 hours in a zone", `{"frequency":"hour","interval":3,"timeZone":"Asia/Kolkata"}`, exampleStart, "every 3 hours at minute 55 (Asia/Kolkata)"},
		{"every hour with seconds", `{"frequency":"hour"}`, exampleStart.Add(42 * time.Second), "at second 42 of every hour at minute 25"},
		{"every 3 hours with seconds", `{"frequency":"hour","interval":3}`, exampleStart.Add(time.Second), "at second 1 of every 3 hours at minute 25"},
		{"every other day with seconds", `{"frequency":"day","interval":2}`, exampleStart.Add(30 * time.Second), "every 2 days at 12:25:30 (UTC)"},
		{"every 2 weeks", `{"frequency":"week","interval":2}`, exampleStart, "every 2 weeks on Tuesday at 12:25 (UTC)"},
		{"every month", `{"frequency":"month"}`, exampleStart, "on the 6th of every month at 12:25 (UTC)"},
		{"every 3rd month", `{"frequency":"month","interval":3}`, exampleStart, "on the 6th of every 3rd month at 12:25 (UTC)"},
		{"every other month on the 31st", `{"frequency":"month","interval":2}`, time.Date(2026, 1, 31, 8, 0, 0, 0, time.UTC), "on the 31st of every other month at 08:00 (UTC)"},
		{"every year", `{"frequency":"year"}`, exampleStart, "every year on 6 January at 12:25 (UTC)"},
		{"every 4 years in two months", `{"frequency":"year","interval":4,"schedule":{"months":[2,8],"hours":[6],"minutes":[0]}}`, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
			"every 4 years on the 29th of February and August at 06:00 (UTC)"},
		// Times of day.
		{"half hours in two runs", `{"frequency":"day","schedule":{"minutes":[0,30],"hours":[8,9,10,11,12,18,19,20]}}`, exampleStart,
			"every 30 minutes from 08:00 to 12:30 and from 18:00 to 20:30 (UTC)"},
		{"irregular minutes", `{"frequency":"day","schedule":{"minutes":[0,7,13],"hours":[8,9,10,11,12]}}`, exampleStart,
			"every day at minutes 0, 7 and 13 of hours 8 to 12 (UTC)"},
		{"quarter hours off the hour", `{"frequency":"day","schedule":{"minutes":[5,20,35,50]}}`, exampleStart, "every hour at minutes 5, 20, 35 and 50"},
		{"quarter hours off the hour in some hours", `{"frequency":"day","schedule":{"minutes":[5,20,35,50],"hours":[9,10,11,12]}}`, exampleStart,
			"every 15 minutes from 09:05 to 12:50 (UTC)"},
		{"every minute in office hours", `{"frequency":"minute","schedule":{"hours":[9,10,11,12,13,14,15,16]}}`, exampleStart, "every minute from 09:00 to 16:59 (UTC)"},
		{"every 5 minutes in office hours", `{"frequency":"minute","interval":5,"schedule":{"hours":[9,10,11,12,13,14,15,16]}}`, exampleStart, "every 5 minutes in hours 9 to 16 (UTC)"},
		{"every 10 minutes, some kept", `{"frequency":"minute","interval":10,"schedule":{"minutes":[0,30]}}`, exampleStart.Truncate(time.Hour), "every 10 minutes, only at minutes 0 and 30 (UTC)"},
		{"every 2 hours in some hours", `{"frequency":"hour","interval":2,"schedule":{"minutes":[15],"hours":[8,10,12,14,16,18]}}`, exampleStart,
			"every 2 hours at minute 15 in hours 8, 10, 12, 14, 16 and 18 (UTC)"},
		{"hourly with a schedule", `{"frequency":"hour","schedule":{"minutes":[15,45]}}`, exampleStart, "every hour at minutes 15 and 45"},
		{"minutely schedule once a day", `{"frequency":"minute","schedule":{"minutes":[5],"hours":[9]}}`, exampleStart, "every day at 09:05 (UTC)"},
		{"every 15 minutes every other day", `{"frequency":"day","interval":2,"schedule":{"minutes":[0,15,30,45]}}`, exampleStart, "every 15 minutes, every 2 days"},
		// Seconds.
		{"every 10 seconds in elapsed time", `{"frequency":"second","interval":10}`, exampleStart, "every 10 seconds"},
		{"every second in elapsed time", `{"frequency":"second"}`, exampleStart, "every second"},
		{"every 10 seconds on the clock", `{"frequency":"minute","schedule":{"seconds":[0,10,20,30,40,50]}}`, exampleStart, "every 10 seconds"},
		{"every second on the clock", `{"frequency":"second","schedule":{"hours":[9]}}`, exampleStart, "every second from 09:00 to 09:59 (UTC)"},
		{"seconds without minutes every day", `{"frequency":"day","schedule":{"seconds":[15,45]}}`, exampleStart, "every minute at seconds 15 and 45"},
		{"one second at fixed times", `{"frequency":"day","schedule":{"seconds":[30],"minutes":[0],"hours":[9,17]}}`, exampleStart, "every day at 09:00:30 and 17:00:30 (UTC)"},
		{"seconds at fixed times", `{"frequency":"day","schedule":{"seconds":[0,20,40],"minutes":[0],"hours":[9]}}`, exampleStart, "every 20 seconds in the minute 09:00 (UTC)"},
		{"a second of every hour", `{"frequency":"hour","schedule":{"seconds":[30],"minutes":[5]}}`, exampleStart, "at second 30 of every hour at minute 5"},
		{"every 7 seconds, some kept", `{"frequency":"second","interval":7,"schedule":{"seconds":[0,7,14],"minutes":[0,30]}}`, exampleStart.Truncate(time.Hour),
			"every 7 seconds, only at seconds 0, 7 and 14 in minutes 0 and 30 (UTC)"},
		// Weeks.
		{"weekend on the hour", `{"frequency":"week","schedule":{"weekDays":["Sunday","Saturday"],"minutes":[0]}}`, exampleStart, "every hour on the hour on Saturday and Sunday (UTC)"},
		{"fortnightly, Monday first", `{"frequency":"week","interval":2,"schedule":{"weekDays":["Sunday","Thursday","Monday","Tuesday"],"hours":[8],"minutes":[0]}}`, exampleStart,
			"every 2 weeks on Monday, Tuesday, Thursday and Sunday at 08:00 (UTC)"},
		{"every 15 minutes fortnightly", `{"frequency":"week","interval":2,"schedule":{"weekDays":["Friday"],"minutes":[0,15,30,45]}}`, exampleStart,
			"every 15 minutes on Friday, every 2 weeks (UTC)"},
		// Months: days, weekdays of the month and months.
		{"last Friday in Berlin", `{"frequency":"month","schedule":{"monthlyOccurrences":[{"day":"Friday","occurrence":-1}],"hours":[5],"minutes":[15]},"timeZone":"Europe/Berlin"}`,
			time.Date(2026, 1, 1, 0, 0, 0, 0, berlin), "on the last Friday of every month at 05:15 (Europe/Berlin)"},
		{"days and weekdays together", `{"frequency":"month","schedule":{"monthlyOccurrences":[{"day":"Friday","occurrence":-2},{"day":"Monday"},{"day":"Friday","occurrence":2}],"monthDays":[31,15],"hours":[9],"minutes":[0]}}`,
			exampleStart, "on the 15th, the 31st, every Monday and the second and second-to-last Friday of every month at 09:00 (UTC)"},
		{"second-to-last day in two months", `{"frequency":"month","schedule":{"months":[12,6],"monthDays":[-2],"hours":[23],"minutes":[59]}}`, exampleStart,
			"on the second-to-last day of June and December at 23:59 (UTC)"},
		{"every 3rd month in December", `{"frequency":"month","interval":3,"schedule":{"months":[12],"monthDays":[1,14],"hours":[0],"minutes":[0]}}`, time.Date(2027, 3, 11, 17, 0, 0, 0, time.UTC),
			"on the 1st and 14th of every 3rd month that is December at 00:00 (UTC)"},
		{"fifth and fourth-to-last", `{"frequency":"month","schedule":{"monthlyOccurrences":[{"day":"Sunday","occurrence":5},{"day":"Sunday","occurrence":-4}],"hours":[7],"minutes":[0]}}`, exampleStart,
			"on the fifth and fourth-to-last Sunday of every month at 07:00 (UTC)"},
		// count and endTime.
		{"count one", `{"frequency":"day","count":1,"schedule":{"hours":[9],"minutes":[0]}}`, exampleStart, "every day at 09:00 (UTC), once"},
		{"count and a timed end in the zone", `{"frequency":"day","count":3,"endTime":"2026-03-01T12:30:00Z","timeZone":"Europe/Berlin","schedule":{"hours":[9],"minutes":[0]}}`,
			exampleStart, "every day at 09:00 (Europe/Berlin), 3 times, until 1 Mar 2026 13:30"},
		{"end with seconds", `{"frequency":"minute","interval":15,"endTime":"2026-03-01T12:30:15Z"}`, exampleStart, "every 15 minutes, until 1 Mar 2026 12:30:15"},
		// Daylight saving time: the zone's changes in the start's year.
		{"Berlin 02:30", `{"frequency":"day","schedule":{"hours":[2],"minutes":[30]},"timeZone":"Europe/Berlin"}`, exampleStart,
			"every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward; 02:30 runs once when clocks go back)"},
		{"New York 01:30 and 02:30", `{"frequency":"day","schedule":{"hours":[1,2],"minutes":[30]},"timeZone":"America/New_York"}`, time.Date(2025, 1, 1, 0, 0, 0, 0, ny),
			"every day at 01:30 and 02:30 (America/New_York; 02:30 runs at 03:30 when clocks go forward; 01:30 runs once when clocks go back)"},
		{"New York weekly at 01:15 and 01:45", `{"frequency":"week","schedule":{"weekDays":["Sunday"],"hours":[1],"minutes":[15,45]},"timeZone":"Eastern Standard Time"}`, exampleStart,
			"every week on Sunday at 01:15 and 01:45 (Eastern Standard Time; 01:15 and 01:45 run once when clocks go back)"},
		{"Berlin from the start's 02:30", `{"frequency":"day","timeZone":"Europe/Berlin"}`, time.Date(2026, 1, 5, 2, 30, 0, 0, berlin),
			"every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward; 02:30 runs once when clocks go back)"},
		{"New York every 30 minutes", `{"frequency":"hour","schedule":{"minutes":[0,30]},"timeZone":"America/New_York"}`, exampleStart,
			"every 30 minutes (America/New_York)"},
		{"New York cron step through the repeated hour", `{"cron":"30 1-3/2 * * *","frequency":"day","schedule":{"hours":[1,3],"minutes":[30]},"timeZone":"America/New_York"}`, exampleStart,
			"every day at 01:30 and 03:30 (America/New_York; 01:30 runs twice when clocks go back)"},
		{"New York cron step through the gap", `{"cron":"0,30 2-4/2 * * *","frequency":"day","schedule":{"hours":[2,4],"minutes":[0,30]},"timeZone":"America/New_York"}`, exampleStart,
			"every day at 02:00, 02:30, 04:00 and 04:30 (America/New_York; 02:00 and 02:30 are skipped when clocks go forward)"},
		{"Berlin outside the changes", `{"frequency":"day","schedule":{"hours":[4],"minutes":[0]},"timeZone":"Europe/Berlin"}`, exampleStart, "every day at 04:00 (Europe/Berlin)"},
		{"Berlin hourly in elapsed time", `{"frequency":"hour","timeZone":"Europe/Berlin"}`, time.Date(2026, 1, 5, 2, 30, 0, 0, berlin), "every hour at minute 30 (Europe/Berlin)"},
		{"no changes in Kolkata", `{"frequency":"day","schedule":{"hours":[2],"minutes":[30]},"timeZone":"Asia/Kolkata"}`, exampleStart, "every day at 02:30 (Asia/Kolkata)"},
		{"every 15 minutes in a zone", `{"frequency":"day","schedule":{"minutes":[0,15,30,45]},"timeZone":"Asia/Kolkata"}`, exampleStart, "every 15 minutes (Asia/Kolkata)"},
		// Without a start.
		{"no start: week", `{"frequency":"week","interval":2}`, time.Time{}, "every 2 weeks on the start time's weekday at the start time (UTC)"},
		{"no start: month", `{"frequency":"month"}`, time.Time{}, "on the start time's day of every month at the start time (UTC)"},
		{"no start: year", `{"frequency":"year"}`, time.Time{}, "every year on the start time's date at the start time (UTC)"},
		{"no start: year in months", `{"frequency":"year","schedule":{"months":[3,9],"hours":[6],"minutes":[0]}}`, time.Time{},
			"every year on the start time's day of March and September at 06:00 (UTC)"},
		{"no start: hourly", `{"frequency":"hour","interval":3}`, time.Time{}, "every 3 hours"},
		{"no start: DST unknown", `{"frequency":"day","schedule":{"hours":[2],"minutes":[30]},"timeZone":"Europe/Berlin"}`, time.Time{}, "every day at 02:30 (Europe/Berlin)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recurrence.Recurrence
			if err := json.Unmarshal([]byte(tt.rec), &r); err != nil {
				t.Fatal(err)
			}
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := r.Describe(tt.start); got != tt.want {
				t.Errorf("Describe(%v) = %q, want %q", tt.start, got, tt.want)
			}
			if !tt.start.IsZero() {
				checkAgainstOccurrences(t, &r, tt.start)
			}
		})
	}
	if got := (*recurrence.Recurrence)(nil).Describe(exampleStart); got != "once" {
		t.Errorf("nil.Describe = %q, want once", got)
	}
}

// clockPattern finds the times of day a description lists.
var clockPattern = regexp.MustCompile(`\b\d\d:\d\d(:\d\d)?\b`)

// checkAgainstOccurrences compares a description with the first
// occurrences of the rule: when it lists times of day with "at", every
// occurrence not moved by a daylight saving change falls on one of them
// and each of them occurs; every weekday it names (for a weekly rule)
// occurs, and no other.
func checkAgainstOccurrences(t *testing.T, r *recurrence.Recurrence, start time.Time) {
	t.Helper()
	desc := r.Describe(start)
	rule, err := recurrence.Compile(r, start)
	if err != nil {
		t.Fatal(err)
	}
	core, _, _ := strings.Cut(desc, " (")
	core, _, _ = strings.Cut(core, ", until")
	var listed []string
	if i := strings.LastIndex(core, " at "); i >= 0 && !strings.Contains(core, "minute") && !strings.Contains(core, "start time") {
		listed = clockPattern.FindAllString(core[i:], -1)
	}
	seenClock := map[string]bool{}
	seenDay := map[string]bool{}
	n := 0
	for at := range rule.Occurrences(start) {
		local := at.In(rule.Location())
		if len(listed) > 0 && !rule.Shifted(at) {
			c := local.Format("15:04")
			if len(listed[0]) == 8 {
				c = local.Format("15:04:05")
			}
			if !slices.Contains(listed, c) {
				t.Errorf("occurrence %v at %s is not among the times of %q", at, c, desc)
			}
			seenClock[c] = true
		}
		seenDay[local.Weekday().String()] = true
		if n++; n == 400 {
			break
		}
	}
	for _, c := range listed {
		if !seenClock[c] && n == 400 {
			t.Errorf("%q lists %s, which none of the first %d occurrences has", desc, c, n)
		}
	}
	if r.Frequency == recurrence.Week && !strings.Contains(core, " to ") && n == 400 {
		for d := time.Sunday; d <= time.Saturday; d++ {
			if named := strings.Contains(core, d.String()); named != seenDay[d.String()] {
				t.Errorf("%q names %v: %v, but it occurs: %v", desc, d, named, seenDay[d.String()])
			}
		}
	}
}

func TestShifted(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	start := time.Date(2025, 3, 7, 0, 0, 0, 0, ny)
	tests := []struct {
		name string
		rec  recurrence.Recurrence
		want []string // occurrences in New York time, * when shifted
	}{
		{"02:30 daily", recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}}},
			[]string{"03-07 02:30", "03-08 02:30", "03-09 03:30*", "03-10 02:30"}},
		{"02:30 and 03:30 daily", recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Hours: []int{2, 3}, Minutes: []int{30}}},
			[]string{"03-07 02:30", "03-07 03:30", "03-08 02:30", "03-08 03:30", "03-09 03:30", "03-10 02:30"}},
		{"from the start's 02:30", recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "America/New_York"},
			[]string{"03-07 02:30", "03-08 02:30", "03-09 03:30*", "03-10 02:30"}},
		{"elapsed hours never shift", recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 24, TimeZone: "America/New_York"},
			[]string{"03-07 02:30", "03-08 02:30", "03-09 03:30", "03-10 03:30"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start.Add(150 * time.Minute) // 02:30
			rule, err := recurrence.Compile(&tt.rec, s)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for at := range rule.Occurrences(s) {
				mark := ""
				if rule.Shifted(at) {
					mark = "*"
				}
				got = append(got, at.In(ny).Format("01-02 15:04")+mark)
				if len(got) == len(tt.want) {
					break
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("occurrences = %q, want %q", got, tt.want)
			}
		})
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no zone data:", err)
	}
	return loc
}

// TestRepeated checks that Repeated marks the second pass of a repeated
// time, for a schedule whose hour is free, and nothing for one whose hour
// is fixed.
func TestRepeated(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	start := time.Date(2026, 11, 1, 0, 45, 0, 0, ny)
	tests := []struct {
		name string
		rec  recurrence.Recurrence
		want []string // occurrences in New York time, + when repeated
	}{
		{"every 30 minutes", recurrence.Recurrence{Frequency: recurrence.Hour, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Minutes: []int{0, 30}}},
			[]string{"01:00 EDT", "01:30 EDT", "01:00 EST+", "01:30 EST+", "02:00 EST"}},
		{"01:00 and 01:30", recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Hours: []int{1}, Minutes: []int{0, 30}}},
			[]string{"01:00 EDT", "01:30 EDT", "01:00 EST", "01:30 EST"}},
		{"elapsed time", recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 30, TimeZone: "America/New_York"},
			[]string{"00:45 EDT", "01:15 EDT", "01:45 EDT", "01:15 EST", "01:45 EST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, err := recurrence.Compile(&tt.rec, start)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for at := range rule.Occurrences(start) {
				mark := ""
				if rule.Repeated(at) {
					mark = "+"
				}
				got = append(got, at.In(ny).Format("15:04 MST")+mark)
				if len(got) == len(tt.want) {
					break
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("occurrences = %q, want %q", got, tt.want)
			}
		})
	}
}
