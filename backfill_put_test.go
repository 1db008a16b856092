package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestBackfillKeptByPut: a put of a changed definition keeps the
// occurrences that wait to be backfilled, as a pause does: each of them
// runs once, under the definition put, marked Backfill (the put here
// enables a job that was disabled, or is made while a scheduled
// occurrence's attempt runs). With the put
// while a scheduled occurrence's attempt runs, that attempt's outcome is
// recorded as its own and not taken for the first backfilled one's.
func TestBackfillKeptByPut(t *testing.T) {
	for _, during := range []bool{false, true} {
		name := "disabled"
		if during {
			name = "while an attempt runs"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				e := newEnv(t, scheduler.Config{})
				e.exec.fn = func(req *action.Request, n int) error {
					time.Sleep(20 * time.Second)
					return nil
				}
				start := e.t0.Add(-10 * time.Minute)
				e.put("j", jobJSON(start, `"recurrence": {"frequency": "Minute", "interval": 1}`))
				e.start()
				defer e.stop()
				time.Sleep(5 * time.Second) // the occurrence at t0 runs
				if !during {
					// Nothing starts the backfilled ones before the put,
					// which enables the job.
					time.Sleep(20 * time.Second)
					if _, err := e.s.DisableJob(ctx, "c", "j"); err != nil {
						t.Fatal(err)
					}
				}
				want := []time.Time{e.t0.Add(-5 * time.Minute), e.t0.Add(-4 * time.Minute), e.t0.Add(-3 * time.Minute)}
				got, err := e.s.BackfillJob(ctx, "c", "j", want[0], want[2], nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("backfill (-want +got):\n%s", diff)
				}
				// A new definition: the same schedule, with a run policy.
				e.put("j", jobJSON(start, `"recurrence": {"frequency": "Minute", "interval": 1}, "runPolicy": {"overlap": "Skip"}`))
				time.Sleep(3 * time.Minute)
				synctest.Wait()
				ran := map[time.Time]int{}
				for _, h := range e.history("j") {
					if h.ActionName == scheduler.MainAction && h.Status == scheduler.StatusCompleted {
						if h.Backfill {
							ran[h.ExpectedExecutionTime.UTC()]++
						} else if h.ExpectedExecutionTime.Before(e.t0) {
							t.Errorf("an entry of %v is not marked Backfill", h.ExpectedExecutionTime)
						}
					}
				}
				for _, at := range want {
					if ran[at.UTC()] != 1 {
						t.Errorf("the occurrence expected at %v ran %d times as backfilled, want once", at, ran[at.UTC()])
					}
				}
				if during {
					n := 0
					for _, req := range e.exec.requests() {
						if req.ExpectedTime.Equal(e.t0) {
							n++
						}
					}
					if n != 1 {
						t.Errorf("the occurrence at t0 ran %d times, want once", n)
					}
				}
			})
		})
	}
}
