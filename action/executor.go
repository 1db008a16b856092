package action

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Executor carries out one attempt of an action. It returns a nil error when
// the attempt succeeded. A non-nil error is a failed attempt; the Result may
// still be non-nil to carry the response that explains the failure.
//
// Execute must honour ctx: the scheduler cancels it when the attempt's
// timeout passes or the scheduler stops. Executors are called from many
// goroutines at once. A panic in Execute is recovered by the scheduler and
// recorded as a failed attempt.
type Executor interface {
	Execute(ctx context.Context, req *Request) (*Result, error)
}

// ExecutorFunc adapts a function to the Executor interface.
type ExecutorFunc func(ctx context.Context, req *Request) (*Result, error)

// Execute calls f(ctx, req).
func (f ExecutorFunc) Execute(ctx context.Context, req *Request) (*Result, error) { return f(ctx, req) }

// Request is one attempt of an action, with the scheduler's metadata about
// it. Executors put the metadata on the wire (HTTP headers, message
// properties) so that receivers can identify and de-duplicate attempts.
//
// The attempt's identifiers (JobID, ExecutionTag, ClientRequestID) are
// methods that ask IDs: the scheduler formats their strings when they are
// read (each read formats them again: read each once), and when it keeps
// no history and nothing observes it, it makes the execution tag only
// then. An executor that needs an identifier after Execute returns copies
// the string; it must not keep the Request or its IDs, which hold the
// attempt's opened action. Executors must not modify a Request (a
// middleware that wants other values makes a copy): the identifiers are
// made from its fields.
type Request struct {
	// Action is the action to carry out (the job's action or its
	// errorAction). Executors must not modify it.
	Action *Action
	// CollectionID is the job's collection (see JobID).
	CollectionID string
	// ExpectedTime is the instant the occurrence was scheduled for.
	ExpectedTime time.Time
	// Occurrence is the occurrence number (history's repeatCount, from 1).
	Occurrence int
	// Retry is the retry number within the occurrence: 0 for the first
	// attempt (history's retryCount).
	Retry int
	// ErrorAction is true when Action is the job's errorAction.
	ErrorAction bool
	// IDs gives the attempt's identifiers (see RequestIDs); the scheduler
	// sets it, and a request built by hand (in a test, say) can set a
	// StaticIDs. nil: every identifier is empty.
	IDs RequestIDs
}

// RequestIDs gives the identifiers of an attempt. Each method returns the
// same value every time it is called, from any goroutine, during Execute.
type RequestIDs interface {
	// JobID identifies the job: "collection/name" as the scheduler names
	// it (see the root package).
	JobID() string
	// ExecutionTag is the same for every attempt of one occurrence, also
	// across scheduler instances, so receivers can drop duplicates.
	ExecutionTag() string
	// ClientRequestID is new for every attempt.
	ClientRequestID() string
}

// StaticIDs is a RequestIDs of fixed values, for requests built by hand.
type StaticIDs struct {
	Job, Tag, ClientRequest string
}

// JobID returns ids.Job.
func (ids StaticIDs) JobID() string { return ids.Job }

// ExecutionTag returns ids.Tag.
func (ids StaticIDs) ExecutionTag() string { return ids.Tag }

// ClientRequestID returns ids.ClientRequest.
func (ids StaticIDs) ClientRequestID() string { return ids.ClientRequest }

// JobID returns the job's ID, "collection/name" (see RequestIDs); empty
// when r.IDs is nil.
func (r *Request) JobID() string {
	if r.IDs == nil {
		return ""
	}
	return r.IDs.JobID()
}

// ExecutionTag returns the occurrence's execution tag, the same for every
// attempt of it (see RequestIDs); empty when r.IDs is nil.
func (r *Request) ExecutionTag() string {
	if r.IDs == nil {
		return ""
	}
	return r.IDs.ExecutionTag()
}

// ClientRequestID returns the attempt's request ID, new for every attempt
// (see RequestIDs); empty when r.IDs is nil.
func (r *Request) ClientRequestID() string {
	if r.IDs == nil {
		return ""
	}
	return r.IDs.ClientRequestID()
}

// Result describes the outcome of an attempt for the job's history.
type Result struct {
	// Message is a short description of the outcome for people, such as
	// the response status and the start of the response body. The
	// scheduler truncates it for history.
	Message string
}

// executorPackages names the package whose Register function adds the
// executor of each built-in type that a Scheduler does not execute itself.
var executorPackages = map[Type]string{
	StorageQueue:    "storagequeue",
	ServiceBusQueue: "servicebus",
	ServiceBusTopic: "servicebus",
}

// NoExecutor says that actions of type t have no executor in a
// Scheduler, and how to add one; it completes a sentence whose subject is
// the action or its type ("action type X has no executor ...").
func NoExecutor(t Type) string {
	if pkg, ok := executorPackages[t]; ok {
		return fmt.Sprintf(`has no executor in this Scheduler: add one to the registry given as Config.Executors with %[1]s.Register(reg, nil) (import "github.com/jobclock/scheduler/action/%[1]s"), or azure.Register(reg, nil) (import "github.com/jobclock/scheduler/action/azure") for every Azure action type`, pkg)
	}
	return "has no executor in this Scheduler: add one to the registry given as Config.Executors"
}

// Registry maps action types to executors. The zero value is an empty
// registry ready for use; it is safe for concurrent use.
//
// Registrations are rare and lookups happen once per attempt, so the map
// is copied on write and published whole: a lookup reads it without a
// lock (and without a counter that every worker would write).
type Registry struct {
	mu sync.Mutex // serialises writers
	m  atomic.Pointer[map[Type]Executor]
}

// Register makes e the executor for actions of type t, replacing any
// executor registered for t before. It panics if e is nil or t is empty.
func (r *Registry) Register(t Type, e Executor) {
	if e == nil || t == "" {
		panic(fmt.Sprintf("action: Register(%q) with nil executor or empty type", t))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.executors()
	m := make(map[Type]Executor, len(old)+1)
	maps.Copy(m, old)
	m[t] = e
	r.m.Store(&m)
}

// executors returns the published map, nil while nothing is registered.
// Callers must not change it.
func (r *Registry) executors() map[Type]Executor {
	if p := r.m.Load(); p != nil {
		return *p
	}
	return nil
}

// Lookup returns the executor registered for t.
func (r *Registry) Lookup(t Type) (Executor, bool) {
	e, ok := r.executors()[t]
	return e, ok
}

// Types returns the registered types in no particular order.
func (r *Registry) Types() []Type {
	m := r.executors()
	return slices.AppendSeq(make([]Type, 0, len(m)), maps.Keys(m))
}

// Close closes every registered executor that has a Close method, each
// once however many types it serves: Close(context.Context) error (as the
// Service Bus executor has), Close() error (the storage queue executor) or
// Close() (the HTTP executor). It returns their errors joined. Call it
// after every Scheduler using r has stopped; a Scheduler never closes the
// executors of the registry it was given. The executors stay registered.
func (r *Registry) Close(ctx context.Context) error {
	var closers []any
	for _, e := range r.executors() {
		switch e.(type) {
		case interface{ Close(context.Context) error }, interface{ Close() error }, interface{ Close() }:
		default:
			continue
		}
		if !containsPointer(closers, e) {
			closers = append(closers, e)
		}
	}
	var errs []error
	for _, c := range closers {
		switch c := c.(type) {
		case interface{ Close(context.Context) error }:
			errs = append(errs, c.Close(ctx))
		case interface{ Close() error }:
			errs = append(errs, c.Close())
		case interface{ Close() }:
			c.Close()
		}
	}
	return errors.Join(errs...)
}

// containsPointer reports whether list holds the pointer v;
// executors that are not pointers are never found, so they are closed once
// per registration.
func containsPointer(list []any, v any) bool {
	if reflect.ValueOf(v).Kind() != reflect.Pointer {
		return false
	}
	for _, x := range list {
		if reflect.TypeOf(x) == reflect.TypeOf(v) && x == v {
			return true
		}
	}
	return false
}
