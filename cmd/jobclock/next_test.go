package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNext(t *testing.T) {
	everyOtherDay := `{"startTime": "2015-04-07T14:00Z",
		"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "day", "interval": 2}}`
	quarterlyDecember := `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Month", "interval": 3, "schedule": {"months": [12], "monthDays": [1, 14]}}}`
	spaced := filepath.Join(t.TempDir(), "0 9 * * *.json")
	if err := os.WriteFile(spaced, []byte(everyOtherDay), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []nextCase{
		{name: "paused with a run policy", args: []string{"-n", "2", "-from", "2026-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "day"}, "state": "disabled", "stateReason": "holidays", "resumeTime": "2026-01-07T00:00Z",
				"runPolicy": {"missed": "RunAll", "catchUpWindow": "PT2H", "overlap": "Skip"}}`,
			stdout: "2026-01-05T09:00:00Z\n2026-01-06T09:00:00Z\n",
			stderr: "schedule: every day at 09:00 (UTC)\n" +
				"paused until 2026-01-07T00:00:00Z (holidays): the occurrences before it do not run on time; when it resumes, each of them runs, one after the other, except those later than PT2H, which are skipped (missed RunAll)\n" +
				"run policy: missed RunAll, catch-up window PT2H, overlap Skip (skipped while the previous one is in progress) (its collection's and the scheduler's settings fill in the rest)\n"},
		{name: "side by side", args: []string{"-n", "1", "-from", "2026-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "minute"}, "runPolicy": {"overlap": "allowAll"}}`,
			stdout: "2026-01-05T09:00:00Z\n",
			stderr: "schedule: every minute\n" +
				"run policy: overlap AllowAll (each starts on time, beside those in progress; at most 10 at once) (its collection's and the scheduler's settings fill in the rest)\n"},
		{name: "disabled", args: []string{"-n", "1", "-from", "2026-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "day"}, "state": "disabled"}`,
			stdout: "2026-01-05T09:00:00Z\n",
			stderr: "schedule: every day at 09:00 (UTC)\ndisabled: none of these runs until the job is enabled, which starts it from then\n"},
		{name: "documented past start", stdin: everyOtherDay, args: []string{"-n", "3", "-from", "2015-04-08T13:00Z", "-"},
			stdout: "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n2015-04-13T14:00:00Z\n", stderr: "schedule: every 2 days at 14:00 (UTC)\n"},
		{name: "flags after the file", stdin: everyOtherDay, args: []string{"-", "-n", "2", "-from", "2015-04-08T13:00Z"},
			stdout: "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n", stderr: "schedule: every 2 days at 14:00 (UTC)\n"},
		{name: "default ten", stdin: everyOtherDay, args: []string{"-from", "2015-04-08", "-"},
			stdout: "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n2015-04-13T14:00:00Z\n2015-04-15T14:00:00Z\n2015-04-17T14:00:00Z\n" +
				"2015-04-19T14:00:00Z\n2015-04-21T14:00:00Z\n2015-04-23T14:00:00Z\n2015-04-25T14:00:00Z\n2015-04-27T14:00:00Z\n",
			stderr: "schedule: every 2 days at 14:00 (UTC)\n"},
		{name: "count ends sooner", args: []string{"-n", "10", "-from", "2026-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "week", "count": 2}}`,
			stdout: "2026-01-05T09:00:00Z\n2026-01-12T09:00:00Z\n", stderr: "schedule: every week on Monday at 09:00 (UTC), 2 times\n"},
		{name: "endTime ends sooner, inclusive", args: []string{"-from", "2026-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00+01:00", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "day", "endTime": "2026-01-07T08:00Z"}}`,
			stdout: "2026-01-05T08:00:00Z\n2026-01-06T08:00:00Z\n2026-01-07T08:00:00Z\n", stderr: "schedule: every day at 08:00 (UTC), until 7 Jan 2026 08:00\n"},
		{name: "endTime passed: nothing", args: []string{"-from", "2027-01-01", "-"},
			stdin: `{"startTime": "2026-01-05T09:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "day", "endTime": "2026-02-01"}}`,
			stdout: "", stderr: "schedule: every day at 09:00 (UTC), until 1 Feb 2026\n"},
		{name: "no recurrence", args: []string{"-from", "2026-01-01T10:00Z", "-"},
			stdin:  `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}`,
			stdout: "2026-01-01T10:00:00Z\n", stderr: "schedule: once, when created\n"},
		{name: "documented example job", args: []string{"-n", "3", "-from", "2012-08-01", "../../testdata/azure-example.json"},
			stdout: "2012-08-06T10:00:00Z\n2012-08-06T22:00:00Z\n2012-08-08T10:00:00Z\n",
			stderr: "schedule: every week on Monday, Wednesday and Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov 2012\n" +
				"disabled: none of these runs until the job is enabled, which starts it from then\n"}, // the example is Disabled
		// 08:30 in Paris on the 15th and the last Friday: 07:30Z in winter,
		// 06:30Z in summer.
		{name: "time zone winter", args: []string{"-n", "4", "-from", "2026-01-01", "../../testdata/monthly-timezone-job.json"},
			stdout: "2026-01-15T07:30:00Z\n2026-01-30T07:30:00Z\n2026-02-15T07:30:00Z\n2026-02-27T07:30:00Z\n",
			stderr: "schedule: on the 15th and the last Friday of every month at 08:30 (Europe/Paris)\n"},
		{name: "time zone summer", args: []string{"-n", "2", "-from", "2026-06-01", "../../testdata/monthly-timezone-job.json"},
			stdout: "2026-06-15T06:30:00Z\n2026-06-26T06:30:00Z\n", stderr: "schedule: on the 15th and the last Friday of every month at 08:30 (Europe/Paris)\n"},
		{name: "local times", args: []string{"-n", "2", "-local", "-q", "-from", "2026-03-20", "../../testdata/monthly-timezone-job.json"},
			stdout: "2026-03-27T08:30:00+01:00\n2026-04-15T08:30:00+02:00\n"},
		{name: "quiet", args: []string{"-q", "-n", "1", "-from", "2015-04-08T13:00Z", "-"}, stdin: everyOtherDay,
			stdout: "2015-04-09T14:00:00Z\n"},
		// Without startTime, -from is the creation instant: every 3 months
		// from March reaches December.
		{name: "creation instant reaches the months", stdin: quarterlyDecember, args: []string{"-n", "3", "-from", "2027-03-11T17:00:00Z", "-"},
			stdout: "2027-12-01T17:00:00Z\n2027-12-14T17:00:00Z\n2028-12-01T17:00:00Z\n",
			stderr: "schedule: on the 1st and 14th of every 3rd month that is December at 17:00 (UTC)\n"},
		{name: "same job with startTime", args: []string{"-n", "3", "-q", "-from", "2020-01-01", "-"},
			stdin:  strings.Replace(quarterlyDecember, "{", `{"startTime": "2027-03-11T17:00:00Z",`, 1),
			stdout: "2027-12-01T17:00:00Z\n2027-12-14T17:00:00Z\n2028-12-01T17:00:00Z\n"},
		{name: "creation instant never reaches the months", stdin: quarterlyDecember, args: []string{"-from", "2027-02-11T17:00:00Z", "-"}, code: 1,
			stderr: "recurrence.schedule.months: never matches: every 3 months counted from the creation time 2027-02-11T17:00:00Z are February, May, August and November, none of them a listed month\n"},
		{name: "invalid job", args: []string{"-"}, code: 1, stdin: `{"action": {"type": "http"}}`,
			stderr: "action.request: is required for type Http\n"},
		{name: "n zero", args: []string{"-n", "0", "-"}, stdin: everyOtherDay, code: 2, stderr: "must be at least 1"},
		{name: "n not a number", args: []string{"-n", "x", "-"}, stdin: everyOtherDay, code: 2, stderr: "invalid value"},
		{name: "bad from", args: []string{"-from", "yesterday", "-"}, stdin: everyOtherDay, code: 2, stderr: `-from: "yesterday" is not an ISO 8601 time`},
		{name: "no file", args: []string{}, code: 2, stderr: "Usage: jobclock next"},

		// A window: planned instants, each with its scheduled one; the
		// job's name and collection decide them (as recurrence's
		// TestWindowPinned pins for reports/nightly).
		{name: "window", stdin: hourlySpread, args: []string{"-n", "3", "-from", "2026-01-01T00:00:00Z", "-collection", "reports", "-job", "nightly", "-"},
			stdout: "2026-01-01T00:07:55Z  scheduled 2026-01-01T00:00:00Z\n2026-01-01T01:02:28Z  scheduled 2026-01-01T01:00:00Z\n2026-01-01T02:12:27Z  scheduled 2026-01-01T02:00:00Z\n",
			stderr: "schedule: every hour on the hour, spread over 15 minutes\n"},
		{name: "window in another collection", stdin: hourlySpread, args: []string{"-q", "-n", "1", "-from", "2026-01-01T00:00:00Z", "-collection", "billing", "-job", "nightly", "-"},
			stdout: "2026-01-01T00:04:36Z  scheduled 2026-01-01T00:00:00Z\n"},
		// The instants the engine runs c/spread at, in the root
		// package's TestWindowThroughEngine.
		{name: "window of the engine's job", stdin: hourlySpread, args: []string{"-q", "-n", "3", "-from", "2000-01-01T01:00:00Z", "-collection", "c", "-job", "spread", "-"},
			stdout: "2000-01-01T01:14:26Z  scheduled 2000-01-01T01:00:00Z\n2000-01-01T02:13:11Z  scheduled 2000-01-01T02:00:00Z\n2000-01-01T03:11:13Z  scheduled 2000-01-01T03:00:00Z\n"},
		// A collection file of jobclock run: -job chooses the job, and
		// the file names its collection.
		{name: "collection file", args: []string{"-n", "2", "-job", "a", "-from", "2026-01-05T00:00Z", "-"},
			stdin: `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Day"}},
				"b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Hour"}}}}`,
			stdout: "2026-01-05T00:00:00Z\n2026-01-06T00:00:00Z\n", stderr: "schedule: every day at 00:00 (UTC)\n"},
		{name: "collection file, window", args: []string{"-q", "-n", "3", "-from", "2026-01-01T00:00:00Z", "-job", "nightly", "-"},
			stdin:  `{"name": "reports", "jobs": {"nightly": ` + hourlySpread + `}}`,
			stdout: "2026-01-01T00:07:55Z  scheduled 2026-01-01T00:00:00Z\n2026-01-01T01:02:28Z  scheduled 2026-01-01T01:00:00Z\n2026-01-01T02:12:27Z  scheduled 2026-01-01T02:00:00Z\n"},
		{name: "collection file without -job", args: []string{"-"}, code: 2,
			stdin:  `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}, "b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}}}`,
			stderr: `jobclock next: - holds the jobs a, b of collection "x": give -job NAME` + "\n"},
		{name: "collection file, another -job", args: []string{"-job", "c", "-"}, code: 2,
			stdin:  `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}, "b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}}}`,
			stderr: `jobclock next: - holds the jobs a, b of collection "x": -job "c" is not one of them` + "\n"},
		// The problems of the file's other jobs do not stop next.
		{name: "collection file, another job invalid", args: []string{"-n", "1", "-job", "a", "-from", "2026-01-05T00:00Z", "-"},
			stdin: `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Day"}},
				"b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Hourly"}}}}`,
			stdout: "2026-01-05T00:00:00Z\n", stderr: "schedule: every day at 00:00 (UTC)\n"},
		{name: "collection file, the job chosen invalid", args: []string{"-job", "b", "-"}, code: 1,
			stdin: `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "statee": 1},
				"b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Hourly"}}}}`,
			stderr: `jobs.b.recurrence.frequency: "Hourly" is not a frequency, did you mean "Hour"?` + "\n"},
		{name: "collection file without -job, a job invalid", args: []string{"-"}, code: 2,
			stdin: `{"name": "x", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}},
				"b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Hourly"}}}}`,
			stderr: `jobclock next: - holds the jobs a, b of collection "x": give -job NAME` + "\n"},
		{name: "window without a job name", stdin: hourlySpread, args: []string{"-"}, code: 2,
			stderr: `jobclock next: the instants depend on the job's name and collection (its recurrence has a window, or H in its cron spec): give -job NAME (and -collection NAME, default "default")` + "\n"},
		// H in a cron spec: the job's own minute (recurrence's
		// TestCronHashPinned pins 18 for reports/nightly).
		{name: "cron H", args: []string{"-n", "2", "-from", "2026-01-01T00:00:00Z", "-collection", "reports", "-job", "nightly", "-cron", "H * * * *"},
			stdout: "2026-01-01T00:18:00Z\n2026-01-01T01:18:00Z\n",
			stderr: "schedule: every hour at minute 18, by H for this job: minute 18\n"},
		{name: "cron H as JSON", args: []string{"-json", "-collection", "reports", "-job", "nightly", "-cron", "H 9 * * *"},
			stdout: "{\n  \"frequency\": \"Day\",\n  \"schedule\": {\n    \"minutes\": [18],\n    \"hours\": [9]\n  }\n}\n"},
		{name: "cron H without a job name", args: []string{"-cron", "H * * * *"}, code: 2,
			stderr: `jobclock next: the instants depend on the job's name and collection (its recurrence has a window, or H in its cron spec): give -job NAME (and -collection NAME, default "default")` + "\n"},
		{name: "job with cron H", stdin: `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"cron": "H(0-29)/10 * * * *"}}`,
			args:   []string{"-n", "3", "-from", "2026-01-01T00:00:00Z", "-collection", "reports", "-job", "nightly", "-"},
			stdout: "2026-01-01T00:08:00Z\n2026-01-01T00:18:00Z\n2026-01-01T00:28:00Z\n",
			stderr: "schedule: every hour at minutes 8, 18 and 28, by H for this job: minutes 8, 18 and 28\n"},
		{name: "bad H", args: []string{"-job", "j", "-cron", "H(30-10) * * * *"}, code: 1,
			stderr: "jobclock next: -cron: field 1 (minutes): H(30-10) runs backwards (its start is after its end)\n"},

		// Cron specs.
		{name: "cron", args: []string{"-n", "3", "-from", "2026-01-03T10:00Z", "-cron", "0 9 * * 1-5"},
			stdout: "2026-01-05T09:00:00Z\n2026-01-06T09:00:00Z\n2026-01-07T09:00:00Z\n",
			stderr: "schedule: every week on Monday to Friday at 09:00 (UTC)\n"},
		// 02:30 does not exist in Berlin on 2026-03-29: that day runs at
		// 03:30 CEST, which is 01:30Z as well.
		{name: "cron in a zone across the clock change", args: []string{"-cron", "30 2 * * *", "-tz", "Europe/Berlin", "-n", "4", "-from", "2026-03-27"},
			stdout: "2026-03-27T01:30:00Z\n2026-03-28T01:30:00Z\n2026-03-29T01:30:00Z\n2026-03-30T00:30:00Z\n",
			stderr: "schedule: every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward; 02:30 runs once when clocks go back)\n"},
		// New York's clocks go back at 06:00Z on 2026-11-01: a spec with
		// "*" in the hour field keeps its cadence through both passes of
		// 01:00-01:59 (05:00Z-05:59Z as EDT, 06:00Z-06:59Z as EST).
		{name: "cron every 30 minutes across the clock change", args: []string{"-n", "6", "-from", "2026-11-01T04:00:00Z", "-tz", "America/New_York", "-cron", "*/30 * * * *"},
			stdout: "2026-11-01T04:00:00Z\n2026-11-01T04:30:00Z\n2026-11-01T05:00:00Z\n2026-11-01T05:30:00Z\n2026-11-01T06:00:00Z\n2026-11-01T06:30:00Z\n",
			stderr: "schedule: every 30 minutes (America/New_York)\n"},
		{name: "cron hour step runs the repeated time twice", args: []string{"-local", "-n", "4", "-from", "2026-10-31T12:00:00Z", "-tz", "America/New_York", "-cron", "30 1-3/2 * * *"},
			stdout: "2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n2026-11-01T03:30:00-05:00\n2026-11-02T01:30:00-05:00\n",
			stderr: "schedule: every day at 01:30 and 03:30 (America/New_York; 01:30 runs twice when clocks go back)\n"},
		{name: "cron fixed hour runs the repeated time once", args: []string{"-q", "-local", "-n", "3", "-from", "2026-10-31T12:00:00Z", "-tz", "America/New_York", "-cron", "30 1,3 * * *"},
			stdout: "2026-11-01T01:30:00-04:00\n2026-11-01T03:30:00-05:00\n2026-11-02T01:30:00-05:00\n"},
		{name: "cron in local time", args: []string{"-q", "-local", "-cron", "30 2 * * *", "-tz", "Europe/Berlin", "-n", "3", "-from", "2026-03-28"},
			stdout: "2026-03-28T02:30:00+01:00\n2026-03-29T03:30:00+02:00\n2026-03-30T02:30:00+02:00\n"},
		{name: "cron with its own zone", args: []string{"-n", "2", "-from", "2026-07-01", "-cron", "CRON_TZ=America/New_York @daily"},
			stdout: "2026-07-01T04:00:00Z\n2026-07-02T04:00:00Z\n",
			stderr: "schedule: every day at 00:00 (America/New_York)\n"},
		{name: "cron as JSON", args: []string{"-cron", "*/15 9-16 * * 1-5", "-tz", "W. Europe Standard Time", "-json"},
			stdout: `{
  "frequency": "Week",
  "timeZone": "W. Europe Standard Time",
  "schedule": {
    "minutes": [0, 15, 30, 45],
    "hours": [9, 10, 11, 12, 13, 14, 15, 16],
    "weekDays": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
  }
}
`},
		{name: "cron as JSON with monthly occurrences", args: []string{"-json", "-cron", "0 18 * * 5L"},
			stdout: `{
  "frequency": "Month",
  "schedule": {
    "minutes": [0],
    "hours": [18],
    "monthlyOccurrences": [
      {
        "day": "Friday",
        "Occurrence": -1
      }
    ]
  }
}
`},
		{name: "cron with seconds", args: []string{"-n", "3", "-from", "2026-01-03T10:00:05Z", "*/20 * * * * *"},
			stdout: "2026-01-03T10:00:20Z\n2026-01-03T10:00:40Z\n2026-01-03T10:01:00Z\n", stderr: "schedule: every 20 seconds\n"},
		{name: "cron every 10 seconds", args: []string{"-n", "2", "-from", "2026-01-03T10:00:05Z", "@every 10s"},
			stdout: "2026-01-03T10:00:05Z\n2026-01-03T10:00:15Z\n", stderr: "schedule: every 10 seconds\n"},
		{name: "cron without -cron", args: []string{"-n", "2", "-from", "2026-01-03T10:00Z", "0 9 * * 1-5"},
			stdout: "2026-01-05T09:00:00Z\n2026-01-06T09:00:00Z\n", stderr: "schedule: every week on Monday to Friday at 09:00 (UTC)\n"},
		{name: "cron descriptor without -cron", args: []string{"-q", "-n", "1", "-from", "2026-01-03T10:00Z", "@daily"},
			stdout: "2026-01-04T00:00:00Z\n"},
		{name: "bad cron without -cron", args: []string{"0 24 * * *"}, code: 1,
			stderr: `jobclock next: "0 24 * * *" is not a file, nor a cron spec (field 2 (hours): 24 is out of range 0-23); preview a spec with -cron "0 24 * * *"` + "\n"},
		{name: "cron with -tz but without -cron", args: []string{"-tz", "UTC", "-q", "-n", "1", "-from", "2026-01-03T10:00Z", "0 9 * * *"},
			stdout: "2026-01-04T09:00:00Z\n"},
		{name: "a file with spaces in its name is a file", args: []string{"-n", "1", "-q", "-from", "2015-04-08T13:00Z", spaced},
			stdout: "2015-04-09T14:00:00Z\n"},
		{name: "cron field out of range", args: []string{"-cron", "0 24 * * *"}, code: 1,
			stderr: "jobclock next: -cron: field 2 (hours): 24 is out of range 0-23\n"},
		{name: "cron empty", args: []string{"-cron", ""}, code: 1,
			stderr: "jobclock next: -cron: the spec is empty"},
		{name: "cron bad zone", args: []string{"-cron", "0 9 * * *", "-tz", "Mars/Olympus"}, code: 1,
			stderr: `jobclock next: -tz: "Mars/Olympus" is not a known time zone`},
		{name: "cron misspelt zone", args: []string{"-cron", "0 9 * * *", "-tz", "europe/berlin"}, code: 1,
			stderr: `jobclock next: -tz: "europe/berlin" is not a known time zone (an IANA name such as "Europe/Paris" or a Windows name such as "W. Europe Standard Time"), did you mean "Europe/Berlin"?` + "\n"},
		{name: "cron zone conflicts with -tz", args: []string{"-cron", "CRON_TZ=Europe/Berlin 0 9 * * *", "-tz", "America/New_York"}, code: 1,
			stderr: `jobclock next: -tz: "America/New_York" differs from the cron spec, which gives "Europe/Berlin"` + "\n"},
		{name: "cron and a file", args: []string{"-cron", "0 9 * * *", "-"}, stdin: everyOtherDay, code: 2, stderr: "Usage: jobclock next"},
		{name: "json without cron", args: []string{"-json", "-"}, stdin: everyOtherDay, code: 2, stderr: "Usage: jobclock next"},
		{name: "tz without cron", args: []string{"-tz", "UTC", "-"}, stdin: everyOtherDay, code: 2, stderr: "Usage: jobclock next"},
	}
	runNextCases(t, tests)
}

// nextCase is a run of jobclock next and what it prints.
type nextCase struct {
	name   string
	stdin  string
	args   []string
	code   int
	stdout string
	stderr string // exact for exit status 0, else a substring
}

// runNextCases runs jobclock next for each case and compares.
func runNextCases(t *testing.T, tests []nextCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, append([]string{"next"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit status = %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout =\n%s\nwant\n%s", stdout, tt.stdout)
			}
			if tt.code == 0 && stderr != tt.stderr || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr = %q, want %q", stderr, tt.stderr)
			}
		})
	}
}

func TestNextDefaultsToNow(t *testing.T) {
	// A job without startTime or recurrence runs once, at its creation:
	// now. The line is an RFC 3339 UTC time.
	code, stdout, stderr := runCLI(t, `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}`, "next", "-")
	if code != 0 || !strings.HasSuffix(stdout, "Z\n") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("next = %d %q %q, want one UTC time", code, stdout, stderr)
	}
}

// hourlySpread runs at minute 0 of every hour, spread over 15 minutes.
const hourlySpread = `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
	"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M"}}`

// TestNextCalendar: with -calendar, next skips and moves the occurrences
// the calendar the job names excludes, and marks them with its name; the
// calendar is read from its own JSON or from a collection file of run.
// The schedule in words says what the calendar does, applied or not.
func TestNextCalendar(t *testing.T) {
	dir := t.TempDir()
	calendar := `{"properties": {"timeZone": "Europe/Berlin", "dates": ["2026-12-25", "2026-12-26"],
		"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`
	calFile := filepath.Join(dir, "holidays.json")
	freezeFile := filepath.Join(dir, "freeze.json")
	if err := os.WriteFile(freezeFile, []byte(`{"properties": {"ranges": [{"start": "2026-12-20T08:00:01", "end": "2026-12-20T11:00:00"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Freezes that drop exactly droppedRead and droppedRead+1 of a job
	// that runs every second.
	for name, end := range map[string]string{"freeze-10000.json": "10:46:41", "freeze-10001.json": "10:46:42"} {
		range_ := `{"properties": {"ranges": [{"start": "2026-12-20T08:00:01", "end": "2026-12-20T` + end + `"}]}}`
		if err := os.WriteFile(filepath.Join(dir, name), []byte(range_), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runFile := filepath.Join(dir, "ops.json")
	if err := os.WriteFile(calFile, []byte(calendar), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runFile, []byte(`{"jobs": {"j": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}},
		"calendars": {"holidays": `+calendar+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// job is a job of recurrence rec, whose calendar is "holidays" unless
	// rec names one.
	job := func(rec string) string {
		if !strings.Contains(rec, `"calendar"`) {
			rec = `"calendar": "holidays", ` + rec
		}
		return `{"startTime": "2026-12-20T08:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
			"recurrence": {"timeZone": "Europe/Berlin", ` + rec + `}}`
	}
	every2 := `"frequency": "Day", "interval": 2`
	everySecond := `{"startTime": "2026-12-20T08:00Z", "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Second", "calendar": "freeze"}}`
	runNextCases(t, []nextCase{
		{"skip", job(every2), []string{"-n", "4", "-q", "-calendar", calFile, "-"}, 0,
			"2026-12-20T08:00:00Z  skipped (calendar \"holidays\")\n2026-12-22T08:00:00Z\n2026-12-24T08:00:00Z\n" +
				"2026-12-26T08:00:00Z  skipped (calendar \"holidays\")\n2026-12-28T08:00:00Z\n2026-12-30T08:00:00Z\n", ""},
		{"skip, several in a row", job(`"frequency": "Day"`), []string{"-n", "2", "-q", "-from", "2026-12-24T00:00Z", "-calendar", calFile, "-"}, 0,
			"2026-12-24T08:00:00Z\n2026-12-25T08:00:00Z  skipped, and 2 more to 2026-12-27T08:00:00Z (calendar \"holidays\")\n" +
				"2026-12-28T08:00:00Z\n", ""},
		{"next included, from a run file", job(every2 + `, "onExcluded": "NextIncluded"`), []string{"-n", "4", "-q", "-calendar", runFile, "-"}, 0,
			"2026-12-21T08:00:00Z  moved from 2026-12-20T08:00:00Z (calendar \"holidays\")\n2026-12-22T08:00:00Z\n2026-12-24T08:00:00Z\n" +
				"2026-12-26T08:00:00Z  merged into 2026-12-28T08:00:00Z (calendar \"holidays\")\n2026-12-28T08:00:00Z\n", ""},
		{"previous included", job(every2 + `, "onExcluded": "PreviousIncluded"`), []string{"-n", "4", "-q", "-from", "2026-12-19T00:00Z", "-calendar", calFile, "-"}, 0,
			"2026-12-20T08:00:00Z  skipped: moved before the first occurrence (calendar \"holidays\")\n2026-12-22T08:00:00Z\n2026-12-24T08:00:00Z\n" +
				"2026-12-26T08:00:00Z  merged into 2026-12-24T08:00:00Z (calendar \"holidays\")\n2026-12-28T08:00:00Z\n2026-12-30T08:00:00Z\n", ""},
		{"previous included, moved", job(`"frequency": "Week", "schedule": {"weekDays": ["Saturday"], "hours": [9], "minutes": [0]}, "onExcluded": "PreviousIncluded"`),
			[]string{"-n", "2", "-q", "-calendar", calFile, "-"}, 0,
			"2026-12-24T08:00:00Z  moved from 2026-12-26T08:00:00Z (calendar \"holidays\")\n" +
				"2027-01-01T08:00:00Z  moved from 2027-01-02T08:00:00Z (calendar \"holidays\")\n", ""},
		{"not applied without -calendar", job(every2), []string{"-n", "1", "-"}, 0, "2026-12-20T08:00:00Z\n",
			"schedule: every 2 days at 09:00 (Europe/Berlin), except on the days calendar “holidays” excludes (skipped)\n" +
				"calendar \"holidays\": not applied to the occurrences listed, as the scheduler applies it; give -calendar FILE to skip or move the ones it excludes\n"},
		{"the schedule in words with the calendar", job(every2 + `, "onExcluded": "NextIncluded"`), []string{"-n", "1", "-calendar", calFile, "-"}, 0,
			"2026-12-21T08:00:00Z  moved from 2026-12-20T08:00:00Z (calendar \"holidays\")\n",
			"schedule: every 2 days at 09:00 (Europe/Berlin), except on the days calendar “holidays” excludes (moved to the next day it does not exclude)\n"},
		{"more dropped than read", everySecond, []string{"-n", "2", "-q", "-calendar", freezeFile, "-"}, 0,
			"2026-12-20T08:00:00Z\n2026-12-20T08:00:01Z  skipped, and 9999 more to 2026-12-20T10:46:40Z (calendar \"freeze\"); " +
				"more before the next occurrence are not listed\n2026-12-20T11:00:00Z\n", ""},
		{"as many dropped as read", everySecond, []string{"-n", "2", "-q", "-calendar", filepath.Join(dir, "freeze-10000.json"), "-"}, 0,
			"2026-12-20T08:00:00Z\n2026-12-20T08:00:01Z  skipped, and 9999 more to 2026-12-20T10:46:40Z (calendar \"freeze\")\n" +
				"2026-12-20T10:46:41Z\n", ""},
		{"one more dropped than read", everySecond, []string{"-n", "2", "-q", "-calendar", filepath.Join(dir, "freeze-10001.json"), "-"}, 0,
			"2026-12-20T08:00:00Z\n2026-12-20T08:00:01Z  skipped, and 9999 more to 2026-12-20T10:46:40Z (calendar \"freeze\"); " +
				"more before the next occurrence are not listed\n2026-12-20T10:46:42Z\n", ""},
		{"a run file without the calendar", job(`"frequency": "Day", "calendar": "freeze"`), []string{"-calendar", runFile, "-"}, 1,
			"", `holds no calendar "freeze"`},
		{"a job naming none", `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "Day"}}`,
			[]string{"-calendar", calFile, "-"}, 2, "", "the job names no calendar"},
	})
}

// TestNextMinRetryInterval: next takes -min-retry-interval as run does,
// so that it lists the demo's flaky job, whose retryInterval (2 s) is
// under the default minimum, which it refuses without the flag.
func TestNextMinRetryInterval(t *testing.T) {
	demo := filepath.Join("..", "..", "examples", "demo.json")
	if code, _, stderr := runCLI(t, "", "next", "-n", "1", "-job", "flaky", demo); code != 1 || !strings.Contains(stderr, "retryInterval") {
		t.Errorf("next of flaky without -min-retry-interval = %d, stderr:\n%s\nwant 1 naming its retryInterval", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "next", "-n", "1", "-job", "flaky", "-min-retry-interval", "1s", demo)
	if code != 0 || strings.Count(stdout, "\n") != 1 {
		t.Errorf("next of flaky with -min-retry-interval 1s = %d, stdout %q, stderr:\n%s\nwant 0 and one occurrence", code, stdout, stderr)
	}
}
