package jobdef_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/recurrence"
)

// TestTimingInstantsInUTC checks that every instant a Timing returns is in
// UTC, whatever the zone of startTime, of the creation time and of the
// recurrence: a job without recurrence as well as one with.
func TestTimingInstantsInUTC(t *testing.T) {
	plus2 := time.FixedZone("", 2*3600)
	created := time.Date(2030, 1, 2, 3, 4, 5, 0, plus2)
	start := created.Add(time.Hour)
	for _, tc := range []struct {
		name string
		job  *jobdef.Job
	}{
		{"one time", &jobdef.Job{StartTime: &start}},
		{"one time, started when created", &jobdef.Job{}},
		{"recurring", &jobdef.Job{StartTime: &start, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour, Count: 2, TimeZone: "Europe/Berlin"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timing, err := tc.job.Timing("c", "j", created)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for at := range timing.Occurrences() {
				if at.Location() != time.UTC {
					t.Errorf("occurrence %v is not in UTC", at)
				}
				n++
			}
			if n == 0 {
				t.Fatal("no occurrences")
			}
			if first := timing.First(); first.Location() != time.UTC {
				t.Errorf("First() = %v, not in UTC", first)
			}
			if next := timing.Next(created.Add(-time.Minute)); next.Location() != time.UTC {
				t.Errorf("Next(%v) = %v, not in UTC", created.Add(-time.Minute), next)
			}
		})
	}
}
