package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestNotifyWakesOtherInstance: a job written through one process's store
// is run by a scheduler in another, long before that scheduler's next
// poll, because the store's notifications wake it.
func TestNotifyWakesOtherInstance(t *testing.T) {
	schema := newSchema(t)
	ctx := context.Background()
	ran := make(chan string, 1)
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		select {
		case ran <- req.JobID():
		default:
		}
		return &action.Result{Message: "ok"}, nil
	}))
	cfg := &scheduler.Config{
		Logger:       slog.New(slog.DiscardHandler),
		Executors:    reg,
		PollInterval: time.Hour,
		InstanceID:   "runner",
	}
	runner, err := scheduler.New(open(t, schema), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer runner.Stop(context.Background())

	// The writer is another scheduler on its own store (its own pool and
	// connections), never started: only its API is used.
	writer, err := scheduler.New(open(t, schema), &scheduler.Config{Logger: slog.New(slog.DiscardHandler), InstanceID: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the runner's loop go to sleep for its poll interval
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/x", "method": "GET"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutJob(ctx, "c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != "c/j" {
			t.Errorf("ran job %q, want c/j", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not run a job written by another process within 10 s (its poll interval is 1 h): notifications do not wake it")
	}
}
