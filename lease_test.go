package scheduler_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestLeaseExtendedDuringLongAttempt checks that a second instance does
// not claim a job whose attempt outlives the lease it was claimed with.
func TestLeaseExtendedDuringLongAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var mu sync.Mutex
		calls := 0
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			time.Sleep(20 * time.Second) // ignores its context
			return nil, nil
		}))
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 3 * time.Second, ActionTimeout: time.Minute,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
		ctx := context.Background()
		ss := instances(t, st, cfg, "a", "b")
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ss[0].Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ss[0].PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // a has claimed it
		if err := ss[1].Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, s := range ss {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if calls != 1 {
			t.Errorf("%d attempts, want 1: the lease was not kept during the attempt", calls)
		}
	})
}

// instances returns a Scheduler over st for each of ids, with cfg and that
// InstanceID, and puts collection "c".
func instances(t *testing.T, st scheduler.Store, cfg scheduler.Config, ids ...string) []*scheduler.Scheduler {
	t.Helper()
	var ss []*scheduler.Scheduler
	for _, id := range ids {
		cfg.InstanceID = id
		s, err := scheduler.New(st, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	if _, err := ss[0].PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return ss
}
