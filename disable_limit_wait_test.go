package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestDisableLimitWaitNoEntry checks that disabling a job whose first
// attempt waits for a collection's limit (no attempt ran, nothing failed)
// records no Failed entry and leaves its health alone: only an occurrence
// that waits for a retry or its errorAction gets the entry.
func TestDisableLimitWaitNoEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		putLimits(t, e.s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 1})
		e.exec.fn = func(req *action.Request, n int) error {
			if strings.Contains(req.Action.Request.URI, "long") {
				time.Sleep(50 * time.Second)
			}
			return nil
		}
		e.start()
		defer e.stop()
		e.put("long", jobJSON(e.t0.Add(10*time.Second), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/long", "method": "GET"}}`))
		e.put("w", jobJSON(e.t0.Add(20*time.Second), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/w", "method": "GET"}}`))
		time.Sleep(30 * time.Second) // w waits for the limit
		synctest.Wait()
		r := e.job("w")
		if c := r.Schedule.Current; c != nil {
			t.Logf("w before disable: current retry %d limited %v leased %q", c.Retry, c.Limited != nil, r.LeaseOwner)
		} else {
			t.Logf("w before disable: no current occurrence")
		}
		d, err := e.s.DisableJob(context.Background(), "c", "w")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		for _, h := range e.history("w") {
			t.Logf("w history: %s retry %d: %s", h.Status, h.RetryCount, h.Message)
			if h.Status == scheduler.StatusFailed {
				t.Errorf("a Failed entry for an occurrence that never ran nor failed: %s (retry %d)", h.Message, h.RetryCount)
			}
		}
		if got, _ := e.s.GetJob(context.Background(), "c", "w"); got != nil && got.Status.Health == scheduler.HealthFailing {
			t.Errorf("health %s after disabling a job whose attempts never failed (returned %s)", got.Status.Health, d.Status.Health)
		}
	})
}
