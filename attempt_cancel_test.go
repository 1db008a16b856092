package scheduler_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestCancelRunningCause: when the next occurrence of a CancelRunning job
// comes due, the running attempt's context ends with context.Canceled and
// the cause ErrSuperseded, not with DeadlineExceeded as at its timeout;
// the attempt that runs into its timeout still ends with DeadlineExceeded.
func TestCancelRunningCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ActionTimeout: 90 * time.Second})
		var mu sync.Mutex
		type ended struct{ err, cause error }
		var ends []ended
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			<-ctx.Done()
			mu.Lock()
			ends = append(ends, ended{ctx.Err(), context.Cause(ctx)})
			mu.Unlock()
			return nil, ctx.Err()
		}))
		e.cfg.Executors = reg
		e.s = e.newScheduler()
		e.start()
		defer e.stop()
		// Every minute, CancelRunning: the first is cancelled at 2m when
		// the second comes due; the last (at 3m) times out at 4m30s.
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "count": 3}, "runPolicy": {"overlap": "CancelRunning"}`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(ends) != 3 {
			t.Fatalf("%d attempts ended, want 3: %v", len(ends), ends)
		}
		for i, end := range ends[:2] {
			if end.err != context.Canceled || !errors.Is(end.cause, scheduler.ErrSuperseded) {
				t.Errorf("attempt %d ended with %v, cause %v; want %v, cause %v", i+1, end.err, end.cause, context.Canceled, scheduler.ErrSuperseded)
			}
		}
		if end := ends[2]; end.err != context.DeadlineExceeded || end.cause != context.DeadlineExceeded {
			t.Errorf("the last attempt ended with %v, cause %v; want %v at its timeout", end.err, end.cause, context.DeadlineExceeded)
		}
	})
}

// TestCancelRunningHTTPMessage: the HTTP executor's history entry of an
// attempt that CancelRunning cancelled says so, not that it timed out.
func TestCancelRunningHTTPMessage(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // the first attempt waits until it is cancelled
		}
	}))
	defer srv.Close()
	s, done := webScheduler(t)
	ctx := context.Background()
	coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Second", Interval: 1}}}}
	if _, err := s.PutCollection(ctx, "web", coll, nil); err != nil {
		t.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/slow", "method": "GET"}},
		"recurrence": {"frequency": "Second", "interval": 1, "count": 2}, "runPolicy": {"overlap": "CancelRunning"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "web", "slow", job, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-done:
		if h.RepeatCount != 1 || !strings.Contains(h.Message, "canceled: "+scheduler.ErrSuperseded.Error()) || strings.Contains(h.Message, "timed out") {
			t.Errorf("first entry %+v; want occurrence 1, its message saying that the next occurrence came due, not that it timed out", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no history entry after 10s")
	}
}
