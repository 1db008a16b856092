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
