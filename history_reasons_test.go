package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// slowJob is a job that runs every minute, without startTime, whose
// action (of type Slow) takes 150 seconds; payload tells one definition
// from another.
func slowJob(payload, runPolicy string) string {
	return fmt.Sprintf(`{"action": {"type": "Slow", "custom": {"to": %q}}, "recurrence": {"frequency": "Minute", "interval": 1}%s}`, payload, runPolicy)
}

// newSlowScheduler returns a Scheduler over st whose actions of type
// Slow take 150 seconds, with collection c.
func newSlowScheduler(t *testing.T, st scheduler.Store) *scheduler.Scheduler {
	t.Helper()
	reg := new(action.Registry)
	action.Handle(reg, "Slow", func(ctx context.Context, req *action.Request, p Digest) error {
		time.Sleep(150 * time.Second)
		return nil
	})
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler), ActionTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(t.Context(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// entries returns the job's history, oldest first, one line each: its
// status, occurrence, expected time after t0 and message.
func entries(t *testing.T, st scheduler.Store, name string, t0 time.Time) []string {
	t.Helper()
	h, err := st.ListHistory(t.Context(), "c", name, scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(h) - 1; i >= 0; i-- {
		e := h[i]
		out = append(out, fmt.Sprintf("%s #%d at %v: %s", e.Status, e.RepeatCount, e.ExpectedExecutionTime.Sub(t0), e.Message))
	}
	return out
}

// TestPutWhileRunningReasons: the occurrences of a job put again while
// its attempt runs, which come due before that attempt ends, are handled
// as occurrences due while one is in progress (runPolicy.overlap
// Postpone: one waits, the others are skipped as such), not as missed
// ones: nothing was down.
func TestPutWhileRunningReasons(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		s := newSlowScheduler(t, st)
		ctx := t.Context()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		t0 := time.Now()
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("a", "")), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second) // occurrence 1 runs until 2m30s
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("b", "")), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Second)
		var skipped, postponed int
		got := entries(t, st, "j", t0)
		for _, e := range got {
			if strings.Contains(e, "missed") {
				t.Errorf("entry %q says occurrences were missed; nothing was down", e)
			}
			switch {
			case strings.HasPrefix(e, "Skipped"):
				skipped++
				if !strings.Contains(e, "occurrence 1 was still in progress") || !strings.Contains(e, "runPolicy.overlap Postpone") {
					t.Errorf("entry %q does not say that occurrence 1 was in progress (runPolicy.overlap Postpone)", e)
				}
			case strings.HasPrefix(e, "Postponed"):
				postponed++
				if !strings.Contains(e, "#2 at 30s") || !strings.Contains(e, "occurrence 1") || !strings.Contains(e, "in progress") {
					t.Errorf("entry %q: want occurrence 2, expected at 30s, waiting for occurrence 1 in progress", e)
				}
			}
		}
		if skipped != 1 || postponed != 1 {
			t.Errorf("history: %d Skipped and %d Postponed entries, want 1 of each:\n%s", skipped, postponed, strings.Join(got, "\n"))
		}
	})
}

// TestRunAllCatchUpReasons: after a downtime, runPolicy.missed RunAll runs
// the missed occurrences one at a time, and the Postponed entry of each
// that waits says so, not that an occurrence was still in progress when
// it came due.
func TestRunAllCatchUpReasons(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		s := newSlowScheduler(t, st)
		ctx := t.Context()
		t0 := time.Now()
		// Put while no Scheduler runs: occurrences at 0s, 1m and 2m are
		// missed.
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("a", `, "runPolicy": {"missed": "RunAll"}`)), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2*time.Minute + 30*time.Second)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		time.Sleep(3 * time.Minute) // occurrence 1 runs until 5m
		got := entries(t, st, "j", t0)
		var postponed int
		for _, e := range got {
			var n int
			if _, err := fmt.Sscanf(e, "Postponed #%d", &n); err != nil {
				continue
			}
			postponed++
			// Occurrence n waits for n-1, which started after n came due.
			before := fmt.Sprintf("occurrence %d", n-1)
			if strings.Contains(e, "still in progress") || !strings.Contains(e, "runPolicy.missed RunAll") || !strings.Contains(e, before) {
				t.Errorf("entry %q: want it to wait its turn after %s under runPolicy.missed RunAll, not for one still in progress", e, before)
			}
		}
		if postponed == 0 {
			t.Errorf("no Postponed entry in the history:\n%s", strings.Join(got, "\n"))
		}
	})
}

// TestPutWhileRunningOverlapReasons: under runPolicy.overlap CancelRunning
// too, the occurrences of a job put again while its attempt runs that come
// due before that attempt ends are passed over as due while it was in
// progress, not as missed, and the occurrences that follow are numbered
// after it. Under AllowAll the attempt began under a definition that ran
// one occurrence at a time, so it held the job: the occurrences that came
// due meanwhile each run when it ends, beside one another, and none is
// passed over.
func TestPutWhileRunningOverlapReasons(t *testing.T) {
	for _, overlap := range []string{"CancelRunning", "AllowAll"} {
		t.Run(overlap, func(t *testing.T) {
			putAgainStores(t, func(t *testing.T, st scheduler.Store) {
				s := newSlowScheduler(t, st)
				ctx := t.Context()
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer s.Stop(context.Background())
				t0 := time.Now()
				first := ""
				if overlap == "CancelRunning" {
					first = `, "runPolicy": {"overlap": "CancelRunning"}`
				}
				if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("a", first)), nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(30 * time.Second) // occurrence 1 runs until 2m30s
				if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("b", `, "runPolicy": {"overlap": "`+overlap+`"}`)), nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(150 * time.Second)
				got := entries(t, st, "j", t0)
				var skipped int
				for _, e := range got {
					if strings.Contains(e, "missed") {
						t.Errorf("entry %q says occurrences were missed; nothing was down", e)
					}
					if strings.HasPrefix(e, "Skipped") {
						skipped++
						if !strings.Contains(e, "while occurrence 1") || !strings.Contains(e, "a new definition was put while it ran") || !strings.Contains(e, "runPolicy.overlap "+overlap) {
							t.Errorf("entry %q does not say that occurrence 1 was in progress when the new definition was put (runPolicy.overlap %s)", e, overlap)
						}
					}
				}
				want := 1
				if overlap == "AllowAll" {
					want = 0
				}
				if skipped != want {
					t.Errorf("history: %d Skipped entries, want %d:\n%s", skipped, want, strings.Join(got, "\n"))
				}
				// The first occurrence of the new definition, which runs
				// now, is the job's second; under AllowAll the two after
				// it, at 90s and 150s, run beside it.
				time.Sleep(150 * time.Second)
				got = entries(t, st, "j", t0)
				ran := []string{"Completed #2 at 30s: "}
				if overlap == "AllowAll" {
					ran = append(ran, "Completed #3 at 1m30s: ", "Completed #4 at 2m30s: ")
				}
				for _, e := range ran {
					if !slices.Contains(got, e) {
						t.Errorf("history has no entry %q:\n%s", e, strings.Join(got, "\n"))
					}
				}
			})
		})
	}
}

// TestPutWhileCancelledReason: under runPolicy.overlap CancelRunning, an
// attempt of a job put again while it ran, cancelled when the next
// occurrence of the definition it began under came due, says that a new
// definition was put, not that an occurrence of the earlier one came due.
func TestPutWhileCancelledReason(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		reg := new(action.Registry)
		action.Handle(reg, "Slow", func(ctx context.Context, req *action.Request, p Digest) error {
			select {
			case <-time.After(150 * time.Second):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler), ActionTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		t0 := time.Now()
		policy := `, "runPolicy": {"overlap": "CancelRunning"}`
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("a", policy)), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second) // occurrence 1 is cancelled at 1m
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("b", policy)), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		got := entries(t, st, "j", t0)
		want := "Failed #1 at 0s: cancelled: a new definition of the job was put while it ran (runPolicy.overlap CancelRunning): context canceled"
		if len(got) == 0 || got[0] != want {
			t.Errorf("history:\n%s\nwant first %q", strings.Join(got, "\n"), want)
		}
		time.Sleep(time.Minute)
		if got = entries(t, st, "j", t0); !slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "Failed #2 at 30s: ") }) {
			t.Errorf("history has no entry of occurrence 2, expected at 30s:\n%s", strings.Join(got, "\n"))
		}
	})
}

// TestCancelRunningLongAttemptReasons: under runPolicy.overlap
// CancelRunning, an attempt whose executor ignores its context runs past
// the next occurrences; when it ends, the first of them runs and the
// Skipped entry of the others says that they came due while it was in
// progress, not that they were missed: nothing was down.
func TestCancelRunningLongAttemptReasons(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		s := newSlowScheduler(t, st)
		ctx := t.Context()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(context.Background())
		t0 := time.Now()
		if _, err := s.PutJobJSON(ctx, "c", "j", []byte(slowJob("a", `, "runPolicy": {"overlap": "CancelRunning"}`)), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Minute) // occurrence 1 runs until 2m30s, then 2 (expected at 1m)
		got := entries(t, st, "j", t0)
		want := []string{
			"Completed #1 at 0s: ",
			"Skipped #0 at 2m0s: skipped 1 occurrence expected at 2000-01-01T00:02:00Z: they came due while occurrence 1 was in progress; " +
				"the job ran once for them, as the occurrence expected at 2000-01-01T00:01:00Z (runPolicy.overlap CancelRunning)",
		}
		if !slices.Equal(got, want) {
			t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
