package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestHostTypesRegisteredLater: the Scheduler keeps the host's action
// types it read last; a job of a type registered since is still accepted,
// in the spelling it was registered with, and an unknown type's error
// lists the types registered since.
func TestHostTypesRegisteredLater(t *testing.T) {
	ctx := context.Background()
	s, reg := noopScheduler(t, "First")
	job := func(typ action.Type) *scheduler.Job {
		return &scheduler.Job{Action: action.Action{Type: typ, Custom: json.RawMessage(`{}`)}}
	}
	if _, err := s.PutJob(ctx, "c", "first", job("first"), nil); err != nil {
		t.Fatalf("PutJob of a registered type: %v", err)
	}

	reg.Register("SecondType", noop)
	r, err := s.PutJob(ctx, "c", "second", job("secondTYPE"), nil)
	if err != nil {
		t.Fatalf("PutJob of a type registered after the first put: %v", err)
	}
	if r.Definition().Action.Type != "SecondType" {
		t.Errorf("stored type = %q, want the registered spelling SecondType", r.Definition().Action.Type)
	}

	reg.Register("Third", noop)
	_, err = s.PutJob(ctx, "c", "unknown", job(""), nil)
	if err == nil || !strings.Contains(err.Error(), "Third") {
		t.Errorf("PutJob without a type = %v, want an error listing Third, registered since the last put", err)
	}
	if opts := s.ParseOptions(); !strings.Contains(fmt.Sprint(opts.ActionTypes), "Third") {
		t.Errorf("ParseOptions().ActionTypes = %v, want Third among them", opts.ActionTypes)
	}
}

// TestHostTypesConcurrent puts jobs of types registered while other
// goroutines put jobs (run it with -race): every put of a type registered
// before it started succeeds.
func TestHostTypesConcurrent(t *testing.T) {
	ctx := context.Background()
	s, reg := noopScheduler(t)
	var wg sync.WaitGroup
	for g := range 4 { // 40 jobs: within the default quota of 50
		wg.Go(func() {
			for i := range 10 {
				typ := action.Type(fmt.Sprintf("T%d_%d", g, i))
				reg.Register(typ, noop)
				def := &scheduler.Job{Action: action.Action{Type: typ, Custom: json.RawMessage(`{}`)}}
				if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d-%d", g, i), def, nil); err != nil {
					t.Errorf("PutJob of %s, registered before: %v", typ, err)
				}
			}
		})
	}
	wg.Wait()
}

// noop is an executor that does nothing and succeeds.
var noop = action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return &action.Result{}, nil })

// noopScheduler returns a Scheduler over a memory store with collection
// "c", and its registry, where each of types runs noop.
func noopScheduler(t *testing.T, types ...action.Type) (*scheduler.Scheduler, *action.Registry) {
	t.Helper()
	reg := &action.Registry{}
	for _, typ := range types {
		reg.Register(typ, noop)
	}
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s, reg
}
