package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestTxNeedsATransactionalStore: the memory store cannot write in a
// host's transaction, and says which stores can.
func TestTxNeedsATransactionalStore(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	job := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:9/", Method: "GET"}}}
	_, err = s.PutJobTx(ctx, struct{}{}, "c", "j", job, nil)
	if err == nil || !strings.Contains(err.Error(), "store/sqlite and store/postgres can") {
		t.Errorf("PutJobTx over the memory store = %v", err)
	}
	if err := s.DeleteJobTx(ctx, struct{}{}, "c", "j", nil); err == nil {
		t.Error("DeleteJobTx over the memory store succeeded")
	}
	if _, err := s.PatchJobTx(ctx, struct{}{}, "c", "j", []byte(`{}`), nil); err == nil {
		t.Error("PatchJobTx over the memory store succeeded")
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobTx(ctx, nil, "c", "j", job, nil); !errors.Is(err, scheduler.ErrStopped) {
		t.Errorf("PutJobTx after Stop = %v, want ErrStopped", err)
	}
}
