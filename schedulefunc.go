package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// ScheduleFunc is [Scheduler.Schedule] for a Go function: it registers fn
// under the job name of [DefaultCollection] in this Scheduler, and makes
// sure that the job runs it on the recurrence when:
//
//	s.ScheduleFunc(ctx, "cleanup", recurrence.Every(5, recurrence.Minute), func(ctx context.Context) error {
//		return purge(ctx, db) // a closure: it may use what the program holds
//	})
//
// It needs nothing in Config: no registry, no action type, no payload. As
// Schedule, it is meant to be called each time the program starts (before
// or after Start): the job is durable, kept in the store with the action
// {"type": "Func"}, and keeps its place in its recurrence, its counters and
// its history across restarts; only the function lives in the process. A
// nil when runs fn once, when the job is first created. ctx bounds the
// call, not the runs: each attempt gets a context of its own that ends at
// the action's timeout or when the Scheduler stops.
//
// An attempt of a Func job in a process where no function is registered
// under its name (a program that no longer calls ScheduleFunc for it, or
// another instance over the same store) does not run anything: it fails
// as any failed attempt does, its history entry says that no function is
// registered in this process for the job, and the Scheduler logs a
// warning naming the job. The failure is retried under the job's retry
// policy (a retry may run on an instance that has the function); when the
// last retry fails too, the occurrence is faulted: a job without a
// recurrence ends Faulted, and a recurring one counts the fault, runs its
// errorAction and goes on to its next occurrence, unless its run policy's
// pauseAfterFaults disables it. A non-nil error from fn fails the attempt
// with its text as the history message; a panic is recovered into a
// failed attempt.
//
// For a function that takes data (several jobs of one function, each with
// its own payload, or jobs put over REST), register a typed handler with
// [action.Handle] and use Schedule or PutJob.
func (s *Scheduler) ScheduleFunc(ctx context.Context, name string, when *recurrence.Recurrence, fn func(ctx context.Context) error) (*JobRecord, error) {
	if fn == nil {
		return nil, errors.New("schedule func: fn is nil")
	}
	if err := checkJobKey(DefaultCollection, name); err != nil {
		return nil, err
	}
	s.funcs.register(DefaultCollection+"/"+name, fn)
	return s.Schedule(ctx, name, when, action.Action{Type: action.Func})
}

// funcs is the executor of action.Func: the functions of this Scheduler's
// Func jobs, by job ID ("collection/name").
type funcs struct {
	log *slog.Logger
	mu  sync.RWMutex
	fns map[string]func(context.Context) error
}

func (f *funcs) register(id string, fn func(context.Context) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fns == nil {
		f.fns = make(map[string]func(context.Context) error)
	}
	f.fns[id] = fn
}

// Execute implements [action.Executor]: it calls the function registered
// under req's job, or fails without running anything when there is none.
func (f *funcs) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	f.mu.RLock()
	fn := f.fns[req.JobID()]
	f.mu.RUnlock()
	if fn == nil {
		name := strings.TrimPrefix(req.JobID(), req.CollectionID+"/")
		f.log.Warn("no function is registered in this process for the job: the attempt fails without running (ScheduleFunc registers it)",
			"collection", req.CollectionID, "job", name, "tag", req.ExecutionTag())
		return nil, fmt.Errorf("no function is registered in this process for job %q of collection %q (ScheduleFunc registers it when the program starts): nothing was run", name, req.CollectionID)
	}
	return nil, fn(ctx)
}
