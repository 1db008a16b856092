package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// FieldError is a problem with one field of an action, found when a job is
// put or, by an executor, before anything was sent. Path is the JSON path
// within the action ("custom.to", "custom.items[2]"), Value the offending
// value as JSON text (empty when the field is missing, is a secret or the
// value does not matter), Reason what is wrong ("is not a string"). The
// executors of this module report their problems with this type too.
type FieldError struct {
	Path   string
	Value  string
	Reason string
}

// Error returns "PATH: VALUE REASON", or "PATH: REASON" when Value is
// empty.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Path + ": " + e.Reason
	}
	return e.Path + ": " + e.Value + " " + e.Reason
}

// Validator is an optional capability of an [Executor]: checking an action
// when a job is put, so that a payload the executor cannot carry out is
// refused then, at its path, rather than failing every attempt later. The
// scheduler finds it by type assertion and calls it for each action (and
// error action) of a job that PutJob, PatchJob or the Scheduler's ParseJob
// checks, after the action's type and payload members have passed the
// general rules.
type Validator interface {
	// ValidateAction reports every problem with a as joined [*FieldError]
	// values whose paths are relative to the action; nil when a is fine.
	// It must not modify a. Other errors are reported at the action
	// itself. It may be called from several goroutines at once: by
	// concurrent puts, and for the jobs of one large Scheduler.PutJobs
	// batch, which are checked in parallel.
	ValidateAction(a *Action) error
}

// Handler is an [Executor] for one action type whose "custom" payload is a
// Go value of type T, and a [Validator] that decodes that payload strictly
// when a job is put. Make one with [Handle] or [HandleResult]; it is safe
// for concurrent use.
//
// When a job is put, the payload must decode into T as encoding/json
// decodes it (member names matched without regard to case, the json tags
// of T's fields, custom UnmarshalJSON and UnmarshalText methods) with no
// member that T lacks and no member given twice; every problem is reported
// at its path, such as action.custom.items[2].sku: "x" is not an integer.
// A T (or *T) with a method Validate() error has it called then as well:
// its error is reported at action.custom, or, when it joins [*FieldError]
// values, at their paths under action.custom. An absent payload decodes
// to the zero T.
//
// At run time each attempt decodes the job's payload into a new T and
// calls the function with it. That decoding ignores members T does not
// have, so a job stored before a field was removed from T still runs.
type Handler[T any] struct {
	typ Type
	fn  func(context.Context, *Request, T) (*Result, error)
}

var (
	_ Executor  = (*Handler[struct{}])(nil)
	_ Validator = (*Handler[struct{}])(nil)
)

// Handle returns a [Handler] for action type t that calls fn with the
// payload of each attempt, and registers it in reg under t (replacing any
// executor registered for t). A nil error from fn is a successful attempt;
// its history message is empty. reg may be nil: the handler is then only
// returned. It panics if fn is nil or t is empty.
func Handle[T any](reg *Registry, t Type, fn func(ctx context.Context, req *Request, payload T) error) *Handler[T] {
	if fn == nil {
		panic(fmt.Sprintf("action: Handle(%q) with a nil function", t))
	}
	return HandleResult(reg, t, func(ctx context.Context, req *Request, payload T) (*Result, error) {
		return nil, fn(ctx, req, payload)
	})
}

// HandleResult is like [Handle] for a function that also describes the
// outcome of each attempt for the job's history.
func HandleResult[T any](reg *Registry, t Type, fn func(ctx context.Context, req *Request, payload T) (*Result, error)) *Handler[T] {
	if fn == nil || t == "" {
		panic(fmt.Sprintf("action: HandleResult(%q) with a nil function or an empty type", t))
	}
	h := &Handler[T]{typ: t, fn: fn}
	if reg != nil {
		reg.Register(t, h)
	}
	return h
}

// Type returns the action type the handler was made for.
func (h *Handler[T]) Type() Type { return h.typ }

// Action returns an action of the handler's type with payload encoded
// by encoding/json into its Custom member. It panics if encoding/json
// cannot encode payload (a func or channel member, a NaN, a MarshalJSON
// method that fails): such a T is a mistake in the program, not in a
// definition.
func (h *Handler[T]) Action(payload T) Action {
	data, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("action: %s payload: %v", h.typ, err))
	}
	return Action{Type: h.typ, Custom: data}
}

// Execute decodes the payload of req.Action into a T and calls the
// handler's function with it. A payload that does not decode fails the
// attempt without calling the function.
func (h *Handler[T]) Execute(ctx context.Context, req *Request) (*Result, error) {
	var payload T
	if err := h.decode(req.Action, &payload); err != nil {
		err = fmt.Errorf("action %s: custom payload: %w", h.typ, err)
		return &Result{Message: err.Error()}, err
	}
	return h.fn(ctx, req, payload)
}

// decode fills *p from a's Custom, leniently.
func (h *Handler[T]) decode(a *Action, p *T) error {
	if a == nil || len(a.Custom) == 0 {
		return nil
	}
	return json.Unmarshal(a.Custom, p)
}

// ValidateAction decodes a's payload strictly into a T and runs its
// Validate method, if any; see [Handler].
func (h *Handler[T]) ValidateAction(a *Action) error {
	data := []byte(a.Custom)
	if len(bytes.TrimSpace(data)) == 0 || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		data = nil
	}
	var payload T
	if data != nil {
		if errs := checkJSON("custom", data, reflect.TypeFor[T]()); len(errs) > 0 {
			return joinFieldErrors(errs)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&payload); err != nil {
			return &FieldError{Path: "custom", Reason: "does not decode: " + err.Error()}
		}
	}
	return validatePayload(&payload)
}

// validatePayload calls the Validate method of *p or p, if there is one.
func validatePayload[T any](p *T) error {
	var err error
	switch v := any(p).(type) {
	case interface{ Validate() error }:
		err = v.Validate()
	default:
		if v, ok := any(*p).(interface{ Validate() error }); ok {
			err = v.Validate()
		}
	}
	if err == nil {
		return nil
	}
	var out []*FieldError
	for _, e := range leaves(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			out = append(out, &FieldError{Path: joinPath("custom", fe.Path), Value: fe.Value, Reason: fe.Reason})
		} else {
			out = append(out, &FieldError{Path: "custom", Reason: e.Error()})
		}
	}
	return joinFieldErrors(out)
}

// leaves lists the errors joined in err.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

func joinFieldErrors(errs []*FieldError) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// joinPath appends rel to base: "base.rel", "base[0]", or base when rel is
// empty.
func joinPath(base, rel string) string {
	switch {
	case rel == "":
		return base
	case rel[0] == '[':
		return base + rel
	}
	return base + "." + rel
}
