package scheduler_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// putAgainStores runs test in a testing/synctest bubble over the memory
// store and over SQLite, each made in the bubble.
func putAgainStores(t *testing.T, test func(t *testing.T, st scheduler.Store)) {
	t.Run("memory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { test(t, memory.New()) })
	})
	t.Run("sqlite", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { test(t, openSQLite(t)) })
	})
}

// putAgainEnv is a started Scheduler over st with collection c, whose
// Digest actions are counted, and the bubble's start t0.
type putAgainEnv struct {
	s  *scheduler.Scheduler
	st scheduler.Store
	d  *digests
	t0 time.Time
}

func newPutAgainEnv(t *testing.T, st scheduler.Store) *putAgainEnv {
	t.Helper()
	reg := new(action.Registry)
	e := &putAgainEnv{st: st, d: newDigests(reg), t0: time.Now()}
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	if _, err := s.PutCollection(t.Context(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return e
}

// at sleeps until d after t0.
func (e *putAgainEnv) at(d time.Duration) {
	time.Sleep(time.Until(e.t0.Add(d)))
	synctest.Wait()
}

// expected returns the expected times, after t0, of the job's attempts on
// record, oldest first.
func (e *putAgainEnv) expected(t *testing.T, name string) []time.Duration {
	t.Helper()
	h, err := e.st.ListHistory(t.Context(), "c", name, scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Status == scheduler.StatusCompleted {
			out = append(out, h[i].ExpectedExecutionTime.Sub(e.t0))
		}
	}
	return out
}

// hourlyJob is a job that runs every hour, without startTime: from the
// instant it is put, and at that minute and second of each hour.
const hourlyJob = `{"action": {"type": "Digest", "custom": {"to": "ops"}},
	"recurrence": {"frequency": "Hour", "interval": 1}}`

// TestPutUnchangedKeepsSchedule: a job put again with the definition it
// has (an ARM template deployed again, a host that puts its jobs at every
// start) keeps its anchor, its next occurrence and its counters, and does
// not run at once; its tags are the put's. A put that changes the
// definition replaces the job, scheduled from the put's instant.
func TestPutUnchangedKeepsSchedule(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		e := newPutAgainEnv(t, st)
		ctx := t.Context()
		s := 1 * time.Second
		m := time.Minute
		e.at(12*m + 23*s)
		first, err := e.s.PutJobJSON(ctx, "c", "j", []byte(hourlyJob), nil)
		if err != nil {
			t.Fatal(err)
		}
		e.at(12*m + 26*s) // ran at 12:23
		again, err := e.s.PutJobJSON(ctx, "c", "j", []byte(hourlyJob), &scheduler.PutJobOptions{Tags: map[string]string{"team": "ops"}})
		if err != nil {
			t.Fatal(err)
		}
		if !again.Schedule.Anchor.Equal(first.Schedule.Anchor) || !again.Created.Equal(first.Created) {
			t.Errorf("put again: anchor %v, created %v; want those of the first put, %v and %v",
				again.Schedule.Anchor.Sub(e.t0), again.Created.Sub(e.t0), first.Schedule.Anchor.Sub(e.t0), first.Created.Sub(e.t0))
		}
		if got, want := again.Status.NextExecutionTime, e.t0.Add(72*m+23*s); got == nil || !got.Equal(want) {
			t.Errorf("put again: next execution %v, want %v", got, want)
		}
		if again.Status.ExecutionCount != 1 {
			t.Errorf("put again: %d executions, want the 1 of the first put kept", again.Status.ExecutionCount)
		}
		if diff := cmp.Diff(map[string]string{"team": "ops"}, again.Tags); diff != "" {
			t.Errorf("put again: tags (-want +got):\n%s", diff)
		}
		def, err := e.s.ParseJob([]byte(hourlyJob))
		if err != nil {
			t.Fatal(err)
		}
		e.at(13 * m)
		recs, err := e.s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "j", Job: def}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !recs[0].Schedule.Anchor.Equal(first.Schedule.Anchor) || recs[0].Tags != nil {
			t.Errorf("PutJobs again: anchor %v, tags %v; want the first put's anchor %v, no tags", recs[0].Schedule.Anchor.Sub(e.t0), recs[0].Tags, first.Schedule.Anchor.Sub(e.t0))
		}
		e.at(72*m + 30*s)
		if diff := cmp.Diff([]time.Duration{12*m + 23*s, 72*m + 23*s}, e.expected(t, "j")); diff != "" {
			t.Errorf("expected times of the runs after t0 (-want +got):\n%s", diff)
		}

		// A changed definition replaces the job: anchored at the put, it
		// runs at once and at 13:40 of each hour.
		e.at(73*m + 40*s)
		changed, err := e.s.PutJobJSON(ctx, "c", "j", []byte(`{"action": {"type": "Digest", "custom": {"to": "ops"}, "retryPolicy": {"retryType": "None"}},
			"recurrence": {"frequency": "Hour", "interval": 1}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !changed.Schedule.Anchor.Equal(e.t0.Add(73*m+40*s)) || changed.Status.ExecutionCount != 2 {
			t.Errorf("changed put: anchor %v, %d executions; want %v and the 2 kept", changed.Schedule.Anchor.Sub(e.t0), changed.Status.ExecutionCount, 73*m+40*s)
		}
		e.at(133*m + 45*s)
		if diff := cmp.Diff([]time.Duration{12*m + 23*s, 72*m + 23*s, 73*m + 40*s, 133*m + 40*s}, e.expected(t, "j")); diff != "" {
			t.Errorf("expected times of the runs after t0 (-want +got):\n%s", diff)
		}
	})
}
