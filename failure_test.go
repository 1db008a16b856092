package scheduler_test

import (
	"encoding/json"
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

// failingJob is a job due at 1m whose action fails as fail says, retried
// by policy, with an errorAction to the path /alert.
func failingJob(e *env, policy string) string {
	return `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/work", "method": "GET"}, "retryPolicy": ` + policy + `,
		"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/alert", "method": "POST"}, "retryPolicy": {"retryType": "None"}}},
		"startTime": "` + e.t0.Add(time.Minute).Format(time.RFC3339) + `"}`
}

// TestFailuresNotRetried: an error the executor marks permanent, and an
// HTTP status among the policy's permanentStatusCodes, fault the
// occurrence at its first attempt (its errorAction runs), and history
// says why; other errors are retried as the policy says.
func TestFailuresNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		policy   string
		attempts int // of the main action
		reason   string
	}{
		{"permanent", action.Permanent(errors.New("bad request")), `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3}`, 1, "not retried: the error is permanent"},
		{"permanent status", &httpaction.StatusError{Host: "h", StatusCode: 404, Status: "Not Found"},
			`{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3, "permanentStatusCodes": [400, 404]}`, 1, "not retried: status 404 is one of retryPolicy.permanentStatusCodes"},
		{"other status", &httpaction.StatusError{Host: "h", StatusCode: 503, Status: "Service Unavailable"},
			`{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3, "permanentStatusCodes": [400, 404]}`, 4, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				e.exec.fn = func(req *action.Request, n int) error {
					if strings.HasSuffix(req.Action.Request.URI, "/alert") {
						return nil
					}
					return tt.err
				}
				e.start()
				defer e.stop()
				e.put("j", failingJob(e, tt.policy))
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				var main []scheduler.HistoryEntry
				alerts := 0
				for _, h := range e.history("j") {
					if h.ActionName == scheduler.ErrorAction {
						alerts++
					} else {
						main = append(main, h)
					}
				}
				if len(main) != tt.attempts || alerts != 1 || !main[0].Faulted {
					t.Fatalf("%d attempts, %d errorAction attempts, last faulted %v; want %d, 1, true", len(main), alerts, main[0].Faulted, tt.attempts)
				}
				if tt.reason != "" && !strings.Contains(main[0].Message, tt.reason) {
					t.Errorf("message %q does not say %q", main[0].Message, tt.reason)
				}
				if r := e.job("j"); r.State != scheduler.JobFaulted {
					t.Errorf("job %s, want Faulted", r.State)
				}
			})
		})
	}
}

// TestMaxRetryDuration: no retry starts later than the expected time plus
// maxRetryDuration; the occurrence faults instead.
func TestMaxRetryDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if strings.HasSuffix(req.Action.Request.URI, "/alert") {
				return nil
			}
			return errors.New("boom")
		}
		e.start()
		defer e.stop()
		e.put("j", failingJob(e, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 5, "maxRetryDuration": "PT2M30S"}`))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		m := time.Minute
		// 1m, then retries at 2m and 3m; one at 4m would start after
		// 1m + 2m30s: the occurrence faults at 3m and the alert runs.
		if diff := cmp.Diff([]time.Duration{m, 2 * m, 3 * m, 3 * m}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		h := e.history("j")
		var last scheduler.HistoryEntry
		for _, x := range h {
			if x.ActionName == scheduler.MainAction && x.RetryCount == 2 {
				last = x
			}
		}
		if !last.Faulted || !strings.Contains(last.Message, "retryPolicy.maxRetryDuration (PT2M30S)") {
			t.Errorf("last attempt %+v: want faulted, saying maxRetryDuration stopped the retries", last)
		}
	})
}

// TestRetryAfterWaits: a retry waits for the answer's Retry-After when it
// is later than the policy's interval, at most MaxRetryAfter, and history
// says so; maxRetryDuration still bounds it.
func TestRetryAfterWaits(t *testing.T) {
	tests := []struct {
		name   string
		after  time.Duration // of the first answer, from its attempt
		policy string
		want   []time.Duration // attempt times of the main action and the alert
	}{
		{"waits", 5 * time.Minute, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}`, []time.Duration{time.Minute, 6 * time.Minute, 7 * time.Minute, 7 * time.Minute}},
		{"capped", 3 * time.Hour, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 1}`, []time.Duration{time.Minute, 61 * time.Minute, 61 * time.Minute}},
		{"shorter than the interval", 10 * time.Second, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 1}`, []time.Duration{time.Minute, 2 * time.Minute, 2 * time.Minute}},
		{"past the deadline", 5 * time.Minute, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2, "maxRetryDuration": "PT3M"}`, []time.Duration{time.Minute, time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				e.exec.fn = func(req *action.Request, n int) error {
					switch {
					case strings.HasSuffix(req.Action.Request.URI, "/alert"):
						return nil
					case n == 0:
						return &httpaction.StatusError{Host: "h", StatusCode: 429, Status: "Too Many Requests", RetryAfter: time.Now().Add(tt.after)}
					}
					return &httpaction.StatusError{Host: "h", StatusCode: 503, Status: "Service Unavailable"}
				}
				e.start()
				defer e.stop()
				e.put("j", failingJob(e, tt.policy))
				time.Sleep(2 * time.Hour)
				synctest.Wait()
				if diff := cmp.Diff(tt.want, e.exec.times(e.t0)); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				h := e.history("j")
				first := h[len(h)-1]
				if tt.name == "waits" && !strings.Contains(first.Message, "the retry waits for the answer's Retry-After, until") {
					t.Errorf("first attempt's message %q does not say the retry waits for Retry-After", first.Message)
				}
			})
		})
	}
}

// TestDeadLetterErrorAction: an errorAction without a message of its own
// carries the failure document: the occurrence and each attempt of its
// main action, with their HTTP statuses; one with a body of its own sends
// that body.
func TestDeadLetterErrorAction(t *testing.T) {
	for _, body := range []string{"", "job failed"} {
		t.Run("body="+body, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				var alert *action.Request
				e.exec.fn = func(req *action.Request, n int) error {
					if strings.HasSuffix(req.Action.Request.URI, "/alert") {
						alert = req
						return nil
					}
					if n == 0 {
						return errors.New("connection refused")
					}
					return &httpaction.StatusError{Host: "h", StatusCode: 503, Status: "Service Unavailable"}
				}
				e.start()
				defer e.stop()
				def := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/work", "method": "GET"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 1},
					"errorAction": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/alert", "method": "POST", "body": "` + body + `",
						"authentication": {"type": "Basic", "username": "u", "password": "secret-pw"}}, "retryPolicy": {"retryType": "None"}}},
					"startTime": "` + e.t0.Add(time.Minute).Format(time.RFC3339) + `"}`
				r := e.put("j", def)
				time.Sleep(5 * time.Minute)
				synctest.Wait()
				if alert == nil {
					t.Fatal("the errorAction did not run")
				}
				got := alert.Action.Request.Body
				if body != "" {
					if got != body {
						t.Errorf("errorAction body %q, want its own %q", got, body)
					}
					return
				}
				var doc scheduler.FailureDocument
				if err := json.Unmarshal([]byte(got), &doc); err != nil {
					t.Fatalf("errorAction body %q: %v", got, err)
				}
				m := time.Minute
				want := scheduler.FailureDocument{Collection: "c", Job: "j", ExecutionTag: alert.ExecutionTag(), ExpectedTime: e.t0.Add(m).UTC(), Occurrence: 1,
					Attempts: []scheduler.FailureAttempt{
						{Retry: 0, Start: e.t0.Add(m).UTC(), End: e.t0.Add(m).UTC(), Status: scheduler.StatusFailed, Message: "failed: connection refused"},
						{Retry: 1, Start: e.t0.Add(2 * m).UTC(), End: e.t0.Add(2 * m).UTC(), Status: scheduler.StatusFailed, HTTPStatus: 503,
							Message: "failed: 503 Service Unavailable from host 'h'"},
					}}
				if diff := cmp.Diff(want, doc); diff != "" {
					t.Errorf("failure document (-want +got):\n%s", diff)
				}
				if strings.Contains(got, "secret-pw") || alert.Action.Request.Headers["Content-Type"] != "application/json" {
					t.Errorf("errorAction request: body %q, headers %v; want no secret and Content-Type application/json", got, alert.Action.Request.Headers)
				}
				if r.Job.Action.ErrorAction.Request.Body != "" {
					t.Errorf("the stored definition changed")
				}
			})
		})
	}
}

// TestDeadLetterErrorActionNoHistory: under Config.HistoryPerJob NoHistory
// the failure document that an errorAction carries names the occurrence
// and lists no attempts, although OnHistory gets the attempts' entries.
func TestDeadLetterErrorActionNoHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{HistoryPerJob: scheduler.NoHistory}) // with OnHistory
		var alert *action.Request
		e.exec.fn = func(req *action.Request, n int) error {
			if strings.HasSuffix(req.Action.Request.URI, "/alert") {
				alert = req
				return nil
			}
			return errors.New("connection refused")
		}
		e.start()
		defer e.stop()
		e.put("j", failingJob(e, `{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 1}`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if alert == nil {
			t.Fatal("the errorAction did not run")
		}
		var doc scheduler.FailureDocument
		if err := json.Unmarshal([]byte(alert.Action.Request.Body), &doc); err != nil {
			t.Fatalf("errorAction body %q: %v", alert.Action.Request.Body, err)
		}
		want := scheduler.FailureDocument{Collection: "c", Job: "j", ExecutionTag: alert.ExecutionTag(), ExpectedTime: e.t0.Add(time.Minute).UTC(),
			Occurrence: 1, Attempts: []scheduler.FailureAttempt{}}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("failure document (-want +got):\n%s", diff)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.hist) != 3 {
			t.Errorf("OnHistory got %d entries, want 3 (two attempts and the errorAction's)", len(e.hist))
		}
	})
}
