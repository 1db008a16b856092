package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
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
// With a hold of the lease less ClaimAhead, the lease of the claim made
// ClaimAhead before the due instant lapses as the permits come: the loop
// may claim the job again at that instant, before the claim found too
// short is given back, and that give-back must leave the new claim alone
// (the job ran twice when it released it and the loop claimed a third
// time).
func TestLeaseCheckedAfterSlowPermits(t *testing.T) {
	const lease = 3 * time.Second
	for _, hold := range []time.Duration{1500 * time.Millisecond, 2600 * time.Millisecond, 2900 * time.Millisecond, lease - scheduler.DefaultClaimAhead} {
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

// slowFirstAcquireFails is a store whose first AcquirePermits takes hold
// and then fails, when fail is set.
type slowFirstAcquireFails struct {
	*memory.Store
	hold time.Duration
	fail bool
	held atomic.Bool
}

func (s *slowFirstAcquireFails) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	if s.held.CompareAndSwap(false, true) {
		time.Sleep(s.hold)
		if s.fail {
			return scheduler.PermitGrant{}, errors.New("permits: the store is away")
		}
	}
	return s.Store.AcquirePermits(ctx, req)
}

// TestSlowPermitsClaimedAgainRunsOnce: one instance, whose first permit
// request takes about its lease or longer, so that its run loop claims
// the job again once the first claim's lease lapses. The one-time job
// runs once: the first claim, found too short to start, leaves the second
// claim alone (a give-back that released it let a third claim run the job
// beside the second); and when that first request fails instead, the
// record of the wait for the limit conflicts with the second claim, and
// the step reading the job again leaves it to that claim rather than
// taking its lease over and running the job beside it.
func TestSlowPermitsClaimedAgainRunsOnce(t *testing.T) {
	const lease = 3 * time.Second
	for _, fail := range []bool{false, true} {
		for _, hold := range []time.Duration{lease - scheduler.DefaultClaimAhead, lease, lease + 100*time.Millisecond, lease + 500*time.Millisecond} {
			t.Run(fmt.Sprintf("fail=%v/%v", fail, hold), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx := context.Background()
					var mu sync.Mutex
					runs := map[string]int{}
					reg := countSlowRuns(&mu, runs, 3*lease)
					st := &slowFirstAcquireFails{Store: memory.New(), hold: hold, fail: fail}
					cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond,
						Logger: slog.New(slog.DiscardHandler)}
					s := instances(t, st, cfg, "a")[0]
					putLimits(t, s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 100})
					due := time.Now().Add(time.Minute)
					def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
					if _, err := s.PutJob(ctx, "c", "j", def, nil); err != nil {
						t.Fatal(err)
					}
					if err := s.Start(ctx); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Until(due) + 10*lease)
					synctest.Wait()
					if err := s.Stop(ctx); err != nil {
						t.Fatal(err)
					}
					mu.Lock()
					defer mu.Unlock()
					if runs["c/j"] != 1 {
						t.Errorf("one-time job ran %d times, want 1", runs["c/j"])
					}
				})
			})
		}
	}
}

// extendAfterRelease is a memory store whose first ExtendPermits waits
// for the first ReleasePermits to have given the permits back: the lease
// keeper's extension of an attempt's permits answers after the attempt
// ended and gave them back.
type extendAfterRelease struct {
	*memory.Store
	extending chan struct{} // closed when the first ExtendPermits comes
	released  chan struct{} // closed once the first ReleasePermits returned
	once      sync.Once
	first     atomic.Bool
}

func (s *extendAfterRelease) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	if s.first.CompareAndSwap(false, true) {
		close(s.extending)
		<-s.released
	}
	return s.Store.ExtendPermits(ctx, holder, now, until)
}

func (s *extendAfterRelease) ReleasePermits(ctx context.Context, holder string) error {
	err := s.Store.ReleasePermits(ctx, holder)
	s.once.Do(func() { close(s.released) })
	return err
}

// TestPermitsGivenBackAsExtended: an extension of an attempt's permits
// that answers once the attempt ended and gave them back finds none held,
// which is no loss: nothing is logged as an error.
func TestPermitsGivenBackAsExtended(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &extendAfterRelease{Store: memory.New(), extending: make(chan struct{}), released: make(chan struct{})}
		reg := &action.Registry{}
		reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			<-st.extending // the attempt ends as its permits are being extended
			return nil, nil
		}))
		var log syncbuf.Buffer
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", LeaseDuration: 30 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 10})
		at := time.Now().Add(time.Second)
		if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		time.Sleep(time.Minute)
		r, err := s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.ExecutionCount != 1 || r.Status.FailureCount != 0 {
			t.Errorf("status %+v, want one execution that succeeded", r.Status)
		}
		for l := range strings.Lines(log.String()) {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Errorf("log: %s", l)
			}
		}
	})
}
