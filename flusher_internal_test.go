package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler/action"
)

// lingerStore answers the run loop's calls at once, is an AheadClaimer
// (so that outcomes may linger, see Scheduler.linger) and notes when it
// stored each job's outcome.
type lingerStore struct {
	quietStore
	mu     sync.Mutex
	stored map[string]time.Time
}

func (*lingerStore) ClaimDueBy(context.Context, ClaimRequest) ([]*JobRecord, error) { return nil, nil }
func (*lingerStore) GiveBack(context.Context, string, []*JobRecord) []error         { return nil }

func (l *lingerStore) RecordBatch(_ context.Context, _ string, reqs []RecordRequest) []error {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range reqs {
		l.stored[r.Job.Name] = now
	}
	return nil
}

func (l *lingerStore) storedAt(name string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.stored[name]
	return at, ok
}

func lingerScheduler(t *testing.T, linger time.Duration) (*Scheduler, *lingerStore) {
	t.Helper()
	st := &lingerStore{stored: map[string]time.Time{}}
	s, err := New(st, &Config{Logger: slog.New(slog.DiscardHandler), ClaimAhead: linger, LeaseDuration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// lingerOutcome is a pending outcome of job name that ended at end, its
// attempt counted as running (as a worker's is until it is recorded).
func lingerOutcome(s *Scheduler, name string, end time.Time) *pendingOutcome {
	s.wg.Add(1)
	s.inFlight.Add(1)
	def := &Job{Action: action.Action{Type: action.HTTP}}
	r := &JobRecord{Collection: "c", Name: name, Job: def}
	hist := []HistoryEntry{{Collection: "c", Job: name, ActionName: MainAction, Status: StatusCompleted, StartTime: end, EndTime: end}}
	return &pendingOutcome{r: r, def: def, all: hist, res: outcome{start: end, end: end}, leaseAt: end.Add(time.Minute)}
}

// TestStopAfterTimedOutcomesRecorded: a flush timed for a lingering
// outcome, then an outcome that must not linger records both at once;
// Stop then has nothing left to record and returns at once, rather than
// waiting for the timer armed for the first (a ctx shorter than that
// made it return the ctx's error).
func TestStopAfterTimedOutcomesRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const linger = 50 * time.Millisecond
		s, st := lingerScheduler(t, linger)
		b := &s.outcomes
		b.mu.Lock()
		b.add(lingerOutcome(s, "a", time.Now()))
		s.flushAfter(linger)
		b.add(lingerOutcome(s, "b", time.Now()))
		s.flushPending() // releases b.mu
		for _, name := range []string{"a", "b"} {
			if _, ok := st.storedAt(name); !ok {
				t.Fatalf("%s not recorded by the flush", name)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), linger/5)
		defer cancel()
		t0 := time.Now()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop with every outcome recorded = %v after %v, want nil", err, time.Since(t0))
		}
		if took := time.Since(t0); took != 0 {
			t.Errorf("Stop with every outcome recorded took %v, want no wait", took)
		}
		time.Sleep(linger) // a Stop that gave up ends with the timer
	})
}
