package recurrence_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// The documented schedule: Monday, Wednesday and Friday at 10:00 and 22:00
// UTC (minute 0, from the start), counting from 2012-08-04 (a Saturday), at
// most 10 runs, ending 2012-11-04.
func ExampleRule_Occurrences() {
	var rec recurrence.Recurrence
	err := json.Unmarshal([]byte(`{
		"frequency": "week",
		"interval": 1,
		"schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22]},
		"count": 10,
		"endTime": "2012-11-04T00:00:00Z"
	}`), &rec)
	if err != nil {
		panic(err)
	}
	start := time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC)
	rule, err := recurrence.Compile(&rec, start)
	if err != nil {
		panic(err)
	}
	n := 0
	for t := range rule.Occurrences(start) {
		fmt.Println(t.Format("Mon 2006-01-02 15:04"))
		if n++; n == 5 {
			break
		}
	}
	// Output:
	// Mon 2012-08-06 10:00
	// Mon 2012-08-06 22:00
	// Wed 2012-08-08 10:00
	// Wed 2012-08-08 22:00
	// Fri 2012-08-10 10:00
}

// A schedule in a time zone keeps its wall clock time across daylight
// saving changes; 02:30 does not exist on 2025-03-09 in New York, so that
// day's run moves forward by the gap, to 03:30.
func ExampleRule_Next() {
	rule, err := recurrence.Compile(&recurrence.Recurrence{
		Frequency: recurrence.Day,
		TimeZone:  "Eastern Standard Time",
		Schedule:  &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}},
	}, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	t := time.Date(2025, 3, 8, 0, 0, 0, 0, time.UTC)
	for range 3 {
		t = rule.Next(t)
		fmt.Println(t.Format(time.RFC3339), t.UTC().Format("15:04Z"))
	}
	// Output:
	// 2025-03-08T02:30:00-05:00 07:30Z
	// 2025-03-09T03:30:00-04:00 07:30Z
	// 2025-03-10T02:30:00-04:00 06:30Z
}

func ExampleRecurrence_Validate() {
	var rec recurrence.Recurrence
	_ = json.Unmarshal([]byte(`{"frequency":"fortnight","schedule":{"hours":[5,25],"weekDays":["Monday","Funday"]}}`), &rec)
	fmt.Println(rec.Validate())
	// Output:
	// frequency: "fortnight" is not a frequency (Second, Minute, Hour, Day, Week, Month or Year)
	// schedule.hours[1]: 25 is not an hour (0-23)
	// schedule.weekDays[1]: "Funday" is not a day of the week (Monday to Sunday)
}

// A crontab line becomes a recurrence that reads like it: weekdays at
// 9:00, 9:15, ... 16:45, Berlin time. Written as JSON it keeps the spec
// next to the fields it stands for.
func ExampleParseCron() {
	rec, err := recurrence.ParseCron("CRON_TZ=Europe/Berlin */15 9-16 * * 1-5")
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(rec)
	fmt.Println(string(out))

	rule, err := recurrence.Compile(rec, time.Date(2026, 3, 27, 15, 40, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	for t := range rule.Occurrences(time.Date(2026, 3, 27, 15, 40, 0, 0, time.UTC)) {
		fmt.Println(t.Format("Mon 2006-01-02 15:04 MST"))
		if t.Weekday() == time.Monday {
			break
		}
	}

	_, err = recurrence.ParseCron("0 24 * * *")
	fmt.Println(err)
	// Output:
	// {"cron":"CRON_TZ=Europe/Berlin */15 9-16 * * 1-5","frequency":"Week","timeZone":"Europe/Berlin","schedule":{"minutes":[0,15,30,45],"hours":[9,10,11,12,13,14,15,16],"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday"]}}
	// Fri 2026-03-27 16:45 CET
	// Mon 2026-03-30 09:00 CEST
	// cron: field 2 (hours): 24 is out of range 0-23
}

// A recurrence in words: what the schedule leaves out (here the minute)
// comes from the start, and the zone is named with what its daylight
// saving changes do to the times.
func ExampleRecurrence_Describe() {
	var rec recurrence.Recurrence
	err := json.Unmarshal([]byte(`{
		"frequency": "week",
		"schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22]},
		"count": 10,
		"endTime": "2012-11-04T00:00:00Z"
	}`), &rec)
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Describe(time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC)))

	lastFriday := &recurrence.Recurrence{Frequency: recurrence.Month, TimeZone: "Europe/Berlin",
		Schedule: &recurrence.Schedule{MonthlyOccurrences: []recurrence.MonthlyOccurrence{{Day: recurrence.Friday, Occurrence: -1}}, Hours: []int{5}, Minutes: []int{15}}}
	fmt.Println(lastFriday.Describe(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	nightly := &recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "Europe/Berlin",
		Schedule: &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}}}
	fmt.Println(nightly.Describe(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	fmt.Println((&recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 15}).Describe(time.Time{}))
	// Output:
	// every week on Monday, Wednesday and Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov 2012
	// on the last Friday of every month at 05:15 (Europe/Berlin)
	// every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward; 02:30 runs once when clocks go back)
	// every 15 minutes
}

// A window of 15 minutes spreads an hourly job: each occurrence runs at
// its scheduled instant plus an offset that the job's collection and name
// decide, the same on every scheduler instance.
func ExampleCompileJob() {
	r := &recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: []int{0}},
		Extensions: &recurrence.Extensions{Window: retry.Duration(15 * time.Minute)}}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rule, err := recurrence.CompileJob(r, start, "reports", "nightly")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Describe(start))
	for at := range rule.Occurrences(start) {
		fmt.Println(at.Format(time.TimeOnly), "scheduled", rule.Scheduled(at).Format(time.TimeOnly))
		if at.Hour() == 2 {
			break
		}
	}
	// Output:
	// every hour on the hour, spread over 15 minutes
	// 00:07:55 scheduled 00:00:00
	// 01:02:28 scheduled 01:00:00
	// 02:12:27 scheduled 02:00:00
}

// H in a cron spec stands for a value each job gets from its collection
// and name.
func ExampleRecurrence_ExpandCronJob() {
	for _, job := range []string{"nightly", "hourly"} {
		r, err := (&recurrence.Recurrence{Cron: "H 2 * * *"}).ExpandCronJob("reports", job)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(job+":", r.Describe(time.Time{}))
	}
	// Output:
	// nightly: every day at 02:18 (UTC), by H for this job: minute 18
	// hourly: every day at 02:42 (UTC), by H for this job: minute 42
}
