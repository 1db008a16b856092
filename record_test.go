package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// plainStore hides the memory store's RecordBatch, so that the scheduler
// records each outcome with Record.
type plainStore struct{ scheduler.Store }

// TestRecordWithoutBatchRecorder runs retries over a store without
// RecordBatch.
func TestRecordWithoutBatchRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := plainStore{memory.New()}
		if _, ok := scheduler.Store(st).(scheduler.BatchRecorder); ok {
			t.Fatal("plainStore is a BatchRecorder")
		}
		var mu sync.Mutex
		calls := 0
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return nil, errors.New("boom")
			}
			return nil, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, MinRetryInterval: time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		h, err := s.ListHistory(ctx, "c", "j", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].Status != scheduler.StatusCompleted || h[1].Status != scheduler.StatusFailed {
			t.Errorf("history = %+v, want Failed then Completed (newest first)", h)
		}
		r, err := s.GetJob(ctx, "c", "j")
		if err != nil || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 2 || r.Status.FailureCount != 1 {
			t.Errorf("job = %+v, %v; want Completed after 2 executions, 1 failed", r, err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
