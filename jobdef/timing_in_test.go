package jobdef_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/recurrence"
)

// TestTimingIn checks that TimingIn writes the timing that TimingUnder
// returns, for a job without recurrence and one with, and leaves its
// Timing as it was when the recurrence does not compile.
func TestTimingIn(t *testing.T) {
	created := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	start := created.Add(time.Hour)
	for _, tc := range []struct {
		name string
		job  *jobdef.Job
	}{
		{"one time", &jobdef.Job{StartTime: &start}},
		{"one time, started", &jobdef.Job{}},
		{"recurring", &jobdef.Job{StartTime: &start, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 2, Count: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := tc.job.TimingUnder("c", "j", created, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got jobdef.Timing
			if err := tc.job.TimingIn(&got, "c", "j", created, nil); err != nil {
				t.Fatalf("TimingIn: %v", err)
			}
			if got.First() != want.First() || got.Count() != want.Count() || got.Next(want.First()) != want.Next(want.First()) {
				t.Errorf("TimingIn gave first %v, count %d, next %v; want %v, %d, %v", got.First(), got.Count(), got.Next(got.First()),
					want.First(), want.Count(), want.Next(want.First()))
			}
		})
	}
	bad := &jobdef.Job{Recurrence: &recurrence.Recurrence{Frequency: "Fortnight", Interval: 1}}
	var got jobdef.Timing
	if err := (&jobdef.Job{StartTime: &start}).TimingIn(&got, "c", "j", created, nil); err != nil {
		t.Fatal(err)
	}
	if err := bad.TimingIn(&got, "c", "j", created, nil); err == nil {
		t.Error("TimingIn of a recurrence that does not compile succeeded")
	}
	if got.First() != start {
		t.Errorf("after a failed TimingIn the Timing's first occurrence is %v, want %v as before", got.First(), start)
	}
}
