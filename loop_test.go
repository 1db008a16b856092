package scheduler_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestRunDue drives the step function directly, without the loop.
func TestRunDue(t *testing.T) {
	ctx := context.Background()
	ran := make(chan action.Request, 10)
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ran <- *req
		return nil, nil
	}))
	st := memory.New()
	s, err := scheduler.New(st, &scheduler.Config{PollInterval: time.Minute, Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if got := s.RunDue(ctx, now); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("RunDue with no jobs = now%+v, want now+PollInterval", got.Sub(now))
	}
	start := now.Add(20 * time.Second).Truncate(time.Second)
	j, err := scheduler.ParseJob([]byte(jobJSON(start, "")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "j", j, nil); err != nil {
		t.Fatal(err)
	}
	// The loop claims the job ClaimAhead before it is due.
	if got, want := s.RunDue(ctx, now), start.Add(-scheduler.DefaultClaimAhead); !got.Equal(want) {
		t.Errorf("RunDue with a job due at %v = %v, want %v", start, got, want)
	}
	if len(ran) != 0 {
		t.Fatalf("a job ran before it was due")
	}
	later := start.Add(time.Second)
	s.RunDue(ctx, later)
	req := <-ran
	if req.JobID() != "c/j" || !req.ExpectedTime.Equal(start) {
		t.Errorf("request = %+v, want c/j expected at %v", req, start)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetJob(ctx, "c", "j")
	if err != nil || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
		t.Errorf("job after its attempt = %+v, %v; want Completed with 1 execution", r, err)
	}
}
