package schedulertest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
	"github.com/jobclock/scheduler/schedulertest"
	"github.com/jobclock/scheduler/store/memory"
)

// TestNightlyReport is the package documentation's example.
func TestNightlyReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := schedulertest.NewRecorder(nil)
		reg := new(action.Registry)
		reg.Register("Report", rec)
		s := schedulertest.New(t, &scheduler.Config{Executors: reg})
		s.Timeout = 72 * time.Hour // fake time
		if _, err := s.Schedule(t.Context(), "nightly", recurrence.Daily(2, 0), action.Action{Type: "Report"}); err != nil {
			t.Fatal(err)
		}
		s.WaitRuns(scheduler.DefaultCollection, "nightly", 3)
		night := func(d int) time.Time { return time.Date(2000, 1, d, 2, 0, 0, 0, time.UTC) }
		s.AssertHistory(scheduler.DefaultCollection, "nightly", []schedulertest.Entry{
			{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 1, Expected: night(1), Start: night(1), Message: "recorded"},
			{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 2, Expected: night(2), Start: night(2), Message: "recorded"},
			{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 3, Expected: night(3), Start: night(3), Message: "recorded"},
		})
		attempts := rec.Attempts()
		if len(attempts) != 3 || attempts[2].JobID != "default/nightly" || attempts[2].Occurrence != 3 || !attempts[2].ExpectedTime.Equal(night(3)) ||
			attempts[2].ExecutionTag == "" || attempts[2].ClientRequestID == "" || !attempts[2].At.Equal(night(3)) {
			t.Errorf("attempts = %+v", attempts)
		}
	})
}

// TestReceiverInBubble sends Http jobs to a Receiver inside a bubble: every
// attempt arrives with its metadata, /status/503 fails the attempts, and
// the retries come at the policy's instants.
func TestReceiverInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		rcv := schedulertest.NewReceiver()
		defer rcv.Close()
		s := schedulertest.New(t, nil)
		t0 := time.Now()
		ok := action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: rcv.URL + "/hook?x=1", Method: "POST", Body: `{"a":1}`,
			Headers: map[string]string{"Content-Type": "application/json"}}}
		if _, err := s.Schedule(ctx, "hook", recurrence.Every(1, recurrence.Hour), ok); err != nil {
			t.Fatal(err)
		}
		failing := action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: rcv.URL + "/status/503", Method: "GET"},
			RetryPolicy: &retry.Policy{Type: retry.Fixed, Count: ptr(2), Interval: retry.Duration(time.Minute)}}
		if _, err := s.Schedule(ctx, "down", nil, failing); err != nil {
			t.Fatal(err)
		}
		s.Timeout = 3 * time.Hour
		s.WaitState(scheduler.DefaultCollection, "down", scheduler.JobFaulted)
		s.WaitRuns(scheduler.DefaultCollection, "hook", 2)

		var hooks, downs []schedulertest.Delivery
		for _, d := range rcv.Deliveries() {
			if d.Path == "/hook" {
				hooks = append(hooks, d)
			} else {
				downs = append(downs, d)
			}
		}
		if len(hooks) != 2 || len(downs) != 3 {
			t.Fatalf("%d deliveries to /hook and %d to /status/503, want 2 and 3", len(hooks), len(downs))
		}
		h := hooks[1]
		if h.JobID != "default/hook" || h.CollectionID != "default" || !h.ExpectedTime.Equal(t0.Add(time.Hour)) || h.ExecutionTag == "" ||
			h.ClientRequestID == "" || h.Method != "POST" || h.Query != "x=1" || h.Body != `{"a":1}` || h.Header.Get("Content-Type") != "application/json" ||
			h.Status != 200 || !h.At.Equal(t0.Add(time.Hour)) {
			t.Errorf("second delivery to /hook = %+v", h)
		}
		for i, d := range downs {
			if d.ExecutionTag != downs[0].ExecutionTag || d.Status != 503 || !d.At.Equal(t0.Add(time.Duration(i)*time.Minute)) {
				t.Errorf("delivery %d to /status/503 = %+v, want the same tag, status 503, at +%dm", i, d, i)
			}
		}
		s.AssertHistory(scheduler.DefaultCollection, "down", []schedulertest.Entry{
			{Action: scheduler.MainAction, Status: scheduler.StatusFailed, Repeat: 1, Retry: 0, Expected: t0, Start: t0},
			{Action: scheduler.MainAction, Status: scheduler.StatusFailed, Repeat: 1, Retry: 1, Expected: t0, Start: t0.Add(time.Minute)},
			{Action: scheduler.MainAction, Status: scheduler.StatusFailed, Repeat: 1, Retry: 2, Expected: t0, Start: t0.Add(2 * time.Minute)},
		}, cmpopts.IgnoreFields(schedulertest.Entry{}, "Message"))
	})
}

func ptr[T any](v T) *T { return &v }

// squash folds every run of white space (go-cmp varies it on purpose) into
// one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// fakeT records what the helpers report, to test their failures.
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	fatals []string
	errs   []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// TestWaitFailsWithDiff: a wait that does not come true fails the test
// after Timeout with a diff, and the history assertion reports its
// difference, instead of hanging.
func TestWaitFailsWithDiff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := schedulertest.NewRecorder(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			return &action.Result{Message: "nope"}, errors.New("nope")
		})
		reg := new(action.Registry)
		reg.Register("Report", rec)
		s := schedulertest.New(t, &scheduler.Config{Executors: reg})
		if _, err := s.Schedule(t.Context(), "j", recurrence.Every(10, recurrence.Minute), action.Action{Type: "Report",
			RetryPolicy: &retry.Policy{Type: retry.None}}); err != nil {
			t.Fatal(err)
		}
		ft := &fakeT{TB: t}
		w := schedulertest.Wrap(ft, s.Scheduler)
		w.Timeout = 25 * time.Minute
		start := time.Now()
		if r := w.WaitRuns(scheduler.DefaultCollection, "j", 5); r != nil {
			t.Errorf("WaitRuns that timed out returned %v", r)
		}
		if waited := time.Since(start); waited != 25*time.Minute {
			t.Errorf("WaitRuns gave up after %v, want the 25m timeout", waited)
		}
		if len(ft.fatals) != 1 {
			t.Fatalf("failures reported: %q, want one", ft.fatals)
		}
		msg := squash(ft.fatals[0])
		for _, part := range []string{"job default/j did not run 5 times within 25m0s (-want +got):", "- Runs: 5,", "+ Runs: 3,",
			"its newest history entries:", "MainAction Failed occurrence 3 retry 0", ": nope"} {
			if !strings.Contains(msg, part) {
				t.Errorf("failure message does not contain %q:\n%s", part, msg)
			}
		}
		w.WaitState(scheduler.DefaultCollection, "missing", scheduler.JobCompleted)
		if len(ft.fatals) != 2 || !strings.Contains(squash(ft.fatals[1]), "+ Found: false,") {
			t.Errorf("WaitState of a missing job reported %q", ft.fatals[1:])
		}
		w.AssertHistory(scheduler.DefaultCollection, "j", []schedulertest.Entry{{Status: scheduler.StatusCompleted}},
			cmpopts.IgnoreFields(schedulertest.Entry{}, "Action", "Repeat", "Expected", "Start", "Message"))
		if len(ft.errs) != 1 || !strings.Contains(squash(ft.errs[0]), `- Status: "Completed",`) || !strings.Contains(squash(ft.errs[0]), `+ Repeat: 2,`) {
			t.Errorf("AssertHistory reported %q", ft.errs)
		}
		// A wait that comes true returns at once, the record with it.
		if r := s.WaitRuns(scheduler.DefaultCollection, "j", 1); r == nil || r.Status.ExecutionCount < 1 {
			t.Errorf("WaitRuns(1) = %+v", r)
		}
	})
}

// TestWrapPolls: the helpers work for a Scheduler made elsewhere, by
// polling, outside a bubble too.
func TestWrapPolls(t *testing.T) {
	ctx := context.Background()
	rec := schedulertest.NewRecorder(nil)
	reg := new(action.Registry)
	reg.Register("Report", rec)
	sc, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sc.Stop(ctx)
	s := schedulertest.Wrap(t, sc)
	s.Timeout = 10 * time.Second
	if _, err := s.Schedule(ctx, "once", nil, action.Action{Type: "Report", Custom: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	r := s.WaitState(scheduler.DefaultCollection, "once", scheduler.JobCompleted)
	if r == nil || r.Status.ExecutionCount != 1 {
		t.Errorf("WaitState = %+v", r)
	}
	got, err := rec.Wait(ctx, 1)
	if err != nil || len(got) != 1 || string(got[0].Custom) != `{"n":1}` || got[0].Type != "Report" {
		t.Errorf("Recorder.Wait = %+v, %v", got, err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if got, err := rec.Wait(short, 2); !errors.Is(err, context.DeadlineExceeded) || len(got) != 1 {
		t.Errorf("Recorder.Wait for more than there are = %d attempts, %v; want 1 and the deadline", len(got), err)
	}
	if diff := cmp.Diff([]string{"Completed"}, []string{string(s.History(scheduler.DefaultCollection, "once")[0].Status)}); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
}
