package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestSkippedWhileRetryPendingOneEntry: a job every 2s whose attempts
// fail, with one retry 10s later, passes over the occurrences that come
// due while its occurrence waits for the retry and the next one already
// waits: one Skipped entry per run of them, counting them all, rather
// than one entry each.
func TestSkippedWhileRetryPendingOneEntry(t *testing.T) {
	for _, overlap := range []string{"Postpone", "Skip"} {
		t.Run(overlap, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				e.exec.fn = func(*action.Request, int) error { return errors.New("503 Service Unavailable") }
				coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
					Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Second", Interval: 1}}}}
				if _, err := e.s.PutCollection(context.Background(), "c", coll, nil); err != nil {
					t.Fatal(err)
				}
				e.start()
				e.put("j", jobJSON(e.t0.Add(time.Second), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT10S", "retryCount": 1}},
					"recurrence": {"frequency": "Second", "interval": 2}, "runPolicy": {"overlap": "`+overlap+`"}`))
				time.Sleep(45 * time.Second)
				e.stop()
				synctest.Wait()
				// One entry per run: per occurrence in progress (the
				// reason names it), each counting several occurrences.
				entries := make(map[string]int) // by reason
				total := 0
				for _, h := range e.history("j") {
					if h.Status != scheduler.StatusSkipped {
						continue
					}
					_, why, _ := strings.Cut(h.Message, "Z: ")
					entries[why]++
					total += h.Skipped
					if h.Skipped < 2 || !h.EndTime.After(h.StartTime) {
						t.Errorf("Skipped entry for %d occurrences, passed over from %v to %v: %s; want a run of them",
							h.Skipped, h.StartTime.Sub(e.t0), h.EndTime.Sub(e.t0), h.Message)
					}
				}
				for why, n := range entries {
					if n != 1 {
						t.Errorf("%d Skipped entries for %q, want 1", n, why)
					}
				}
				if len(entries) < 3 || total < 12 {
					t.Errorf("%d runs of %d occurrences passed over, want at least 3 runs of 12", len(entries), total)
				}
				if t.Failed() {
					for _, h := range e.history("j") {
						t.Logf("%s #%d expected at %v, at %v, skipped %d: %s", h.Status, h.RepeatCount, h.ExpectedExecutionTime.Sub(e.t0), h.StartTime.Sub(e.t0), h.Skipped, h.Message)
					}
				}
			})
		})
	}
}
