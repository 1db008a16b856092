package scheduler_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
)

// TestExponentialRetryInstants runs a job whose attempts fail under an
// Exponential retry policy and checks each attempt's instant: the end of
// the previous attempt plus the policy's Delay for that retry and the
// occurrence's execution tag, within the documented range. The error
// action, without a policy of its own, follows the main action's.
func TestExponentialRetryInstants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(2 * time.Second) // each attempt takes two seconds
			return errors.New("boom")
		}
		e.start()
		defer e.stop()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "POST"},
			"retryPolicy": {"retryType": "Exponential", "retryCount": 4, "retryInterval": "PT20S", "maximumInterval": "PT1M"},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/error", "method": "POST"}}}}`)
		time.Sleep(time.Hour)
		synctest.Wait()

		policy := &retry.Policy{Type: retry.Exponential, Count: ptr(4), Interval: retry.Duration(20 * time.Second),
			MaximumInterval: retry.Duration(time.Minute)}
		reqs := e.exec.requests()
		got := e.exec.times(e.t0)
		if len(reqs) != 10 {
			t.Fatalf("%d attempts, want 5 of the main action and 5 of the error action", len(reqs))
		}
		tag := reqs[0].ExecutionTag()
		var want []time.Duration
		at := time.Duration(0)
		for _, errorAction := range []bool{false, true} {
			for retryNo := 0; retryNo <= 4; retryNo++ {
				if retryNo > 0 {
					d := policy.Delay(retryNo, tag)
					lo, hi := policy.Range(retryNo)
					if d < lo || d > hi {
						t.Errorf("Delay(%d) = %v, outside [%v, %v]", retryNo, d, lo, hi)
					}
					at += d
				}
				want = append(want, at)
				i := len(want) - 1
				if q := reqs[i]; q.Retry != retryNo || q.ErrorAction != errorAction || q.ExecutionTag() != tag {
					t.Errorf("attempt %d: retry %d, error action %v, tag %s; want retry %d, error action %v, tag %s",
						i, q.Retry, q.ErrorAction, q.ExecutionTag(), retryNo, errorAction, tag)
				}
				at += 2 * time.Second
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attempt instants (-want +got):\n%s", diff)
		}
		// The waits grow: each retry's range starts where the previous
		// one's ends, up to the maximum.
		for i := 2; i < 5; i++ {
			if gap, prev := got[i]-got[i-1], got[i-1]-got[i-2]; gap < prev && gap < time.Minute+2*time.Second {
				t.Errorf("wait before retry %d (%v) is shorter than before retry %d (%v)", i, gap, i-1, prev)
			}
		}
		if r := e.job("j"); r.State != scheduler.JobFaulted || r.Status.ExecutionCount != 5 || r.Status.FaultedCount != 1 {
			t.Errorf("job = %s %+v, want Faulted after 5 executions", r.State, r.Status)
		}
	})
}
