package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestTakeoverKeepsNextOccurrence: an instance that takes over a job
// whose claim expired (its owner stopped, say) runs the occurrence the
// claim held, late, and does not merge away the occurrences that the
// takeover makes late by less than the recurrence interval: they run
// after it. Only those later than the interval count as missed. The same
// holds when the claim that expired was the instance's own (the process
// restarted under its InstanceID, or its claim lapsed while the store
// stalled): which instance claims the job again does not change what
// runs.
func TestTakeoverKeepsNextOccurrence(t *testing.T) {
	for _, claimant := range []string{"a", "b"} {
		t.Run("claimed by "+claimant, func(t *testing.T) { testTakeoverKeepsNextOccurrence(t, claimant) })
	}
}

// testTakeoverKeepsNextOccurrence is TestTakeoverKeepsNextOccurrence
// with the expired claim made by instance claimant, and instance b
// claiming the job again.
func testTakeoverKeepsNextOccurrence(t *testing.T, claimant string) {
	for _, tt := range []struct {
		every   int32
		skipped int // occurrences merged into the one taken over
	}{
		{every: 7},             // 0 s (10 s late), 7 s (3 s late)
		{every: 5, skipped: 1}, // 0 s, 5 s (5 s late: not more, waits), 10 s (skipped by runPolicy.overlap Postpone: 5 s waits already)
		{every: 4, skipped: 1}, // 0 s, 4 s (6 s late: merged), 8 s (2 s late)
		{every: 3, skipped: 2}, // 0 s, 3 s and 6 s (merged), 9 s (1 s late)
	} {
		t.Run(fmt.Sprintf("every %ds", tt.every), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				st := memory.New()
				var mu sync.Mutex
				runs := map[string]int{}
				cfg := scheduler.Config{Executors: countRuns(&mu, runs), Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, st, cfg, "b")
				coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
					Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Second", Interval: 1}}}}
				if _, err := ss[0].PutCollection(ctx, "c", coll, nil); err != nil {
					t.Fatal(err)
				}
				t0 := time.Now().Add(time.Minute).Truncate(time.Minute)
				def := &scheduler.Job{StartTime: &t0, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)},
					Recurrence: &recurrence.Recurrence{Frequency: recurrence.Second, Interval: tt.every}}
				if _, err := ss[0].PutJob(ctx, "c", "j", def, nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Until(t0))
				// The claimant claims the job as it comes due, and stops
				// before it starts the attempt.
				claims, err := st.ClaimDue(ctx, time.Now(), claimant, time.Now().Add(scheduler.DefaultLeaseDuration), 10)
				if err != nil || len(claims) != 1 {
					t.Fatalf("ClaimDue = %d jobs, %v; want 1", len(claims), err)
				}
				if err := ss[0].Start(ctx); err != nil {
					t.Fatal(err)
				}
				end := t0.Add(scheduler.DefaultLeaseDuration + 3*time.Duration(tt.every)*time.Second + time.Second)
				time.Sleep(time.Until(end))
				hist, err := ss[0].ListHistory(ctx, "c", "j", nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := ss[0].Stop(ctx); err != nil {
					t.Fatal(err)
				}
				var merged, completed int
				for _, h := range hist {
					switch h.Status {
					case scheduler.StatusSkipped:
						merged += h.Skipped
						t.Logf("skipped %v..%v: %s", h.ExpectedExecutionTime.Sub(t0), h.LastExpectedTime.Sub(t0), h.Message)
					case scheduler.StatusCompleted:
						completed++
					}
				}
				// Every occurrence up to end runs or is merged, once.
				want := int(end.Sub(t0)/(time.Duration(tt.every)*time.Second)) + 1
				if merged != tt.skipped || completed+merged != want {
					t.Errorf("%d occurrences merged, %d run; want %d merged, %d run", merged, completed, tt.skipped, want-tt.skipped)
				}
			})
		})
	}
}

// takenOverStore is a memory store whose Record fails with ErrLeaseLost,
// as when another instance took the job over while the attempt ran.
type takenOverStore struct{ scheduler.Store }

func (s takenOverStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	return fmt.Errorf("memory: record job %q: lease held by \"b\", not %q: %w", j.ID(), owner, scheduler.ErrLeaseLost)
}

// TestTakenOverOutcomeWarned: an outcome that the store refuses because
// another instance took the job over, which the documentation describes
// as expected when an instance cannot reach the store for long, is logged
// as a warning that names the takeover, not as an error.
func TestTakenOverOutcomeWarned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		runs := map[string]int{}
		logs := &logRecords{}
		cfg := scheduler.Config{Executors: countRuns(&mu, runs), Logger: slog.New(logs)}
		s := instances(t, takenOverStore{memory.New()}, cfg, "a")[0]
		due := time.Now().Add(time.Second)
		if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if errs := logs.at(slog.LevelError); len(errs) != 0 {
			t.Errorf("errors logged: %v, want none", errs)
		}
		warned := 0
		for _, r := range logs.at(slog.LevelWarn) {
			if strings.Contains(r["msg"], "another instance took the job over") && r["job"] == "j" {
				warned++
			}
		}
		if warned != 1 {
			t.Errorf("%d warnings of the takeover, want 1: %v", warned, logs.at(slog.LevelWarn))
		}
	})
}
