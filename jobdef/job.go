package jobdef

import (
	"slices"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/enum"
	"github.com/jobclock/scheduler/recurrence"
)

// Job is a job definition: the "properties" object of an Azure Scheduler
// job. Parse one with [ParseJob]; marshal it with encoding/json to get the
// canonical JSON back.
type Job struct {
	// StartTime is when the job first runs (no recurrence or no schedule)
	// or the earliest instant it may run (with a schedule). Nil means the
	// job's creation time.
	StartTime *time.Time `json:"startTime,omitempty"`
	// Action is what the job does. Required.
	Action action.Action `json:"action"`
	// Recurrence says how the job repeats. Nil means it runs once.
	Recurrence *recurrence.Recurrence `json:"recurrence,omitempty"`
	// State is Enabled, Disabled, Completed or Faulted. Empty means
	// Enabled.
	State JobState `json:"state,omitempty"`
	// StateReason says why a Disabled job is disabled: text of at most
	// MaxStateReason characters, given with state Disabled, or set by the
	// scheduler when RunPolicy.PauseAfterFaults pauses the job.
	StateReason string `json:"stateReason,omitempty"`
	// ResumeTime is when a Disabled job becomes Enabled again, by
	// whichever scheduler instance gets there first; what it missed
	// meanwhile is handled by its run policy. Only with state Disabled,
	// and in the future when the job is put.
	ResumeTime *time.Time `json:"resumeTime,omitempty"`
	// RunPolicy says what happens to occurrences that cannot run on
	// time. Nil means the collection's, else the Scheduler's defaults.
	RunPolicy *RunPolicy `json:"runPolicy,omitempty"`
	// Status is maintained by the scheduler; it is ignored on input.
	Status *JobStatus `json:"status,omitempty"`
}

// Clone returns a deep copy of j; nil for a nil j.
func (j *Job) Clone() *Job {
	if j == nil {
		return nil
	}
	c := *j
	if j.StartTime != nil {
		c.StartTime = new(*j.StartTime)
	}
	c.Action = *j.Action.Clone()
	c.Recurrence = j.Recurrence.Clone()
	if j.ResumeTime != nil {
		c.ResumeTime = new(*j.ResumeTime)
	}
	c.RunPolicy = j.RunPolicy.Clone()
	if j.Status != nil {
		c.Status = new(j.Status.Clone())
	}
	return &c
}

// JobState is the state of a job.
type JobState string

// The job states in their canonical spelling.
const (
	JobEnabled   JobState = "Enabled"
	JobDisabled  JobState = "Disabled"
	JobCompleted JobState = "Completed"
	JobFaulted   JobState = "Faulted"
)

var jobStates = []JobState{JobEnabled, JobDisabled, JobCompleted, JobFaulted}

// Valid reports whether s is a known state in canonical spelling.
func (s JobState) Valid() bool { return slices.Contains(jobStates, s) }

// Final reports whether s is Completed or Faulted, states that cannot be
// changed.
func (s JobState) Final() bool { return s == JobCompleted || s == JobFaulted }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (s *JobState) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, s, jobStates) }

// JobStatus is the read-only "status" object that the scheduler maintains.
type JobStatus struct {
	// LastExecutionTime is when the last attempt started; nil before the
	// first.
	LastExecutionTime *time.Time `json:"lastExecutionTime,omitempty"`
	// NextExecutionTime is when the next occurrence is due; nil when the
	// job has no further occurrence.
	NextExecutionTime *time.Time `json:"nextExecutionTime,omitempty"`
	// ExecutionCount counts attempts of the main action, retries included.
	ExecutionCount int `json:"executionCount"`
	// FailureCount counts failed attempts of the main action.
	FailureCount int `json:"failureCount"`
	// FaultedCount counts occurrences whose every attempt failed.
	FaultedCount int `json:"faultedCount"`
	// Health is OK, Late, Stale, Skipped or Failing, derived when the job
	// is read (see the scheduler's documentation); empty on input.
	Health JobHealth `json:"health,omitempty"`
}

// JobHealth is a job's health, an extension of the status.
type JobHealth string

// The job healths.
const (
	HealthOK      JobHealth = "OK"
	HealthLate    JobHealth = "Late"
	HealthStale   JobHealth = "Stale"
	HealthSkipped JobHealth = "Skipped"
	HealthFailing JobHealth = "Failing"
)

// Healths lists the job healths, from good to bad.
var Healths = []JobHealth{HealthOK, HealthSkipped, HealthStale, HealthLate, HealthFailing}

// Valid reports whether h is a known health in canonical spelling.
func (h JobHealth) Valid() bool { return slices.Contains(Healths, h) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (h *JobHealth) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, h, Healths) }

// Clone returns a deep copy of s.
func (s JobStatus) Clone() JobStatus {
	if s.LastExecutionTime != nil {
		s.LastExecutionTime = new(*s.LastExecutionTime)
	}
	if s.NextExecutionTime != nil {
		s.NextExecutionTime = new(*s.NextExecutionTime)
	}
	return s
}

// ParseTime parses an ISO 8601 date or date-time as job definitions write
// them: "2012-08-04T00:00Z" (seconds optional), "2012-08-04T00:00:00.123+02:00",
// offsets as "+02:00", "+0200" or "+02", and a bare date "2012-11-04"
// meaning midnight UTC. A date-time without an offset is UTC. The letters T
// and Z may be lower case. The ISO 8601 basic format ("20120804T000000Z")
// is not read: the error says so and gives the extended form, and names a
// date or time of day that does not exist ("February 2026 has no day 30").
func ParseTime(s string) (time.Time, error) { return codec.ParseTime(s) }
