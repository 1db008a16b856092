package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/schedulertest"
	"github.com/jobclock/scheduler/store/memory"
)

// TestScheduleFuncRestart runs a closure every minute through a Scheduler
// made without a registry, stops it, and starts another Scheduler over
// the same store, as a program starting again does: the job is kept (not
// created again), the minutes missed run once, and the occurrences are
// numbered on.
func TestScheduleFuncRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		t0 := time.Now()
		var runs []string
		start := func(who string) *schedulertest.Scheduler {
			s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ScheduleFunc(ctx, "cleanup", recurrence.Every(1, recurrence.Minute), func(ctx context.Context) error {
				runs = append(runs, fmt.Sprintf("%s %v", who, time.Since(t0).Round(time.Second)))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			h := schedulertest.Wrap(t, s)
			h.Timeout = 10 * time.Minute
			return h
		}
		h := start("first")
		first := h.WaitRuns(scheduler.DefaultCollection, "cleanup", 2)
		if err := h.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Minute) // down from just after 1m to 4m
		h = start("second")
		defer h.Stop(ctx)
		second := h.WaitRuns(scheduler.DefaultCollection, "cleanup", 4)
		if second.Created != first.Created || second.Job.Action.Type != "Func" {
			t.Errorf("after the restart: created %v (first %v), action %q; want the job kept, of type Func", second.Created, first.Created, second.Job.Action.Type)
		}
		want := []string{"first 0s", "first 1m0s", "second 4m0s", "second 5m0s"}
		if diff := cmp.Diff(want, runs); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		entries := h.Entries(scheduler.DefaultCollection, "cleanup")
		var repeats []int
		for _, e := range entries {
			if e.Status == scheduler.StatusCompleted {
				repeats = append(repeats, e.Repeat)
			}
		}
		if diff := cmp.Diff([]int{1, 2, 3, 4}, repeats); diff != "" {
			t.Errorf("occurrence numbers of the runs (-want +got):\n%s", diff)
		}
	})
}

// TestScheduleFuncUnregistered starts a Scheduler over a store that holds a
// Func job whose function this process does not register: the attempt
// runs nothing, its history and the log say which job and why, and the job
// is kept; a process that registers the function runs it again.
func TestScheduleFuncUnregistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		var called atomic.Int32
		fn := func(ctx context.Context) error { called.Add(1); return nil }
		s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScheduleFunc(ctx, "report", recurrence.Every(1, recurrence.Hour), fn); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(ctx); err != nil { // never started: the job is only put
			t.Fatal(err)
		}

		var log syncbuf.Buffer
		other, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Start(ctx); err != nil {
			t.Fatal(err)
		}
		h := schedulertest.Wrap(t, other)
		h.Timeout = 2 * time.Hour
		h.WaitRuns(scheduler.DefaultCollection, "report", 1)
		synctest.Wait()
		if n := called.Load(); n != 0 {
			t.Errorf("the function ran %d times in a process that did not register it", n)
		}
		hist := h.History(scheduler.DefaultCollection, "report")
		const msg = `no function is registered in this process for job "report" of collection "default" (ScheduleFunc registers it when the program starts): nothing was run`
		if len(hist) == 0 || hist[len(hist)-1].Status != scheduler.StatusFailed || hist[len(hist)-1].Message != msg {
			t.Errorf("history = %+v, want its first entry Failed with the message %q", hist, msg)
		}
		if l := log.String(); !strings.Contains(l, "level=WARN msg=\"no function is registered in this process for the job") ||
			!strings.Contains(l, "collection=default job=report") {
			t.Errorf("the log does not name the job and the missing function:\n%s", l)
		}
		r, err := h.GetJob(ctx, scheduler.DefaultCollection, "report")
		if err != nil || r.State != scheduler.JobEnabled || r.Job.Action.Type != "Func" {
			t.Fatalf("the job after the attempt = %+v, %v; want it kept, Enabled", r, err)
		}
		if err := other.Stop(ctx); err != nil {
			t.Fatal(err)
		}

		// The program with the function starts again: the job runs it.
		again, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := again.ScheduleFunc(ctx, "report", recurrence.Every(1, recurrence.Hour), fn); err != nil {
			t.Fatal(err)
		}
		if err := again.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer again.Stop(ctx)
		time.Sleep(time.Hour)
		synctest.Wait()
		if called.Load() == 0 {
			t.Error("the function did not run in the process that registered it")
		}
	})
}

// TestScheduleFuncErrors: a function's error is the attempt's message, and
// a nil function or a bad name is refused.
func TestScheduleFuncErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := schedulertest.New(t, nil)
		if _, err := s.ScheduleFunc(ctx, "fails", nil, func(ctx context.Context) error { return errors.New("disk full") }); err != nil {
			t.Fatal(err)
		}
		s.WaitRuns(scheduler.DefaultCollection, "fails", 1)
		synctest.Wait()
		s.AssertHistory(scheduler.DefaultCollection, "fails", []schedulertest.Entry{
			{Action: scheduler.MainAction, Status: scheduler.StatusFailed, Repeat: 1, Message: "disk full"},
		}, cmpopts.IgnoreFields(schedulertest.Entry{}, "Expected", "Start"))
		if _, err := s.ScheduleFunc(ctx, "nil", nil, nil); err == nil {
			t.Error("ScheduleFunc with a nil function succeeded")
		}
		if _, err := s.ScheduleFunc(ctx, "no/slash", nil, func(ctx context.Context) error { return nil }); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("ScheduleFunc with a bad name = %v, want ErrInvalid", err)
		}
	})
}

// TestScheduleFuncKeepsPause: a program that starts again and schedules
// its job with a changed recurrence keeps an operator's pause (its reason
// and its resume time, which enables the job again) and a pause of
// pauseAfterFaults.
func TestScheduleFuncKeepsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		var runs atomic.Int32
		schedule := func(every int, fail bool) *scheduler.Scheduler {
			s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ScheduleFunc(ctx, "tick", recurrence.Every(every, recurrence.Minute), func(ctx context.Context) error {
				runs.Add(1)
				if fail {
					return errors.New("down")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return s
		}
		s := schedule(1, false)
		resume := time.Now().Add(time.Hour).Truncate(time.Second)
		patch := `{"properties": {"state": "Disabled", "stateReason": "maintenance", "resumeTime": "` + resume.Format(time.RFC3339) + `"}}`
		if _, err := s.PatchJob(ctx, scheduler.DefaultCollection, "tick", []byte(patch), nil); err != nil {
			t.Fatal(err)
		}
		s = schedule(2, false)
		r, err := s.GetJob(ctx, scheduler.DefaultCollection, "tick")
		if err != nil {
			t.Fatal(err)
		}
		if def := r.Definition(); r.State != scheduler.JobDisabled || def.StateReason != "maintenance" || def.ResumeTime == nil || !def.ResumeTime.Equal(resume) {
			t.Fatalf("after ScheduleFunc with a new recurrence: %s %q %v; want Disabled, %q, %v", r.State, def.StateReason, def.ResumeTime, "maintenance", resume)
		}
		if r.Job.Recurrence.Interval != 2 {
			t.Errorf("interval %d, want the new recurrence's 2", r.Job.Recurrence.Interval)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(resume) + 30*time.Second)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		r, _ = st.GetJob(ctx, scheduler.DefaultCollection, "tick")
		if def := r.Definition(); r.State != scheduler.JobEnabled || def.StateReason != "" || def.ResumeTime != nil || runs.Load() == 0 {
			t.Errorf("after the resume time: %s %q %v, %d runs; want Enabled, running", r.State, def.StateReason, def.ResumeTime, runs.Load())
		}

		// pauseAfterFaults: paused by its faults, with no resume time.
		s = schedule(2, true)
		if _, err := s.PatchJob(ctx, scheduler.DefaultCollection, "tick", []byte(`{"properties": {"runPolicy": {"pauseAfterFaults": 1}}}`), nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		r, _ = st.GetJob(ctx, scheduler.DefaultCollection, "tick")
		reason := r.Definition().StateReason
		if r.State != scheduler.JobDisabled || !strings.Contains(reason, "pauseAfterFaults") {
			t.Fatalf("after a fault: %s %q; want Disabled by pauseAfterFaults", r.State, reason)
		}
		schedule(3, false)
		r, _ = st.GetJob(ctx, scheduler.DefaultCollection, "tick")
		if got := r.Definition().StateReason; r.State != scheduler.JobDisabled || got != reason || r.Job.Recurrence.Interval != 3 {
			t.Errorf("after ScheduleFunc with a new recurrence: %s %q, interval %d; want Disabled, %q, 3", r.State, got, r.Job.Recurrence.Interval, reason)
		}
	})
}
