package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestRunJobMarksHistoryManual: the history entries of a run asked for
// with RunJob are marked Manual, and those of scheduled occurrences are
// not.
func TestRunJobMarksHistoryManual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Hour"}`))
		e.start()
		defer e.stop()
		time.Sleep(10 * time.Second)
		if _, err := e.s.RunJob(context.Background(), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // the run, then the scheduled occurrence at 1m
		synctest.Wait()
		var manual []bool
		for _, h := range e.history("j") {
			manual = append(manual, h.Manual)
		}
		// Newest first: the scheduled occurrence, then the run.
		if len(manual) != 2 || manual[0] || !manual[1] {
			t.Errorf("Manual of the history entries, newest first = %v, want [false true]", manual)
		}
	})
}
