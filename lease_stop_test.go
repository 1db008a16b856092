package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// extensionsAfterStop is a store whose ExtendLease and ExtendLeases are
// slow and count the calls made once stopped is set.
type extensionsAfterStop struct {
	*slowExtensions
	stopped atomic.Bool
	after   atomic.Int64
}

func (s *extensionsAfterStop) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	err := s.slowExtensions.ExtendLease(ctx, collection, name, owner, until)
	if s.stopped.Load() {
		s.after.Add(1)
	}
	return err
}

func (s *extensionsAfterStop) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	errs := s.slowExtensions.ExtendLeases(ctx, owner, until, jobs)
	if s.stopped.Load() {
		s.after.Add(1)
	}
	return errs
}

// TestNoExtensionsAfterStop checks that the lease keeper makes no call to
// the store once Stop returned: with 2,000 outcomes waiting for a
// RecordBatch held two leases and 50ms per call that extends leases, the
// extensions of their leases (one call per job when the store has no
// ExtendLeases) were still under way when Stop returned.
func TestNoExtensionsAfterStop(t *testing.T) {
	const lease, n = 3 * time.Second, 2000
	for _, call := range []string{"ExtendLease", "ExtendLeases"} {
		t.Run(call, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var mu sync.Mutex
				runs := map[string]int{}
				st := &extensionsAfterStop{slowExtensions: &slowExtensions{heldRecords: &heldRecords{Store: memory.New(), hold: 2 * lease, n: map[string]int{}}, d: 50 * time.Millisecond}}
				var store scheduler.Store = st
				if call == "ExtendLease" {
					store = oneByOne{st, st, st}
				}
				cfg := scheduler.Config{Executors: countRuns(&mu, runs), LeaseDuration: lease, PollInterval: 100 * time.Millisecond, MaxConcurrency: 100,
					HistoryPerJob: scheduler.NoHistory, Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, store, cfg, "a")
				quota := &scheduler.Quota{MaxJobCount: n + 1}
				if _, err := ss[0].PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: quota}}, nil); err != nil {
					t.Fatal(err)
				}
				due := time.Now().Add(time.Minute)
				for i := range n {
					def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
					if _, err := ss[0].PutJob(ctx, "c", fmt.Sprintf("j%04d", i), def, nil); err != nil {
						t.Fatal(err)
					}
				}
				if err := ss[0].Start(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Until(due) + lease)
				if err := ss[0].Stop(ctx); err != nil {
					t.Fatal(err)
				}
				st.stopped.Store(true)
				time.Sleep(time.Minute)
				synctest.Wait()
				if st.after.Load() > 0 {
					t.Errorf("%d %s calls after Stop returned", st.after.Load(), call)
				}
			})
		})
	}
}

// TestTricklingOutcomesKeepLeases checks that outcomes that come to wait
// for the store while the leases of others waiting are being extended
// keep their leases: 300 one-time jobs due over a spread, their
// RecordBatch held ten leases and 50ms per ExtendLease, and a second
// instance must run none of them again.
func TestTricklingOutcomesKeepLeases(t *testing.T) {
	const lease, n = 3 * time.Second, 300
	for _, spread := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second} {
		t.Run(spread.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var mu sync.Mutex
				runs := map[string]int{}
				st := &slowExtensions{heldRecords: &heldRecords{Store: memory.New(), hold: 10 * lease, n: map[string]int{}}, d: 50 * time.Millisecond}
				cfg := scheduler.Config{Executors: countRuns(&mu, runs), LeaseDuration: lease, PollInterval: 100 * time.Millisecond, MaxConcurrency: 100,
					HistoryPerJob: scheduler.NoHistory, Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, st, cfg, "a", "b")
				quota := &scheduler.Quota{MaxJobCount: n + 1}
				if _, err := ss[0].PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: quota}}, nil); err != nil {
					t.Fatal(err)
				}
				t0 := time.Now().Add(time.Minute)
				for i := range n {
					at := t0.Add(spread * time.Duration(i) / n)
					def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
					if _, err := ss[0].PutJob(ctx, "c", fmt.Sprintf("j%04d", i), def, nil); err != nil {
						t.Fatal(err)
					}
				}
				startSecondLater(t, ss, time.Until(t0)+spread+time.Second, 20*lease)
				mu.Lock()
				defer mu.Unlock()
				if twice := ranNotOnce(runs, n); twice > 0 {
					t.Errorf("%d of %d one-time jobs did not run exactly once", twice, n)
				}
			})
		})
	}
}

// hungExtension is a store whose ExtendLease of job c/hung does not
// return until its context ends or release is closed. It embeds the Store
// interface, not the memory store, so it is no LeaseExtender: the lease
// keeper extends each lease with an ExtendLease of its own.
type hungExtension struct {
	scheduler.Store
	release chan struct{}
}

func (s *hungExtension) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if name == "hung" {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.release:
			return context.Canceled
		}
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

// TestHungExtensionHoldsNoOtherLease checks that an ExtendLease that
// hangs for one job does not keep the lease keeper from extending the
// leases of the other running attempts: a second instance must not run
// the other one-time job again.
func TestHungExtensionHoldsNoOtherLease(t *testing.T) {
	const lease = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		runs := map[string]int{}
		reg := countSlowRuns(&mu, runs, 5*lease)
		st := &hungExtension{Store: memory.New(), release: make(chan struct{})}
		defer close(st.release)
		cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond,
			ActionTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a", "b")
		due := time.Now().Add(time.Minute)
		for _, name := range []string{"hung", "other"} {
			def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
			if _, err := ss[0].PutJob(ctx, "c", name, def, nil); err != nil {
				t.Fatal(err)
			}
		}
		startSecondLater(t, ss, time.Until(due)+100*time.Millisecond, 10*lease)
		mu.Lock()
		defer mu.Unlock()
		if runs["c/other"] != 1 {
			t.Errorf("the one-time job whose lease extensions answer ran %d times, want 1", runs["c/other"])
		}
	})
}
