package scheduler

import (
	"time"

	"github.com/jobclock/scheduler/jobdef"
)

// The job definition language (jobs, collections, their parsing and
// rules) is package jobdef. The names below let a program that embeds
// the scheduler write scheduler.Job, scheduler.ParseJob and so on; each
// is the jobdef name of the same spelling, documented there.

// Definition types.
type (
	Job                  = jobdef.Job
	JobState             = jobdef.JobState
	JobStatus            = jobdef.JobStatus
	Timing               = jobdef.Timing
	JobCollection        = jobdef.JobCollection
	CollectionProperties = jobdef.CollectionProperties
	CollectionState      = jobdef.CollectionState
	SKU                  = jobdef.SKU
	SKUName              = jobdef.SKUName
	Quota                = jobdef.Quota
	MaxRecurrence        = jobdef.MaxRecurrence
	QuotaCheck           = jobdef.QuotaCheck
	ParseOptions         = jobdef.ParseOptions
	ValidationError      = jobdef.ValidationError
	SyntaxError          = jobdef.SyntaxError
	RunPolicy            = jobdef.RunPolicy
	Limit                = jobdef.Limit
	LimitKey             = jobdef.LimitKey
	MissedPolicy         = jobdef.MissedPolicy
	OverlapPolicy        = jobdef.OverlapPolicy
	JobHealth            = jobdef.JobHealth
	Calendar             = jobdef.Calendar
	CalendarProperties   = jobdef.CalendarProperties
	CalendarRange        = jobdef.CalendarRange
	CalendarEntry        = jobdef.CalendarEntry
)

// Job healths.
const (
	HealthOK      = jobdef.HealthOK
	HealthLate    = jobdef.HealthLate
	HealthStale   = jobdef.HealthStale
	HealthSkipped = jobdef.HealthSkipped
	HealthFailing = jobdef.HealthFailing
)

// Healths lists the job healths, from good to bad.
var Healths = jobdef.Healths

// Limit keys.
const (
	LimitHost       = jobdef.LimitHost
	LimitJob        = jobdef.LimitJob
	LimitCollection = jobdef.LimitCollection
)

// MarkLifetime is how long the mark of a write under way on a collection
// holds (see [jobdef.MarkLifetime]).
const MarkLifetime = jobdef.MarkLifetime

// Bounds of a Limit.
const (
	MaxLimitConcurrent = jobdef.MaxLimitConcurrent
	MaxLimitRate       = jobdef.MaxLimitRate
)

// Run policies.
const (
	MissedRunOnce        = jobdef.MissedRunOnce
	MissedSkip           = jobdef.MissedSkip
	MissedRunAll         = jobdef.MissedRunAll
	OverlapPostpone      = jobdef.OverlapPostpone
	OverlapSkip          = jobdef.OverlapSkip
	OverlapBufferAll     = jobdef.OverlapBufferAll
	OverlapAllowAll      = jobdef.OverlapAllowAll
	OverlapCancelRunning = jobdef.OverlapCancelRunning
	MaxBuffered          = jobdef.MaxBuffered
	MaxRunning           = jobdef.MaxRunning
	MinCatchUpWindow     = jobdef.MinCatchUpWindow
	MaxPauseAfterFaults  = jobdef.MaxPauseAfterFaults
	MaxStateReason       = jobdef.MaxStateReason
)

// Job states.
const (
	JobEnabled   = jobdef.JobEnabled
	JobDisabled  = jobdef.JobDisabled
	JobCompleted = jobdef.JobCompleted
	JobFaulted   = jobdef.JobFaulted
)

// Collection states.
const (
	CollectionEnabled   = jobdef.CollectionEnabled
	CollectionDisabled  = jobdef.CollectionDisabled
	CollectionSuspended = jobdef.CollectionSuspended
)

// Plans and their job quotas.
const (
	SKUFree               = jobdef.SKUFree
	SKUStandard           = jobdef.SKUStandard
	SKUP10Premium         = jobdef.SKUP10Premium
	SKUP20Premium         = jobdef.SKUP20Premium
	FreeMaxJobCount       = jobdef.FreeMaxJobCount
	StandardMaxJobCount   = jobdef.StandardMaxJobCount
	P10PremiumMaxJobCount = jobdef.P10PremiumMaxJobCount
	P20PremiumMaxJobCount = jobdef.P20PremiumMaxJobCount
)

// Limits on a job definition.
const (
	MaxJobSize    = jobdef.MaxJobSize
	MaxURILength  = jobdef.MaxURILength
	MaxHeaders    = jobdef.MaxHeaders
	MaxBodyLength = jobdef.MaxBodyLength
	MaxStartAhead = jobdef.MaxStartAhead
	MaxInputSize  = jobdef.MaxInputSize
)

// ErrInvalid is [jobdef.ErrInvalid]: every invalid definition matches it.
var ErrInvalid = jobdef.ErrInvalid

// HTTPMethods is [jobdef.HTTPMethods].
var HTTPMethods = jobdef.HTTPMethods

// ParseJob is [jobdef.ParseJob].
func ParseJob(data []byte, opts *ParseOptions) (*Job, error) { return jobdef.ParseJob(data, opts) }

// ParseCollection is [jobdef.ParseCollection].
func ParseCollection(data []byte) (*JobCollection, error) { return jobdef.ParseCollection(data) }

// ParseCalendar is [jobdef.ParseCalendar].
func ParseCalendar(data []byte) (*Calendar, error) { return jobdef.ParseCalendar(data) }

// ParseTime is [jobdef.ParseTime].
func ParseTime(s string) (time.Time, error) { return jobdef.ParseTime(s) }

// ValidationErrors is [jobdef.ValidationErrors].
func ValidationErrors(err error) []*ValidationError { return jobdef.ValidationErrors(err) }
