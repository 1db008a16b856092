package scheduler_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

func mustParse(t *testing.T, in string) *scheduler.Job {
	t.Helper()
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob(%s): %v", in, err)
	}
	return j
}

func jobWith(startTime, recurrence string) string {
	s := `{"action": ` + httpAction
	if startTime != "" {
		s += `, "startTime": "` + startTime + `"`
	}
	if recurrence != "" {
		s += `, "recurrence": ` + recurrence
	}
	return s + "}"
}

func times(ss ...string) []time.Time {
	var out []time.Time
	for _, s := range ss {
		out = append(out, date(s))
	}
	return out
}

// take collects at most n occurrences.
func take(tm *scheduler.Timing, n int) []time.Time {
	var out []time.Time
	for at := range tm.Occurrences() {
		out = append(out, at.UTC())
		if len(out) == n {
			break
		}
	}
	return out
}

func TestJobTiming(t *testing.T) {
	tests := []struct {
		name      string
		startTime string
		rec       string
		created   string
		n         int // occurrences to take
		want      []time.Time
	}{
		{name: "no recurrence, no start: run now", created: "2026-03-01T10:17:03.5Z", n: 5,
			want: times("2026-03-01T10:17:03.5Z")},
		{name: "no recurrence, future start", startTime: "2026-03-02T08:00Z", created: "2026-03-01T10:00:00Z", n: 5,
			want: times("2026-03-02T08:00:00Z")},
		{name: "no recurrence, past start: run now", startTime: "2026-02-01T08:00Z", created: "2026-03-01T10:00:00Z", n: 5,
			want: times("2026-03-01T10:00:00Z")},
		{name: "no schedule, no start: grid from creation", rec: `{"frequency": "minute", "interval": 15}`,
			created: "2026-03-01T10:17:03Z", n: 3,
			want: times("2026-03-01T10:17:03Z", "2026-03-01T10:32:03Z", "2026-03-01T10:47:03Z")},
		// The Azure documentation's example: the first run is the first grid
		// point at or after the creation time, whichever past start is given.
		{name: "no schedule, past start 04-07", startTime: "2015-04-07T14:00Z", rec: `{"frequency": "day", "interval": 2}`,
			created: "2015-04-08T13:00:00Z", n: 4,
			want: times("2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z", "2015-04-15T14:00:00Z")},
		{name: "no schedule, past start 04-05", startTime: "2015-04-05T14:00Z", rec: `{"frequency": "day", "interval": 2}`,
			created: "2015-04-08T13:00:00Z", n: 2,
			want: times("2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z")},
		{name: "no schedule, past start 04-01", startTime: "2015-04-01T14:00Z", rec: `{"frequency": "day", "interval": 2}`,
			created: "2015-04-08T13:00:00Z", n: 2,
			want: times("2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z")},
		{name: "no schedule, created on a grid point", startTime: "2015-04-07T14:00Z", rec: `{"frequency": "day", "interval": 2}`,
			created: "2015-04-09T14:00:00Z", n: 1, want: times("2015-04-09T14:00:00Z")},
		{name: "no schedule, future start", startTime: "2015-04-07T14:00Z", rec: `{"frequency": "hour", "interval": 6}`,
			created: "2015-04-01T00:00:00Z", n: 3,
			want: times("2015-04-07T14:00:00Z", "2015-04-07T20:00:00Z", "2015-04-08T02:00:00Z")},
		// The documented example job: starts Saturday 2012-08-04, runs
		// Monday, Wednesday and Friday at 10:00 and 22:00, 10 times.
		{name: "schedule, created before start", startTime: "2012-08-04T00:00Z",
			rec:     `{"frequency": "week", "schedule": {"weekDays": ["monday", "wednesday", "friday"], "hours": [10, 22]}, "count": 10, "endTime": "2012-11-04"}`,
			created: "2012-08-01T00:00:00Z", n: 20,
			want: times("2012-08-06T10:00:00Z", "2012-08-06T22:00:00Z", "2012-08-08T10:00:00Z", "2012-08-08T22:00:00Z",
				"2012-08-10T10:00:00Z", "2012-08-10T22:00:00Z", "2012-08-13T10:00:00Z", "2012-08-13T22:00:00Z",
				"2012-08-15T10:00:00Z", "2012-08-15T22:00:00Z")},
		{name: "schedule, created after start", startTime: "2012-08-04T00:00Z",
			rec:     `{"frequency": "week", "schedule": {"weekDays": ["monday", "wednesday", "friday"], "hours": [10, 22]}, "count": 3}`,
			created: "2012-08-07T12:00:00Z", n: 20,
			want: times("2012-08-08T10:00:00Z", "2012-08-08T22:00:00Z", "2012-08-10T10:00:00Z")},
		{name: "schedule, no start: first match after creation",
			rec:     `{"frequency": "day", "schedule": {"hours": [9], "minutes": [30]}}`,
			created: "2026-03-01T10:00:00Z", n: 2,
			want: times("2026-03-02T09:30:00Z", "2026-03-03T09:30:00Z")},
		// Every other week, counted from the week holding startTime
		// (Wednesday 2026-01-07, week of Monday 01-05): Mondays 01-19,
		// 02-02, ...; created 01-20, the first is 02-02.
		{name: "schedule, periods count from start", startTime: "2026-01-07T09:30Z",
			rec:     `{"frequency": "week", "interval": 2, "schedule": {"weekDays": ["monday"]}}`,
			created: "2026-01-20T00:00:00Z", n: 2,
			want: times("2026-02-02T09:30:00Z", "2026-02-16T09:30:00Z")},
		{name: "count and endTime: endTime first, inclusive", startTime: "2026-01-01T06:00Z",
			rec:     `{"frequency": "day", "count": 5, "endTime": "2026-01-03T06:00Z"}`,
			created: "2025-12-01T00:00:00Z", n: 10,
			want: times("2026-01-01T06:00:00Z", "2026-01-02T06:00:00Z", "2026-01-03T06:00:00Z")},
		{name: "count and endTime: count first", startTime: "2026-01-01T06:00Z",
			rec:     `{"frequency": "day", "count": 2, "endTime": "2026-02-01"}`,
			created: "2025-12-01T00:00:00Z", n: 10,
			want: times("2026-01-01T06:00:00Z", "2026-01-02T06:00:00Z")},
		{name: "count counts from the first that runs", startTime: "2026-01-01T06:00Z",
			rec:     `{"frequency": "day", "count": 2}`,
			created: "2026-01-10T00:00:00Z", n: 10,
			want: times("2026-01-10T06:00:00Z", "2026-01-11T06:00:00Z")},
		{name: "endTime in the past: nothing", startTime: "2026-01-01T06:00Z",
			rec:     `{"frequency": "day", "endTime": "2026-01-05"}`,
			created: "2026-02-01T00:00:00Z", n: 10, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := mustParse(t, jobWith(tt.startTime, tt.rec))
			tm, err := j.Timing("reports", "nightly", date(tt.created))
			if err != nil {
				t.Fatalf("Timing: %v", err)
			}
			got := take(tm, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Occurrences() mismatch (-want +got):\n%s", diff)
			}
			var first time.Time
			if len(tt.want) > 0 {
				first = tt.want[0]
			}
			if !tm.First().Equal(first) {
				t.Errorf("First() = %v, want %v", tm.First(), first)
			}
			// Next, chained from before the first, gives the same
			// sequence as long as count does not cut it.
			if tt.n > 1 && len(tt.want) > 1 {
				at := tm.Next(first.Add(-time.Hour))
				for i, w := range tt.want {
					if !at.Equal(w) {
						t.Fatalf("Next chain [%d] = %v, want %v", i, at, w)
					}
					at = tm.Next(at)
				}
			}
		})
	}
}

func TestTimingNextIgnoresCount(t *testing.T) {
	j := mustParse(t, jobWith("2026-01-01T06:00Z", `{"frequency": "day", "count": 1}`))
	tm, err := j.Timing("reports", "nightly", date("2025-12-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Count(); got != 1 {
		t.Errorf("Count() = %d, want 1", got)
	}
	if got, want := take(tm, 10), times("2026-01-01T06:00:00Z"); !cmp.Equal(got, want) {
		t.Errorf("Occurrences() = %v, want %v", got, want)
	}
	if got, want := tm.Next(date("2026-01-01T06:00:00Z")), date("2026-01-02T06:00:00Z"); !got.Equal(want) {
		t.Errorf("Next(first) = %v, want %v (count is the caller's)", got, want)
	}
	if got, want := tm.Next(date("2026-01-01T07:00:00Z")), date("2026-01-02T06:00:00Z"); !got.Equal(want) {
		t.Errorf("Next(between) = %v, want %v", got, want)
	}
}

func TestTimingWithoutRecurrence(t *testing.T) {
	j := mustParse(t, jobWith("2026-01-01T06:00Z", ""))
	tm, err := j.Timing("reports", "nightly", date("2025-12-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	first := date("2026-01-01T06:00:00Z")
	if got := tm.Count(); got != 1 {
		t.Errorf("Count() = %d, want 1", got)
	}
	if got := tm.Next(first.Add(-time.Second)); !got.Equal(first) {
		t.Errorf("Next(before first) = %v, want %v", got, first)
	}
	if got := tm.Next(first); !got.IsZero() {
		t.Errorf("Next(first) = %v, want zero", got)
	}
}

func TestTimingDocumentedExample(t *testing.T) {
	data, err := os.ReadFile("testdata/azure-example.json")
	if err != nil {
		t.Fatal(err)
	}
	j, err := scheduler.ParseJob(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Created after endTime: the job completes without running.
	tm, err := j.Timing("reports", "nightly", date("2013-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if !tm.First().IsZero() || len(take(tm, 5)) != 0 || !tm.Next(date("2012-01-01T00:00:00Z")).IsZero() {
		t.Errorf("job created after its endTime has occurrences: First() = %v", tm.First())
	}
}

func TestTimingErrors(t *testing.T) {
	j := mustParse(t, jobWith("", `{"frequency": "day"}`))
	if _, err := j.Timing("reports", "nightly", time.Time{}); err == nil {
		t.Errorf("Timing(zero creation time) succeeded, want error")
	}
	j.Recurrence.Frequency = "Fortnight"
	if _, err := j.Timing("reports", "nightly", date("2026-01-01T00:00:00Z")); err == nil {
		t.Errorf("Timing(invalid recurrence) succeeded, want error")
	}
}

// TestTimingInUTC checks that a timing's instants are in UTC whatever the
// recurrence's zone, so that what PutJob returns reads like what a store
// gives back later.
func TestTimingInUTC(t *testing.T) {
	j := &scheduler.Job{Recurrence: &recurrence.Recurrence{Cron: "CRON_TZ=Europe/Berlin 30 2 * * *"}}
	timing, err := j.Timing("reports", "nightly", date("2026-03-28T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	first, next := timing.First(), timing.Next(timing.First())
	if first.Location() != time.UTC || next.Location() != time.UTC {
		t.Errorf("First() = %v, Next() = %v; want both in UTC", first, next)
	}
	if !first.Equal(date("2026-03-28T01:30:00Z")) || !next.Equal(date("2026-03-29T01:30:00Z")) {
		t.Errorf("First() = %v, Next() = %v; want 02:30 CET, then 03:30 CEST", first, next)
	}
}

// TestParseCreated: without startTime, the check that a schedule can run
// counts from ParseOptions.Created (else Now), as the job's Timing does.
func TestParseCreated(t *testing.T) {
	quarterly := jobWith("", `{"frequency": "Month", "interval": 3, "schedule": {"months": [12], "monthDays": [1, 14]}}`)
	march, feb := date("2027-03-11T17:00:00Z"), date("2027-02-11T17:00:00Z")
	tests := []struct {
		name string
		in   string
		opts scheduler.ParseOptions
		err  string // empty: valid
	}{
		{"created in March", quarterly, scheduler.ParseOptions{Created: march}, ""},
		{"now in March", quarterly, scheduler.ParseOptions{Now: march}, ""},
		{"created wins over now", quarterly, scheduler.ParseOptions{Created: march, Now: feb}, ""},
		{"created in February", quarterly, scheduler.ParseOptions{Created: feb},
			"recurrence.schedule.months: never matches: every 3 months counted from the creation time 2027-02-11T17:00:00Z are February, May, August and November, none of them a listed month"},
		{"startTime wins", jobWith("2027-03-11T17:00:00Z", `{"frequency": "Month", "interval": 3, "schedule": {"months": [12], "monthDays": [1, 14]}}`),
			scheduler.ParseOptions{Created: feb}, ""},
		{"no creation time: not named", quarterly, scheduler.ParseOptions{},
			"recurrence.schedule.months: never matches: every 3 months are January, April, July and October, none of them a listed month"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scheduler.ParseJob([]byte(tt.in), &tt.opts)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.err {
				t.Errorf("ParseJob error = %q, want %q", got, tt.err)
			}
		})
	}
}

func TestJobDescribe(t *testing.T) {
	created := date("2026-01-06T12:25:00Z")
	tests := []struct {
		name, in, want string
		zone           string
	}{
		{"recurrence from the creation time", jobWith("", `{"frequency": "Day"}`), "every day at 12:25 (UTC)", "UTC"},
		{"recurrence from startTime", jobWith("2026-02-01T08:00:00+01:00", `{"frequency": "Week", "timeZone": "Europe/Berlin"}`),
			"every week on Sunday at 08:00 (Europe/Berlin)", "Europe/Berlin"},
		{"calendar, skipped", jobWith("", `{"frequency": "Day", "calendar": "holidays"}`),
			"every day at 12:25 (UTC), except on the days calendar “holidays” excludes (skipped)", "UTC"},
		{"calendar, moved forward", jobWith("", `{"frequency": "Day", "calendar": "holidays", "onExcluded": "nextIncluded"}`),
			"every day at 12:25 (UTC), except on the days calendar “holidays” excludes (moved to the next day it does not exclude)", "UTC"},
		{"calendar, moved back", jobWith("", `{"frequency": "Day", "calendar": "holidays", "onExcluded": "PreviousIncluded"}`),
			"every day at 12:25 (UTC), except on the days calendar “holidays” excludes (moved to the previous day it does not exclude)", "UTC"},
		{"once in the future", jobWith("2026-02-01T08:00:00Z", ""), "once at 1 Feb 2026 08:00 (UTC)", "UTC"},
		{"once, startTime passed", jobWith("2025-02-01T08:00:00Z", ""), "once, when created", "UTC"},
		{"once, no startTime", jobWith("", ""), "once, when created", "UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := mustParse(t, tt.in)
			if got := j.Describe(created); got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
			if got := j.Location().String(); got != tt.zone {
				t.Errorf("Location = %s, want %s", got, tt.zone)
			}
		})
	}
}
