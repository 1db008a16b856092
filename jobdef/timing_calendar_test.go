package jobdef_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/jobdef"
)

// TestFirstUnderCalendarNotBeforeCreation: a job's first occurrence is one
// its rule gives at or after its creation; one given before it and moved
// past it by NextIncluded does not run. A weekly job on Saturdays at 09:00
// with the weekends excluded, created on Sunday 2026-01-11, first runs on
// Monday 2026-01-19 (Saturday the 17th moved), not on Monday the 12th
// (Saturday the 10th, before it existed, moved).
func TestFirstUnderCalendarNotBeforeCreation(t *testing.T) {
	cal, err := jobdef.ParseCalendar([]byte(`{"properties": {"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	excl, err := cal.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		on      string
		created time.Time
		want    time.Time
	}{
		{"NextIncluded", time.Date(2026, 1, 11, 12, 0, 0, 0, time.UTC), time.Date(2026, 1, 19, 9, 0, 0, 0, time.UTC)},
		// Created on the Saturday before its run: that one is given after
		// the creation and moves to Monday.
		{"NextIncluded", time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC), time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)},
		{"PreviousIncluded", time.Date(2026, 1, 11, 12, 0, 0, 0, time.UTC), time.Date(2026, 1, 16, 9, 0, 0, 0, time.UTC)},
	} {
		job, err := jobdef.ParseJob([]byte(`{"startTime": "2026-01-03T09:00:00Z", "action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
			"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Saturday"], "hours": [9], "minutes": [0]}, "calendar": "weekends", "onExcluded": "`+tt.on+`"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := job.TimingUnder("c", "j", tt.created, excl)
		if err != nil {
			t.Fatal(err)
		}
		if got := tm.First(); !got.Equal(tt.want) {
			t.Errorf("%s, created %v: first occurrence %v, want %v", tt.on, tt.created, got, tt.want)
		}
	}
}

// TestReplan: the occurrence a job planned under one version of its
// calendar runs, under another, where the new version places the
// occurrence scheduled at the same instant: skipped or moved when it is
// now excluded, back at its scheduled instant when a day that moved it is
// no longer excluded, never at or before the occurrence scheduled before
// it; and Replan leaves the instants a timing gives where they are.
func TestReplan(t *testing.T) {
	timing := func(t *testing.T, rec, on, cal string) *jobdef.Timing {
		t.Helper()
		c, err := jobdef.ParseCalendar([]byte(cal))
		if err != nil {
			t.Fatal(err)
		}
		e, err := c.Compile()
		if err != nil {
			t.Fatal(err)
		}
		job, err := jobdef.ParseJob([]byte(`{"startTime": "2026-01-03T09:00:00Z", "action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
			"recurrence": {`+rec+`, "calendar": "cal", "onExcluded": "`+on+`"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := job.TimingUnder("c", "j", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), e)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	const (
		saturdays = `"frequency": "Week", "schedule": {"weekDays": ["Saturday"], "hours": [9], "minutes": [0]}`
		daily     = `"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}`
		none      = `{"properties": {"dates": ["2020-01-01"]}}`
		weekends  = `{"properties": {"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`
		the17th   = `{"properties": {"dates": ["2026-01-17"]}}`
	)
	at := func(day, hour int) time.Time { return time.Date(2026, 1, day, hour, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		name                string
		rec, on, cal        string
		planned             time.Time
		want, wantScheduled time.Time
	}{
		{"NextIncluded moves the excluded Saturday", saturdays, "NextIncluded", weekends, at(17, 9), at(19, 9), at(17, 9)},
		{"NextIncluded brings the Saturday back", saturdays, "NextIncluded", none, at(19, 9), at(17, 9), at(17, 9)},
		{"PreviousIncluded moves the excluded Saturday", saturdays, "PreviousIncluded", weekends, at(17, 9), at(16, 9), at(17, 9)},
		{"PreviousIncluded brings the Saturday back", saturdays, "PreviousIncluded", none, at(16, 9), at(17, 9), at(17, 9)},
		{"Skip passes the excluded Saturday over", saturdays, "Skip", the17th, at(17, 9), at(24, 9), at(17, 9)},
		{"moved onto the next occurrence runs as it", daily, "NextIncluded", the17th, at(17, 9), at(18, 9), at(17, 9)},
		{"moved onto the previous occurrence runs as it", daily, "PreviousIncluded", the17th, at(17, 9), at(18, 9), at(17, 9)},
		{"Skip leaves the others", daily, "Skip", the17th, at(16, 9), at(16, 9), at(16, 9)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tm := timing(t, tt.rec, tt.on, tt.cal)
			got, scheduled := tm.Replan(tt.planned)
			if !got.Equal(tt.want) || !scheduled.Equal(tt.wantScheduled) {
				t.Errorf("Replan(%v) = %v, %v, want %v, %v", tt.planned, got, scheduled, tt.want, tt.wantScheduled)
			}
		})
	}
	const spread = `"frequency": "Hour", "interval": 5, "window": "PT3H"`
	for _, on := range []string{"Skip", "NextIncluded", "PreviousIncluded"} {
		for _, cal := range []string{weekends, the17th, none} {
			for _, rec := range []string{daily, spread} {
				tm := timing(t, rec, on, cal)
				n := 0
				for at := range tm.Occurrences() {
					if got, _ := tm.Replan(at); !got.Equal(at) {
						t.Errorf("%s, %s under %s: Replan(%v) = %v, want it unchanged", rec, on, cal, at, got)
					}
					if n++; n == 120 {
						break
					}
				}
			}
		}
	}
}
