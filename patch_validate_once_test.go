package scheduler_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// countingExecutor is an executor that counts the actions it validates.
type countingExecutor struct{ validated atomic.Int64 }

func (c *countingExecutor) Execute(context.Context, *action.Request) (*action.Result, error) {
	return nil, nil
}

func (c *countingExecutor) ValidateAction(*action.Action) error {
	c.validated.Add(1)
	return nil
}

// TestPatchKeepingSealedSecretsValidatesOnce: a patch that keeps the
// sealed secrets of a job checks the merged definition once, as one
// without secrets does, and the secrets it keeps still reach the store
// sealed.
func TestPatchKeepingSealedSecretsValidatesOnce(t *testing.T) {
	ctx := context.Background()
	exec := new(countingExecutor)
	reg := new(action.Registry)
	reg.Register(action.HTTPS, exec)
	st := durable{memory.New()}
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), Executors: reg, Secrets: newKeyring(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobJSON(ctx, "c", "a", []byte(`{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
		"authentication": {"type": "Basic", "username": "alice", "password": "pw-CANARY"}}},
		"recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"}`), nil); err != nil {
		t.Fatal(err)
	}
	exec.validated.Store(0)
	if _, err := s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	if n := exec.validated.Load(); n != 1 {
		t.Errorf("the patch validated the action %d times, want 1", n)
	}
	r, err := st.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	if au := r.Job.Action.Request.Authentication; r.Job.Action.Request.Method != "POST" || au.Password == "pw-CANARY" || au.Password == "" {
		t.Errorf("after the patch: method %s, password stored as %q; want POST and the password sealed", r.Job.Action.Request.Method, au.Password)
	}
}
