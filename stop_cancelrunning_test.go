package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestStopDoesNotSupersede: a Scheduler that is stopping claims no more
// occurrences, so the attempt of a CancelRunning job that it waits for is
// not cancelled when the job's next occurrence comes due: that occurrence
// is not this instance's to run. The attempt ends on its own, its outcome
// is recorded, and the next occurrence waits for another instance, which
// runs it.
func TestStopDoesNotSupersede(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ActionTimeout: 2 * time.Minute})
		var mu sync.Mutex
		var got []string // expected time of each request, and how its context ended
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			var how string
			select {
			case <-time.After(90 * time.Second):
				how = "ran 90s"
			case <-ctx.Done():
				how = "cancelled: " + context.Cause(ctx).Error()
			}
			mu.Lock()
			got = append(got, req.ExpectedTime.Sub(e.t0).String()+" "+how)
			mu.Unlock()
			if how != "ran 90s" {
				return nil, ctx.Err()
			}
			return &action.Result{Message: "ok"}, nil
		}))
		e.cfg.Executors = reg
		e.s = e.newScheduler()
		e.start()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}, "runPolicy": {"overlap": "CancelRunning"}`))
		time.Sleep(90 * time.Second)
		e.stop() // at 1m30s: waits for the attempt of 1m, which the occurrence of 2m does not cancel
		if stopped := time.Since(e.t0); stopped != 150*time.Second {
			t.Errorf("Stop returned at %v, want 2m30s (the end of the attempt)", stopped)
		}
		if h := e.history("j"); len(h) != 1 || h[0].Status != scheduler.StatusCompleted || !h[0].ExpectedExecutionTime.Equal(e.t0.Add(time.Minute)) {
			t.Errorf("history after Stop = %+v, want the attempt of 1m Completed", h)
		}

		// Another instance, from 2m40s, runs the occurrence of 2m.
		time.Sleep(10 * time.Second)
		e.s = e.newScheduler()
		e.start()
		time.Sleep(time.Second)
		synctest.Wait()
		e.stop()
		want := []string{"1m0s ran 90s", "2m0s ran 90s"}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
	})
}
