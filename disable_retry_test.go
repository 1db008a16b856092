package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestDisableDropsRetryWithEntry: disabling a job whose occurrence waits
// for a retry drops the retry and records a Failed entry that says so, as
// CancelRunning does for the retry it drops; the retry does not run.
func TestDisableDropsRetryWithEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(*action.Request, int) error { return errors.New("boom") }
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}}`))
		time.Sleep(90 * time.Second) // the first attempt failed at 1m; its retry waits for 2m
		synctest.Wait()
		if _, err := e.s.DisableJob(context.Background(), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if n := len(e.exec.times(e.t0)); n != 1 {
			t.Errorf("%d attempts, want 1: the retry was dropped", n)
		}
		hist := e.history("j")
		if len(hist) != 2 {
			t.Fatalf("history %+v, want the failed attempt and the dropped retry", hist)
		}
		h := hist[0] // newest first
		want := scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed,
			ExpectedExecutionTime: e.t0.Add(time.Minute), StartTime: e.t0.Add(90 * time.Second), EndTime: e.t0.Add(90 * time.Second),
			RetryCount: 1, RepeatCount: 1, ExecutionTag: hist[1].ExecutionTag, Message: "dropped before its next attempt: the job was Disabled"}
		if diff := cmp.Diff(want, h); diff != "" || want.ExecutionTag == "" {
			t.Errorf("newest entry (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobDisabled || r.Schedule.DueAt != (time.Time{}) {
			t.Errorf("job state %s, due at %v; want Disabled, not due", r.State, r.Schedule.DueAt)
		}
	})
}
