package scheduler_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestSuccessAtTheTimeout: an executor that watches its context and
// returns success when the timeout cancels it (it got its answer in time),
// or just after, keeps its success, not retried; one that returns success
// well after the timeout, or after it without ever watching its context,
// ignored the timeout, and its attempt timed out.
func TestSuccessAtTheTimeout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ignore bool          // the executor does not watch its context: it sleeps through the timeout
		after  time.Duration // after the context is done, the executor returns success
		want   []scheduler.ExecutionStatus
	}{
		{name: "at the timeout", after: 0, want: []scheduler.ExecutionStatus{scheduler.StatusCompleted}},
		{name: "just after", after: 500 * time.Millisecond, want: []scheduler.ExecutionStatus{scheduler.StatusCompleted}},
		{name: "long after", after: 5 * time.Second, want: []scheduler.ExecutionStatus{scheduler.StatusFailed, scheduler.StatusFailed}},
		{name: "ignoring its context", ignore: true, after: 500 * time.Millisecond, want: []scheduler.ExecutionStatus{scheduler.StatusFailed, scheduler.StatusFailed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ActionTimeout: 5 * time.Second})
				e.exec = &fake{}
				reg := &action.Registry{}
				reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					if tt.ignore {
						time.Sleep(5 * time.Second)
					} else {
						<-ctx.Done()
					}
					time.Sleep(tt.after)
					return &action.Result{Message: "Completed: 200 OK (reading the body failed)"}, nil
				}))
				e.cfg.Executors = reg
				e.s = e.newScheduler()
				e.start()
				defer e.stop()
				e.put("j", jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "POST"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1}}`))
				time.Sleep(5 * time.Minute)
				synctest.Wait()
				var got []scheduler.ExecutionStatus
				for _, h := range e.history("j") {
					got = append(got, h.Status)
					if h.Status == scheduler.StatusCompleted && h.Message != "Completed: 200 OK (reading the body failed)" {
						t.Errorf("Completed attempt says %q, want the executor's message", h.Message)
					}
					if h.Status == scheduler.StatusFailed && !strings.HasPrefix(h.Message, "attempt timed out after 5s") {
						t.Errorf("Failed attempt says %q, want it to say it timed out", h.Message)
					}
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("history statuses = %v, want %v", got, tt.want)
				}
			})
		})
	}
}

// TestHTTPAnswerCutShortByTheTimeout runs a job through the built-in HTTP
// executor against a local server that answers 200 at once but ends the
// body only 4 s later, after the action's 2 s timeout: the attempt is Completed (its message says
// the body read failed), the job is not retried, and the server sees one
// request.
func TestHTTPAnswerCutShortByTheTimeout(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		requests++
		mu.Unlock()
		io.WriteString(w, "start;")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(4 * time.Second):
		}
		io.WriteString(w, "end")
	}))
	defer srv.Close()
	defer close(release)

	s, done := webScheduler(t)
	ctx := context.Background()
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "timeout": "PT2S",
		"request": {"uri": "`+srv.URL+`/slowbody", "method": "POST", "body": "x"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.05S", "retryCount": 1}}}`),
		&scheduler.ParseOptions{MinRetryInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "web", "slowbody", job, nil); err != nil {
		t.Fatal(err)
	}
	var h scheduler.HistoryEntry
	select {
	case h = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no history after 10s")
	}
	if h.Status != scheduler.StatusCompleted || !strings.Contains(h.Message, "200 OK") || !strings.Contains(h.Message, "reading the body failed") {
		t.Errorf("history = %s %q, want Completed, the 200 OK, and that reading the body failed", h.Status, h.Message)
	}
	r, err := s.GetJob(ctx, "web", "slowbody")
	if err != nil || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 || r.Status.FailureCount != 0 {
		t.Errorf("job = %+v, %v; want Completed, 1 execution, no failure", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 {
		t.Errorf("server saw %d requests, want 1", requests)
	}
}

// TestSuccessAtStop: as at the timeout, an executor that watches its
// context and returns success when Stop cancels it (Stop's context ended
// while it ran), or just after, keeps its success: its answer came, and a
// retry would carry its action out again. One that returns success well
// after, or after it without ever watching its context, is cancelled by
// the stop.
func TestSuccessAtStop(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ignore bool          // the executor does not watch its context: it sleeps through Stop's cancellation
		after  time.Duration // after the context is done, the executor returns success
		want   scheduler.ExecutionStatus
	}{
		{name: "at the cancellation", after: 0, want: scheduler.StatusCompleted},
		{name: "just after", after: 500 * time.Millisecond, want: scheduler.StatusCompleted},
		{name: "long after", after: 5 * time.Second, want: scheduler.StatusFailed},
		{name: "ignoring its context", ignore: true, after: 500 * time.Millisecond, want: scheduler.StatusFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const stopAfter = time.Second
				e := newEnv(t, scheduler.Config{ActionTimeout: time.Minute})
				e.exec = &fake{}
				reg := &action.Registry{}
				reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					if tt.ignore {
						time.Sleep(stopAfter)
					} else {
						<-ctx.Done()
					}
					time.Sleep(tt.after)
					return &action.Result{Message: "Completed: 200 OK (reading the body failed)"}, nil
				}))
				e.cfg.Executors = reg
				e.s = e.newScheduler()
				e.start()
				e.put("j", jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "POST"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1}}`))
				synctest.Wait() // the attempt runs
				ctx, cancel := context.WithTimeout(context.Background(), stopAfter)
				defer cancel()
				if err := e.s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Stop: %v, want DeadlineExceeded", err)
				}
				h := e.history("j")
				if len(h) != 1 || h[0].Status != tt.want {
					t.Fatalf("history = %+v, want one %s entry", h, tt.want)
				}
				want := "Completed: 200 OK (reading the body failed)"
				if tt.want == scheduler.StatusFailed {
					want = "cancelled: the scheduler stopped"
				}
				if h[0].Message != want {
					t.Errorf("history says %q, want %q", h[0].Message, want)
				}
			})
		})
	}
}
