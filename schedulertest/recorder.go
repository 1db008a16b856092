package schedulertest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/jobclock/scheduler/action"
)

// Metadata is the execution metadata of an attempt: what the scheduler
// sends as the x-ms-scheduler-* and x-ms-client-request-id headers of an
// HTTP request (or the properties of a queue message).
type Metadata struct {
	// JobID is "collection/name"; CollectionID the collection.
	JobID, CollectionID string
	// ExpectedTime is the instant the occurrence was scheduled for.
	ExpectedTime time.Time
	// ExecutionTag is the same for every attempt of an occurrence.
	ExecutionTag string
	// ClientRequestID is new for every attempt.
	ClientRequestID string
}

// Attempt is one call of a [Recorder].
type Attempt struct {
	Metadata
	// Type is the action's type; Custom its payload.
	Type   action.Type
	Custom json.RawMessage
	// Occurrence is the occurrence number, from 1; Retry the retry
	// number, 0 for the first attempt; ErrorAction whether the action
	// is the job's error action.
	Occurrence, Retry int
	ErrorAction       bool
	// At is when the attempt started.
	At time.Time
}

// Recorder is an [action.Executor] that records every attempt, for tests
// that register it in place of a real executor. It is safe for concurrent
// use.
type Recorder struct {
	fn func(ctx context.Context, req *action.Request) (*action.Result, error)

	mu       sync.Mutex
	attempts []Attempt
	changed  signal
}

var _ action.Executor = (*Recorder)(nil)

// NewRecorder returns a Recorder that answers each attempt with fn, after
// recording it. A nil fn makes every attempt succeed with the message
// "recorded".
func NewRecorder(fn func(ctx context.Context, req *action.Request) (*action.Result, error)) *Recorder {
	return &Recorder{fn: fn}
}

// Execute records the attempt, then answers it.
func (r *Recorder) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	a := Attempt{
		Metadata: Metadata{JobID: req.JobID(), CollectionID: req.CollectionID, ExpectedTime: req.ExpectedTime,
			ExecutionTag: req.ExecutionTag(), ClientRequestID: req.ClientRequestID()},
		Occurrence: req.Occurrence, Retry: req.Retry, ErrorAction: req.ErrorAction, At: time.Now(),
	}
	if req.Action != nil {
		a.Type = req.Action.Type
		a.Custom = slices.Clone(req.Action.Custom)
	}
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.changed.fire()
	r.mu.Unlock()
	if r.fn == nil {
		return &action.Result{Message: "recorded"}, nil
	}
	return r.fn(ctx, req)
}

// Attempts returns the attempts recorded so far, in the order they
// started.
func (r *Recorder) Attempts() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts)
}

// Wait waits until at least n attempts are recorded and returns them. When
// ctx ends first, it returns those recorded so far and ctx's error.
func (r *Recorder) Wait(ctx context.Context, n int) ([]Attempt, error) {
	for {
		r.mu.Lock()
		if len(r.attempts) >= n {
			defer r.mu.Unlock()
			return slices.Clone(r.attempts), nil
		}
		ch := r.changed.wait()
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Attempts(), ctx.Err()
		}
	}
}

// signal wakes the goroutines waiting for a change. Its channel is made by
// the first waiter, so that inside a testing/synctest bubble it belongs to
// the waiter's bubble. The caller holds the lock that guards it.
type signal struct{ ch chan struct{} }

// wait returns a channel that is closed at the next fire.
func (s *signal) wait() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// fire wakes the waiters.
func (s *signal) fire() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
