package scheduler_test

import (
	"fmt"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

func ExampleParseJob() {
	job, err := scheduler.ParseJob([]byte(`{
		// Call the report endpoint every weekday at 06:30 UTC.
		"action": {
			"type": "https",
			"request": {"uri": "https://example.com/reports", "method": "post", "body": "{}"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 3},
		},
		"recurrence": {
			"frequency": "week",
			"schedule": {"weekDays": ["monday", "tuesday", "wednesday", "thursday", "friday"], "hours": [6], "minutes": [30]},
		},
	}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(job.Action.Type, job.Action.Request.Method, job.Action.Request.URI)
	fmt.Println(job.Action.RetryPolicy.Retries(), "retries", job.Action.RetryPolicy.Delay(1, ""), "apart")
	fmt.Println(job.Recurrence.Frequency, job.Recurrence.Schedule.WeekDays)
	// Output:
	// Https POST https://example.com/reports
	// 3 retries 1m0s apart
	// Week [Monday Tuesday Wednesday Thursday Friday]
}

func ExampleParseJob_errors() {
	_, err := scheduler.ParseJob([]byte(`{
		"action": {"type": "https", "request": {"urii": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "day", "interval": "two", "schedule": {"hours": [9, 25]}},
		"state": "Completed"
	}`), nil)
	for _, e := range scheduler.ValidationErrors(err) {
		fmt.Println(e)
	}
	// Output:
	// action.request.uri: is required
	// action.request.urii: unknown field, did you mean "uri"?
	// recurrence.interval: "two" is not an integer
	// recurrence.schedule.hours[1]: 25 is not an hour (0-23)
	// state: "Completed" cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)
}

func ExampleJob_Timing() {
	// The Azure Scheduler documentation's example: every other day from
	// 2015-04-07 14:00, with the job created on 2015-04-08 at 13:00. Past
	// occurrences are discarded; the grid still counts from startTime.
	job, err := scheduler.ParseJob([]byte(`{
		"startTime": "2015-04-07T14:00Z",
		"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "day", "interval": 2, "count": 3}
	}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	timing, err := job.Timing("reports", "nightly", time.Date(2015, 4, 8, 13, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	for at := range timing.Occurrences() {
		fmt.Println(at.UTC().Format(time.RFC3339))
	}
	// Output:
	// 2015-04-09T14:00:00Z
	// 2015-04-11T14:00:00Z
	// 2015-04-13T14:00:00Z
}
