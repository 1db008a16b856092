package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestSkippingKeptByPut checks that the occurrences passed over while a
// retry waits (held in PolicyState.Skipping until the run ends) get their
// Skipped entry when a put of a new definition ends the run.
func TestSkippingKeptByPut(t *testing.T) {
	for _, overlap := range []string{"Skip", "Postpone"} {
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
				def := func(retry string) string {
					return jobJSON(e.t0.Add(time.Second), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "`+retry+`", "retryCount": 1}},
					"recurrence": {"frequency": "Second", "interval": 2}, "runPolicy": {"overlap": "`+overlap+`"}`)
				}
				e.put("j", def("PT30S"))
				time.Sleep(20 * time.Second)
				r := e.job("j")
				var pending int
				if p := r.Schedule.Policy; p != nil && p.Skipping != nil {
					pending = p.Skipping.Skipped
				}
				t.Logf("before the put: Skipping holds %d occurrences", pending)
				e.put("j", def("PT40S")) // a new definition
				time.Sleep(5 * time.Second)
				e.stop()
				synctest.Wait()
				total := 0
				for _, h := range e.history("j") {
					if h.Status == scheduler.StatusSkipped && h.ExpectedExecutionTime.Before(e.t0.Add(20*time.Second)) {
						total += h.Skipped
					}
				}
				if pending > 0 && total < pending {
					t.Errorf("Skipped entries count %d occurrences passed over before the put, want at least %d (Skipping held them)", total, pending)
					for _, h := range e.history("j") {
						t.Logf("%s #%d expected %v skipped %d: %s", h.Status, h.RepeatCount, h.ExpectedExecutionTime.Sub(e.t0), h.Skipped, h.Message)
					}
				}
			})
		})
	}
}
