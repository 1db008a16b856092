// Package jsonput lets the REST API put a job definition it has read as
// JSON with one validation instead of two.
//
// Scheduler.PutJob must validate the job it is handed, since its caller
// may have built or changed it after any earlier check. A job parsed from
// JSON on the way to the store was validated by the parse itself and never
// leaves the scheduler, so Put parses and puts in one step, at one
// instant, with the same rules and results as Scheduler.ParseJob followed
// by Scheduler.PutJob. It does so when PutJob is called with a nil job and
// the options Options makes: a program that never calls PutJob links
// neither the parser nor the put path (a function the scheduler's init
// referred to would be linked into every program that imports it).
package jsonput

// Options returns a *scheduler.PutJobOptions with IfMatch set to ifMatch
// with which Scheduler.PutJob, given a nil job, parses data as
// Scheduler.ParseJob does and puts the result. When ParseJob refuses data,
// PutJob's error is a *ParseError. Package scheduler sets Options when it
// is initialised.
var Options func(data []byte, ifMatch string) any

// ParseError is Put's error when the definition itself is invalid: Err is
// what ParseJob returned.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }

func (e *ParseError) Unwrap() error { return e.Err }
