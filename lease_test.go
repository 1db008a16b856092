package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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

// failingExtensions is a store whose ExtendLease fails.
type failingExtensions struct {
	*memory.Store
}

func (s failingExtensions) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	return errors.New("extend lease: the store is away")
}

// TestExtendLeaseFailuresLoggedOncePerPass checks that the extensions of
// the leases of many running attempts that fail together are logged in
// one warning per pass of the lease keeper, which counts them, names ten
// of the jobs and gives the first error, rather than a line per job.
func TestExtendLeaseFailuresLoggedOncePerPass(t *testing.T) {
	const n = 24
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := &action.Registry{}
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			time.Sleep(5 * time.Second) // ignores its context
			return nil, nil
		}))
		logs := &logRecords{}
		st := failingExtensions{memory.New()}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 3 * time.Second, ActionTimeout: time.Minute, MaxConcurrency: n,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(logs)}
		s := instances(t, st, cfg, "a")[0]
		due := time.Now().Add(time.Second)
		for i := range n {
			def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
			if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%02d", i), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		var warned, failed, full int
		for _, r := range logs.at(slog.LevelWarn) {
			if !strings.HasPrefix(r["msg"], "extend lease") {
				continue
			}
			warned++
			f, _ := strconv.Atoi(r["failed"])
			failed += f
			if f > 10 {
				full++
			}
			if r["job"] != "" || f < 1 || strings.Count(r["jobs"], "c/j") != min(f, 10) || !strings.Contains(r["first_err"], "the store is away") {
				t.Errorf("warning %v, want one per pass with how many failed, up to ten jobs and the first error", r)
			}
		}
		if full == 0 || failed < 2*n {
			t.Errorf("%d warnings of %d extensions that failed, %d of more than ten; want a warning per pass of the %d leases' extensions", warned, failed, full, n)
		}
	})
}
