// Package jsonput lets the REST API put a job definition it has read as
// JSON with one validation instead of two.
//
// Scheduler.PutJob must validate the job it is handed, since its caller
// may have built or changed it after any earlier check. A job parsed from
// JSON on the way to the store was validated by the parse itself and never
// leaves the scheduler, so Put parses and puts in one step, at one
// instant, with the same rules and results as Scheduler.ParseJob followed
// by Scheduler.PutJob.
package jsonput

import "context"

// Put parses data as scheduler.Scheduler.ParseJob does and puts it as job
// name of collection, with PutJobOptions.IfMatch set to ifMatch. s is a
// *scheduler.Scheduler and the record it returns a *scheduler.JobRecord.
// When ParseJob refuses data, the error is a *ParseError. Package
// scheduler sets Put when it is initialised.
var Put func(ctx context.Context, s any, collection, name string, data []byte, ifMatch string) (record any, err error)

// ParseError is Put's error when the definition itself is invalid: Err is
// what ParseJob returned.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }

func (e *ParseError) Unwrap() error { return e.Err }
