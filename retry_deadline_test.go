package scheduler_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestRetryDeadlineUnderLimit: maxRetryDuration is a deadline that a
// collection's limit does not move. Under a job limit of 1 attempt a
// minute, a job whose attempt fails is retried after PT1S by its policy,
// but the limit would hold the retry back until a minute after the first
// attempt, past the deadline of PT10S: the retry does not start, and the
// occurrence faults at the deadline with an entry saying that the limit
// kept it; its errorAction runs then. So under AllowAll, where the
// occurrence runs beside others.
func TestRetryDeadlineUnderLimit(t *testing.T) {
	for _, overlap := range []string{"Postpone", "AllowAll"} {
		t.Run(overlap, func(t *testing.T) { retryDeadlineUnderLimit(t, overlap) })
	}
}

func retryDeadlineUnderLimit(t *testing.T, overlap string) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = failing
		putLimits(t, e.s, scheduler.Limit{Key: scheduler.LimitJob, RatePerMinute: 1})
		e.start()
		defer e.stop()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/main", "method": "POST"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1S", "retryCount": 5, "maxRetryDuration": "PT10S"},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/error", "method": "POST"}}},
			"runPolicy": {"overlap": "`+overlap+`"}}`)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		main := 0
		for _, req := range e.exec.requests() {
			if !req.ErrorAction {
				main++
			}
		}
		if main != 1 {
			t.Errorf("%d attempts of the main action, want the first alone (its retries are held past the deadline)", main)
		}
		var fault *scheduler.HistoryEntry
		for _, h := range e.history("j") {
			if h.Faulted {
				fault = &h
			}
		}
		switch {
		case fault == nil:
			t.Fatalf("no faulted entry in %+v", e.history("j"))
		case fault.RetryCount != 1 || fault.Status != scheduler.StatusFailed:
			t.Errorf("the faulted entry is of retry %d, %s; want retry 1, Failed", fault.RetryCount, fault.Status)
		case fault.EndTime.Sub(e.t0) < 10*time.Second || fault.EndTime.Sub(e.t0) > 11*time.Second:
			t.Errorf("the occurrence faulted at %v, want at its deadline, 10s", fault.EndTime.Sub(e.t0))
		case !strings.Contains(fault.Message, "job limit kept retry 1 from starting by retryPolicy.maxRetryDuration"):
			t.Errorf("the faulted entry says %q, want that the job limit kept the retry", fault.Message)
		}
		r := e.job("j")
		if r.Status.ExecutionCount != 1 || r.Status.FaultedCount != 1 {
			t.Errorf("executionCount %d, faultedCount %d; want 1 and 1", r.Status.ExecutionCount, r.Status.FaultedCount)
		}
		var errorActions int
		for _, req := range e.exec.requests() {
			if req.ErrorAction {
				errorActions++
			}
		}
		if errorActions != 1 {
			t.Errorf("the errorAction ran %d times, want once", errorActions)
		}
	})
}

// TestRetryDeadlinePassedWhileStopped: a retry due while no instance runs
// the job does not start once its deadline has passed: the occurrence
// faults when an instance finds it, with an entry that says so.
func TestRetryDeadlinePassedWhileStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = failing
		e.start()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/main", "method": "POST"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3, "maxRetryDuration": "PT10M"}}}`)
		time.Sleep(30 * time.Second) // the first attempt failed; the retry is due at 1m
		synctest.Wait()
		e.stop()
		time.Sleep(time.Hour)
		e.s = e.newScheduler()
		e.start()
		defer e.stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(e.exec.requests()); n != 1 {
			t.Errorf("%d attempts, want the first alone: the retry's deadline passed while no instance ran", n)
		}
		h := e.history("j")
		if len(h) == 0 || !h[0].Faulted || !strings.Contains(h[0].Message, "retry 1 did not start by retryPolicy.maxRetryDuration") {
			t.Errorf("latest entry %+v, want retry 1 faulted, not started", h)
		}
		if r := e.job("j"); r.State != scheduler.JobFaulted {
			t.Errorf("job %s, want Faulted", r.State)
		}
	})
}
