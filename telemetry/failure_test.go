package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/telemetry"
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

// TestTelemetryFaultedCountsEveryFault: jobclock.occurrences.faulted counts
// each occurrence that faulted, whatever made it fault (its retries spent,
// a permanent error or status code, maxRetryDuration, a policy of no
// retry), as the job's faultedCount does.
func TestTelemetryFaultedCountsEveryFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}, telemetry.Options{MetricsByJob: true}))
		e.exec.fn = func(req *action.Request, n int) error {
			switch path := req.Action.Request.URI[strings.LastIndex(req.Action.Request.URI, "/"):]; path {
			case "/permanent":
				return action.Permanent(errors.New("malformed"))
			case "/notfound":
				return &httpaction.StatusError{Host: "127.0.0.1:9", StatusCode: 404, Status: "404 Not Found"}
			case "/busy":
				return &httpaction.StatusError{Host: "127.0.0.1:9", StatusCode: 429, Status: "429 Too Many Requests",
					RetryAfter: time.Now().Add(time.Second)}
			}
			return errors.New("refused")
		}
		e.start()
		job := func(path, policy string) string {
			return `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/` + path + `", "method": "GET"},
				"retryPolicy": ` + policy + `}, "recurrence": {"frequency": "Hour", "count": 2}}`
		}
		fixed := `{"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2}`
		jobs := map[string]string{
			"spent":     job("fails", fixed),
			"none":      job("fails", `{"retryType": "None"}`),
			"permanent": job("permanent", fixed),
			"status":    job("notfound", `{"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2, "permanentStatusCodes": [404]}`),
			"duration":  job("fails", `{"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 5, "maxRetryDuration": "PT30S"}`),
			"busy-none": job("busy", `{"retryType": "None"}`),
			"busy":      job("busy", fixed),
		}
		for name, def := range jobs {
			e.put(name, def)
		}
		time.Sleep(3 * time.Hour)
		synctest.Wait()
		defer e.stop()
		want := map[string]float64{}
		got := map[string]float64{}
		for name := range jobs {
			r, err := e.s.GetJob(context.Background(), "c", name)
			if err != nil {
				t.Fatal(err)
			}
			want[name] = float64(r.Status.FaultedCount)
			if r.Status.FaultedCount != 2 {
				t.Errorf("%s: faultedCount %d, want 2", name, r.Status.FaultedCount)
			}
		}
		for _, p := range o.metrics(t)["jobclock.occurrences.faulted"] {
			for _, kv := range strings.Split(p.Attrs, ",") {
				if job, ok := strings.CutPrefix(kv, "jobclock.job="); ok {
					got[job] += p.Value
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("jobclock.occurrences.faulted by job, against the jobs' faultedCount (-want +got):\n%s", diff)
		}
	})
}

// TestTelemetryRetryAfterCountsWaitedRetries: jobclock.attempts.retry_after
// and jobclock.attempt.retry_after.wait count a 429's Retry-After only
// when a retry follows and waits for it: not under retryType None, not on
// the last retry, not when the policy's interval already waits longer.
func TestTelemetryRetryAfterCountsWaitedRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.exec.fn = func(req *action.Request, n int) error {
			return &httpaction.StatusError{Host: "127.0.0.1:9", StatusCode: 429, Status: "429 Too Many Requests",
				RetryAfter: time.Now().Add(3 * time.Second)}
		}
		e.start()
		job := func(policy string) string {
			return `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/busy", "method": "GET"}, "retryPolicy": ` + policy + `}}`
		}
		e.put("none", job(`{"retryType": "None"}`))
		e.put("once", job(`{"retryType": "Fixed", "retryInterval": "PT1S", "retryCount": 1}`))
		e.put("longer", job(`{"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 1}`))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		e.stop()
		want := map[string][]point{
			"jobclock.attempts.retry_after":     {{Value: 1}},
			"jobclock.attempt.retry_after.wait": {{Count: 1, Sum: 3}},
		}
		if diff := cmp.Diff(want, pick(o.metrics(t), "jobclock.attempts.retry_after", "jobclock.attempt.retry_after.wait")); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
		if h := e.history("once"); len(h) != 2 || h[0].StartTime.Sub(h[1].EndTime) != 3*time.Second {
			t.Errorf("once's history = %+v, want its retry 3 s after the 429", h)
		}
	})
}
