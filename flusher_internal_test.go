package scheduler

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
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

// TestTimedFlushNotEarly: the flush goroutine takes the timer's tick of
// its idle wait (a linger after a flush, none timed) while a worker holds
// the batch's lock and times a flush a linger later: the outcome waits
// that linger, not flushed at once by the goroutine that then sees a
// flush timed. Real time: synctest does not advance its clock while a
// goroutine waits for a mutex, and the tick must come while one is held.
func TestTimedFlushNotEarly(t *testing.T) {
	const linger = 50 * time.Millisecond
	s, st := lingerScheduler(t, linger)
	b := &s.outcomes
	b.mu.Lock()
	b.add(lingerOutcome(s, "a", time.Now()))
	s.flushAfter(time.Millisecond)
	b.mu.Unlock()
	// a is recorded after 1 ms; the goroutine then waits a linger.
	for {
		if _, ok := st.storedAt("a"); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.mu.Lock()
	if !flushTimedWaitsForLock(5 * time.Second) {
		b.mu.Unlock()
		t.Fatal("the flush goroutine never took its idle tick")
	}
	end := time.Now()
	b.add(lingerOutcome(s, "b", end))
	s.flushAfter(linger)
	b.mu.Unlock()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	at, ok := st.storedAt("b")
	if !ok {
		t.Fatal("b never recorded")
	}
	if w := at.Sub(end); w < linger {
		t.Errorf("b recorded %v after it ended, want the linger timed for it, %v, or more", w, linger)
	}
}

// flushTimedWaitsForLock reports whether the goroutine of flushTimed
// comes to wait for a mutex within limit.
func flushTimedWaitsForLock(limit time.Duration) bool {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, ".flushTimed(") {
				return true
			}
		}
	}
	return false
}
