package scheduler_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
	"github.com/jobclock/scheduler/store/memory"
)

// firstRecordFails is a memory store whose first record of job "first"
// fails with err (see firstBatchFails).
type firstRecordFails struct {
	scheduler.Store
	mem    *memory.Store
	err    error
	mu     sync.Mutex
	failed bool
}

// fail reports whether the record of j is the one to fail.
func (s *firstRecordFails) fail(j *scheduler.JobRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed || j.Name != "first" {
		return false
	}
	s.failed = true
	return true
}

func (s *firstRecordFails) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if s.fail(j) {
		return s.err
	}
	return s.mem.Record(ctx, owner, j, history)
}

// firstBatchFails is a firstRecordFails with RecordBatch.
type firstBatchFails struct{ *firstRecordFails }

func (s firstBatchFails) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := s.mem.RecordBatch(ctx, owner, batch[:0])
	for _, req := range batch {
		if s.fail(req.Job) {
			errs = append(errs, s.err)
			continue
		}
		errs = append(errs, s.mem.RecordBatch(ctx, owner, []scheduler.RecordRequest{req})...)
	}
	return errs
}

// TestSlotFreedBeforeWake: with MaxConcurrency 1, a job due while the
// outcome of another job's attempt is recorded again (RecordBatch failed,
// or an API write came first) starts as soon as that outcome is recorded
// and frees the one slot, not at the loop's next poll; whether the attempt
// succeeded or failed (and is retried). It follows the goroutines that
// record again end to end, and catches a wake-up before the slot is free
// only when the loop steps in between, seldom: TestFreeSlotReleasesBeforeWake
// checks that order every time. (Over a store without RecordBatch the
// worker records the outcome again itself, then frees its slot through
// freeSlot; no goroutine of its own records it.)
func TestSlotFreedBeforeWake(t *testing.T) {
	for _, fails := range []bool{false, true} {
		for _, cause := range []struct {
			name string
			err  error
		}{{"store failed", errUnreachable}, {"conflict", scheduler.ErrConflict}} {
			name := map[bool]string{false: "succeeded/", true: "failed/"}[fails] + cause.name
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testSlotFreedBeforeWake(t, fails, cause.err) })
			})
		}
	}
}

func testSlotFreedBeforeWake(t *testing.T, fails bool, recordErr error) {
	ctx := context.Background()
	mem := memory.New()
	st := firstBatchFails{&firstRecordFails{Store: mem, mem: mem, err: recordErr}}
	var mu sync.Mutex
	started := make(map[string]time.Time) // the first start of each job
	stored := make(map[string]time.Time)  // when the first entry of each job was stored
	reg := &action.Registry{}
	reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		mu.Lock()
		job := strings.TrimPrefix(req.JobID(), "c/")
		if _, ok := started[job]; !ok {
			started[job] = time.Now()
		}
		mu.Unlock()
		if fails && job == "first" {
			return nil, errUnreachable
		}
		return &action.Result{Message: "done"}, nil
	}))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", MaxConcurrency: 1,
		OnHistory: func(h scheduler.HistoryEntry) {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := stored[h.Job]; !ok {
				stored[h.Job] = time.Now()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	first := time.Now().Add(time.Second)
	second := first.Add(100 * time.Millisecond) // while the first outcome is recorded again
	one := 1
	retryEvery := &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: &one}
	if _, err := s.PutJob(ctx, "c", "first", &scheduler.Job{StartTime: &first, Action: action.Action{Type: "Work", RetryPolicy: retryEvery}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "second", &scheduler.Job{StartTime: &second, Action: action.Action{Type: "Work"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * scheduler.DefaultPollInterval)
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	freed, ok := stored["first"]
	if !ok {
		t.Fatalf("the first job's outcome was not recorded; started %v", started)
	}
	got, ok := started["second"]
	if !ok {
		t.Fatalf("the second job did not start; the first job's outcome was recorded at %v", freed)
	}
	if want := maxTime(second, freed); got.After(want) {
		t.Errorf("the second job started %v after the first job's outcome was recorded (%v after it was due), want at once",
			got.Sub(freed), got.Sub(second))
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
