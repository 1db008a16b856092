package scheduler

import (
	"testing"
	"time"
)

// BenchmarkStepUnderCalendar takes the due occurrence of a daily job at
// 09:00 whose calendar excludes weekends (moved to Monday) and plans the
// next: the engine's step for a job that names a calendar.
func BenchmarkStepUnderCalendar(b *testing.B) {
	cal, err := ParseCalendar([]byte(`{"properties": {"timeZone": "Europe/Berlin", "dates": ["2030-12-25"],
		"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`))
	if err != nil {
		b.Fatal(err)
	}
	excl, err := cal.Compile()
	if err != nil {
		b.Fatal(err)
	}
	job, err := ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}, "timeZone": "Europe/Berlin", "calendar": "cal", "onExcluded": "NextIncluded"}}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	tm, err := job.TimingUnder("c", "j", base, excl)
	if err != nil {
		b.Fatal(err)
	}
	m := machine{policy: RunPolicy{Missed: MissedRunOnce, Overlap: OverlapPostpone}, threshold: time.Minute, noEntries: true}
	first := tm.First()
	r0 := &JobRecord{Collection: "c", Name: "j", Job: job, State: JobEnabled, Schedule: JobSchedule{Anchor: base, NextOccurrence: first}}
	for b.Loop() {
		r := *r0
		if _, due, _ := m.step(&r, tm, first); !due {
			b.Fatal("no occurrence due")
		}
	}
}
