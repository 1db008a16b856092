package scheduler

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error returned by the [Scheduler] and by a [Store]
// that has one of these causes matches it with errors.Is; the message around
// it names the collection, job or option concerned.
var (
	// ErrNotFound means the collection or job does not exist.
	ErrNotFound = errors.New("scheduler: not found")
	// ErrConflict means a write lost a race: the stored record changed
	// since it was read (its Version differs), or a record to be created
	// already exists. The Scheduler retries such conflicts internally;
	// a Store returns it to the Scheduler.
	ErrConflict = errors.New("scheduler: conflict")
	// ErrPreconditionFailed means the IfMatch option of a write did not
	// match the ETag of the stored collection or job (HTTP 412). It also
	// matches ErrConflict, so callers that only care about "somebody else
	// wrote first" may test for either.
	ErrPreconditionFailed = fmt.Errorf("scheduler: precondition failed (ETag mismatch): %w", ErrConflict)
	// ErrQuotaExceeded means a write would exceed the collection's quota:
	// its maximum job count or its maximum recurrence (HTTP 409).
	ErrQuotaExceeded = errors.New("scheduler: quota exceeded")
	// ErrFinalState means the job is Completed or Faulted, states that
	// cannot be changed (only deleted, or replaced by PutJob).
	ErrFinalState = errors.New("scheduler: job is in a final state")
	// ErrCollectionNotEnabled means the operation needs an Enabled
	// collection (RunJob on a job of a Disabled or Suspended collection).
	ErrCollectionNotEnabled = errors.New("scheduler: job collection is not enabled")
	// ErrStopped is returned once Stop has been called by every method
	// of a Scheduler that writes the store, by Start, and by a second
	// Stop; the methods that only read the store (GetJob, ListJobs,
	// ListHistory, GetCollection, ListCollections, JobCounts, DueCount,
	// HealthCounts, HistoryCounts, RecentHistory) answer while Stop
	// waits for the attempts in flight, and return it once Stop has
	// returned (ParseJob, ParseOptions and InFlight work as before). A
	// second Start before Stop returns another error: the Scheduler is
	// already started.
	ErrStopped = errors.New("scheduler: stopped")
	// ErrLeaseLost is returned by a Store when the caller no longer holds
	// the lease on a job it claimed: another owner claimed it after the
	// lease expired. The Scheduler drops the outcome of such an attempt.
	ErrLeaseLost = errors.New("scheduler: lease lost")
	// ErrCalendarInUse means an exclusion calendar cannot be deleted
	// while jobs of its collection name it (HTTP 409); the error is a
	// [*CalendarInUseError] that names them.
	ErrCalendarInUse = errors.New("scheduler: calendar in use")
	// ErrSuperseded is the cause (context.Cause) of the cancellation of
	// an attempt's context when the job's next occurrence comes due under
	// runPolicy.overlap CancelRunning: the context's Err is then
	// context.Canceled, as at Stop, not context.DeadlineExceeded, so that
	// an executor tells it from its own timeout.
	ErrSuperseded = errors.New("scheduler: the job's next occurrence came due (runPolicy.overlap CancelRunning)")
)

// NotFoundError names the job collection, or the job, that does not
// exist. It matches [ErrNotFound]. The stores of this module return it;
// a Store of a user's need only return an error that matches ErrNotFound.
type NotFoundError struct {
	// Collection is the job collection: the missing one when Job is
	// empty, else the missing job's.
	Collection string
	// Job is the missing job, or empty when the collection is missing.
	Job string
	// Calendar is the missing exclusion calendar, or empty when the
	// collection or a job is missing.
	Calendar string
}

// Error returns `job collection "c" not found` or `job "j" not found in
// collection "c"`.
func (e *NotFoundError) Error() string {
	if e.Calendar != "" {
		return fmt.Sprintf("calendar %q not found in collection %q", e.Calendar, e.Collection)
	}
	if e.Job == "" {
		return fmt.Sprintf("job collection %q not found", e.Collection)
	}
	return fmt.Sprintf("job %q not found in collection %q", e.Job, e.Collection)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// RecreatedError says that a claimed job was deleted and created again
// under its name since the claim: the claim's job is gone, and the job of
// that name now stored is another (see "Stores" in the package
// documentation). It matches [ErrNotFound], and errors.As finds the
// [*NotFoundError] it holds. The stores of this module return it from
// Record, RecordBatch and GiveBack (see [NewRecreatedErrorOf]); a Store of
// a user's need only return an error that matches ErrNotFound.
type RecreatedError struct {
	// NotFoundError names the job.
	NotFoundError
	// Created is when the job now stored was created; Claimed is the
	// claimed job's Created.
	Created, Claimed time.Time
	// Incarnation is the [JobRecord.Incarnation] of the job now stored,
	// zero when not known; ClaimedIncarnation is the claimed job's.
	Incarnation, ClaimedIncarnation int64
}

// Error returns `job "j" in collection "c" was deleted and created again
// (at ...; the claimed job was created at ...)`, and when the two jobs
// were created at one instant, `(at ..., incarnation 7; the claimed job
// was created at the same instant, incarnation 3)`.
func (e *RecreatedError) Error() string {
	if e.Created.Equal(e.Claimed) {
		return fmt.Sprintf("job %q in collection %q was deleted and created again (at %v, incarnation %d; the claimed job was created at the same instant, incarnation %d)",
			e.Job, e.Collection, e.Created, e.Incarnation, e.ClaimedIncarnation)
	}
	return fmt.Sprintf("job %q in collection %q was deleted and created again (at %v; the claimed job was created at %v)",
		e.Job, e.Collection, e.Created, e.Claimed)
}

// Unwrap returns the NotFoundError naming the job.
func (e *RecreatedError) Unwrap() error { return &e.NotFoundError }

// NewRecreatedError returns the RecreatedError of a write about claimed,
// a claimed job, whose name now holds another job, created at created,
// of an incarnation not known (see [NewRecreatedErrorOf]).
func NewRecreatedError(claimed *JobRecord, created time.Time) *RecreatedError {
	return NewRecreatedErrorOf(claimed, created, 0)
}

// NewRecreatedErrorOf returns the RecreatedError of a write about
// claimed, a claimed job, whose name now holds another job, created at
// created, of the given incarnation.
func NewRecreatedErrorOf(claimed *JobRecord, created time.Time, incarnation int64) *RecreatedError {
	return &RecreatedError{NotFoundError: NotFoundError{Collection: claimed.Collection, Job: claimed.Name},
		Created: created, Claimed: claimed.Created, Incarnation: incarnation, ClaimedIncarnation: claimed.Incarnation}
}

// QuotaError describes a quota violation. It matches [ErrQuotaExceeded].
type QuotaError struct {
	// Collection is the job collection whose quota is exceeded.
	Collection string
	// Quota is "maxJobCount" or "maxRecurrence".
	Quota string
	// Limit is the quota's value as text ("5", "1 Hour").
	Limit string
	// Reason says what would exceed it.
	Reason string
}

// Error returns a message naming the collection, quota and limit.
func (e *QuotaError) Error() string {
	return fmt.Sprintf("scheduler: job collection %q: quota %s (%s) exceeded: %s", e.Collection, e.Quota, e.Limit, e.Reason)
}

// Is reports whether target is ErrQuotaExceeded.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }
