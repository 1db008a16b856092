package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
)

// MaxHistoryMessage is the longest message kept in a history entry, in
// bytes; longer messages are cut at a UTF-8 boundary.
const MaxHistoryMessage = 4096

// ActionName says which action a history entry is about.
type ActionName string

// The action names in their canonical spelling.
const (
	MainAction  ActionName = "MainAction"
	ErrorAction ActionName = "ErrorAction"
)

// ExecutionStatus is the outcome of an attempt.
type ExecutionStatus string

// The execution statuses in their canonical spelling.
const (
	StatusCompleted ExecutionStatus = "Completed"
	StatusFailed    ExecutionStatus = "Failed"
	StatusPostponed ExecutionStatus = "Postponed"
	// StatusSkipped marks scheduled occurrences that did not run: a run
	// policy, a disabled job or a collection that was not Enabled passed
	// over them. One entry stands for a run of consecutive ones (Skipped
	// counts them); its Message says why.
	StatusSkipped ExecutionStatus = "Skipped"
)

var executionStatuses = []ExecutionStatus{StatusCompleted, StatusFailed, StatusPostponed, StatusSkipped}

// Valid reports whether s is a known status in canonical spelling.
func (s ExecutionStatus) Valid() bool { return slices.Contains(executionStatuses, s) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (s *ExecutionStatus) UnmarshalJSON(b []byte) error {
	return enum.Unmarshal(b, s, executionStatuses)
}

// HistoryEntry is one attempt of a job's action, or one postponed
// occurrence. Its JSON form has the names of Azure Scheduler's history
// properties plus collection and job, and the members Azure has not
// (executionTag, faulted, skipped, lastExpectedTime, backfill, manual,
// limitWaitMs, httpStatus), each left out when empty. The REST API's
// history entries carry those added members under the same names (the
// collection and job are in an entry's id).
type HistoryEntry struct {
	// Collection and Job identify the job.
	Collection string `json:"collection"`
	Job        string `json:"job"`
	// ActionName is MainAction or ErrorAction.
	ActionName ActionName `json:"actionName"`
	// Status is Completed, Failed, Postponed or Skipped.
	Status ExecutionStatus `json:"status"`
	// ExpectedExecutionTime is when the occurrence was scheduled; for a
	// Skipped entry, the first of those it stands for.
	ExpectedExecutionTime time.Time `json:"expectedExecutionTime"`
	// StartTime and EndTime bound the attempt. For a Postponed entry
	// both are the instant the occurrence was found waiting, for a
	// Skipped one the instants the first and the last of the occurrences
	// it stands for were passed over (most often one instant).
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
	// RetryCount is the retry number within the occurrence (0 for the
	// first attempt); the error action counts its own attempts from 0.
	RetryCount int `json:"retryCount"`
	// RepeatCount is the occurrence number, from 1.
	RepeatCount int `json:"repeatCount"`
	// Message describes the outcome.
	Message string `json:"message,omitempty"`
	// ExecutionTag is the tag shared by the attempts of the occurrence.
	ExecutionTag string `json:"executionTag,omitempty"`
	// Faulted marks the failed last attempt of an occurrence's main
	// action, after which the occurrence is faulted (the job's
	// faultedCount counts it) and its errorAction, if any, runs.
	Faulted bool `json:"faulted,omitempty"`
	// Skipped is, for a Skipped entry, how many occurrences it stands
	// for (at most MaxSkippedCounted are counted), and LastExpectedTime
	// the expected time of the last of them.
	Skipped          int       `json:"skipped,omitempty"`
	LastExpectedTime time.Time `json:"lastExpectedTime,omitzero"`
	// Backfill marks the entries of an occurrence that
	// [Scheduler.BackfillJob] asked for.
	Backfill bool `json:"backfill,omitempty"`
	// Manual marks the entries of an occurrence that [Scheduler.RunJob]
	// asked for (a run now, beside the schedule). Entries stored before
	// it was recorded read as scheduled ones.
	Manual bool `json:"manual,omitempty"`
	// LimitWaitMillis is, for an attempt that waited for the permits of
	// its collection's limits ([Limit]), how long its occurrence was held
	// back, in milliseconds: from the first refusal to the end of the
	// last wait (at most about 24 days are counted); 0 when it did not
	// wait. See [HistoryEntry.LimitWait].
	LimitWaitMillis int32 `json:"limitWaitMs,omitempty"`
	// HTTPStatus is the response status of an HTTP attempt that got an
	// answer other than 2xx; 0 otherwise.
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// LimitWait returns LimitWaitMillis as a Duration.
func (h *HistoryEntry) LimitWait() time.Duration {
	return time.Duration(h.LimitWaitMillis) * time.Millisecond
}

// limitWaitOf returns how long occurrence o was held back by its
// collection's limits: from its first refusal to the end of its last wait,
// when its next attempt is due, to the nearest millisecond (the history
// entry's limitWaitMs and its message say the same); 0 when it did not
// wait.
func limitWaitOf(o *Occurrence) time.Duration {
	if o.Limited == nil {
		return 0
	}
	return max(o.At.Sub(o.Limited.Since), 0).Round(time.Millisecond)
}

// withoutHistory returns store recording outcomes without their history
// entries: the run loop's store of a Scheduler that keeps no history
// (Config.HistoryPerJob NoHistory) but makes entries for Config.OnHistory
// or Config.Observer. (One that makes none needs no such store: it never
// has entries to record.)
func withoutHistory(store Store) Store {
	if b, ok := store.(BatchRecorder); ok {
		return &noHistoryBatchStore{noHistoryStore{store}, b}
	}
	return &noHistoryStore{store}
}

// noHistoryStore is a Store that records outcomes without history.
type noHistoryStore struct{ Store }

func (s *noHistoryStore) Record(ctx context.Context, owner string, r *JobRecord, _ []HistoryEntry) error {
	return s.Store.Record(ctx, owner, r, nil)
}

// noHistoryBatchStore is noHistoryStore over a BatchRecorder.
type noHistoryBatchStore struct {
	noHistoryStore
	b BatchRecorder
}

// RecordBatch records batch without its history, which it drops from
// batch (the caller's slice of requests).
func (s *noHistoryBatchStore) RecordBatch(ctx context.Context, owner string, batch []RecordRequest) []error {
	for i := range batch {
		batch[i].History = nil
	}
	return s.b.RecordBatch(ctx, owner, batch)
}
