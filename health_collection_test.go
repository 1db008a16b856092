package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestHealthOfDisabledCollection: the jobs of a collection that is not
// Enabled do not come due, so, as a paused job, they are neither Late nor
// Stale: not on GetJob, not in ListJobs (nor its health filter), not in
// HealthCounts; and they have no nextExecutionTime. Once the collection
// is Enabled again, the job due since then is Late, with its next
// execution time.
func TestHealthOfDisabledCollection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "interval": 1}`))
		if _, err := e.s.DisableCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		// No instance runs the loop: the job's record stays due from its
		// first occurrence on, as when its collection holds it.
		time.Sleep(10 * time.Minute) // ten occurrences would have come due
		check := func(s *scheduler.Scheduler, want scheduler.JobHealth) {
			t.Helper()
			r, err := s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status.Health != want {
				t.Errorf("GetJob: health %s, want %s", r.Status.Health, want)
			}
			// Its nextExecutionTime is none while its occurrences do not
			// come due, as the dashboard shows it.
			running := want == scheduler.HealthLate
			if (r.Status.NextExecutionTime != nil) != running {
				t.Errorf("GetJob: nextExecutionTime %v, want one: %v", r.Status.NextExecutionTime, running)
			}
			list, err := s.ListJobs(ctx, "c", nil)
			if err != nil || len(list) != 1 || list[0].Status.Health != want || (list[0].Status.NextExecutionTime != nil) != running {
				t.Errorf("ListJobs = %v, %v; want the job with health %s, a nextExecutionTime: %v", list, err, want, running)
			}
			for _, h := range []scheduler.JobHealth{scheduler.HealthLate, scheduler.HealthStale, scheduler.HealthOK} {
				list, err := s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Health: h})
				if n := map[bool]int{true: 1}[h == want]; err != nil || len(list) != n {
					t.Errorf("ListJobs(health %s) = %d jobs, %v; want %d", h, len(list), err, n)
				}
			}
			counts, err := s.HealthCounts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if counts[want] != 1 {
				t.Errorf("HealthCounts = %v, want one job %s", counts, want)
			}
		}
		check(e.s, scheduler.HealthOK)
		// Another Scheduler over the store, which has not read the
		// collection yet, says the same.
		check(e.newScheduler(), scheduler.HealthOK)
		if _, err := e.s.EnableCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		check(e.s, scheduler.HealthLate)
	})
}
