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
