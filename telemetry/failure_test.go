package telemetry_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
)

// TestTelemetryFailureHandling counts what failure handling did: an
// attempt that outlived its action's timeout (each of the three attempts
// of "slow"), a permanent error ("bad"), and a 429 whose Retry-After asks
// for 90 s ("busy", whose retry then succeeds).
func TestTelemetryFailureHandling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.exec.fn = func(req *action.Request, n int) error {
			switch {
			case strings.HasSuffix(req.Action.Request.URI, "/slow"):
				time.Sleep(3 * time.Second) // past its timeout, ignoring its context
			case strings.HasSuffix(req.Action.Request.URI, "/bad"):
				return action.Permanent(errors.New("malformed"))
			case strings.HasSuffix(req.Action.Request.URI, "/busy") && req.Retry == 0:
				return &httpaction.StatusError{Host: "127.0.0.1:9", StatusCode: 429, Status: "429 Too Many Requests",
					RetryAfter: time.Now().Add(90 * time.Second)}
			}
			return nil
		}
		e.start()
		job := func(path string) string {
			return `{"action": {"type": "Http", "timeout": "PT2S", "request": {"uri": "http://127.0.0.1:9` + path + `", "method": "GET"},
				"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2}}}`
		}
		e.put("slow", job("/slow"))
		e.put("bad", job("/bad"))
		e.put("busy", job("/busy"))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		e.stop()
		want := map[string][]point{
			"jobclock.attempts.timed_out":       {{Value: 3}},
			"jobclock.attempts.permanent":       {{Value: 1}},
			"jobclock.attempts.retry_after":     {{Value: 1}},
			"jobclock.attempt.retry_after.wait": {{Count: 1, Sum: 90}},
		}
		if diff := cmp.Diff(want, pick(o.metrics(t), "jobclock.attempts.timed_out", "jobclock.attempts.permanent",
			"jobclock.attempts.retry_after", "jobclock.attempt.retry_after.wait")); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
		if h := e.history("busy"); len(h) != 2 || h[0].StartTime.Sub(h[1].EndTime) != 90*time.Second {
			t.Errorf("busy's history = %+v, want its retry 90 s after the 429", h)
		}
	})
}
