package scheduler_test

import (
	"context"
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

// slowFirstAcquire is a store whose first AcquirePermits takes hold.
type slowFirstAcquire struct {
	*memory.Store
	hold time.Duration
	held atomic.Bool
}

func (s *slowFirstAcquire) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	if s.held.CompareAndSwap(false, true) {
		time.Sleep(s.hold)
	}
	return s.Store.AcquirePermits(ctx, req)
}

// TestLeaseCheckedAfterSlowPermits checks that a claimed job whose
// permits took most of its lease to acquire, after its lease was found
// long enough to start, does not start on a lease that lapses before its
// first extension: a second instance must not run the one-time job again.
func TestLeaseCheckedAfterSlowPermits(t *testing.T) {
	const lease = 3 * time.Second
	for _, hold := range []time.Duration{1500 * time.Millisecond, 2600 * time.Millisecond, 2900 * time.Millisecond} {
		t.Run(hold.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var mu sync.Mutex
				runs := map[string]int{}
				reg := countSlowRuns(&mu, runs, 3*lease)
				st := &slowFirstAcquire{Store: memory.New(), hold: hold}
				cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond,
					Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, st, cfg, "a", "b")
				putLimits(t, ss[0], scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 100})
				due := time.Now().Add(time.Minute)
				def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
				if _, err := ss[0].PutJob(ctx, "c", "j", def, nil); err != nil {
					t.Fatal(err)
				}
				startSecondLater(t, ss, time.Until(due)+100*time.Millisecond, 10*lease)
				mu.Lock()
				defer mu.Unlock()
				if runs["c/j"] != 1 {
					t.Errorf("one-time job ran %d times, want 1", runs["c/j"])
				}
			})
		})
	}
}
