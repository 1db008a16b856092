package scheduler

import (
	"context"
	"maps"
	"slices"
	"time"
)

// Store is the storage interface of the scheduler. store/memory is the
// reference implementation; store/storetest checks any implementation.
//
// Errors: a missing collection or job is reported with an error matching
// [ErrNotFound]; a version mismatch, or a create of something that exists,
// with [ErrConflict]; a lost lease with [ErrLeaseLost]; a full collection
// with [ErrQuotaExceeded]. Wrap them with %w and say what failed.
//
// Versions: every collection and job record has a Version that the store
// increases by one on each successful write, whoever makes it (API writes,
// claims, recorded outcomes). Writes are compare-and-swap on it: the caller
// passes the record it read, and the write fails with ErrConflict when the
// stored Version differs. Version 0 in a Put means "create": it fails with
// ErrConflict when the record exists.
//
// Ownership: what a method returns is the caller's. A record (with its
// definition, status and schedule) or history entry that a store returns
// shares no memory with what the store holds, so the caller may change any
// member of it, the definition included, without changing what is stored
// (a store that decodes what it reads gets this for free; one that keeps
// Go values, as store/memory does, returns copies). The records of one
// answer may share a definition with each other (the SQL stores decode a
// definition that several claimed jobs hold once), and nothing else: the
// Scheduler writes a job's new last and next execution times into the
// instants its record's status points to, so two records pointing to one
// instant would change each other. Likewise a record given
// to PutCollection, PutJob or Record stays the caller's: changing it once
// the call returns changes nothing stored. [BatchRecorder.RecordBatch] is
// the one method that takes over what it is given. storetest checks both.
//
// The one exception is the definition (JobRecord.Job) of the records
// ClaimDue returns: a store may hand out the definition it holds, without
// a copy, and the caller must not modify it (nor what it points to). A
// store never modifies a definition it holds either, whoever holds it as
// well: a put replaces it with another. The Scheduler reads a claimed
// job's definition and passes it back to Record unchanged, which may then
// keep it as it is. storetest checks that a store changes no definition it
// handed out; the Scheduler's tests, that the Scheduler changes none.
type Store interface {
	// PutCollection creates c (c.Version == 0) or replaces it (c.Version
	// equal to the stored one). On success the stored Version is
	// c.Version+1. Replacing a collection with a quota smaller than the
	// number of jobs it holds fails with ErrQuotaExceeded (the limit is
	// c.Definition.MaxJobCount()). Changing the state to anything but
	// Enabled takes the collection's jobs out of ClaimDue and NextDue;
	// changing it back puts them in again with their stored due times.
	PutCollection(ctx context.Context, c *CollectionRecord) error

	// GetCollection returns the collection, or ErrNotFound.
	GetCollection(ctx context.Context, name string) (*CollectionRecord, error)

	// ListCollections returns every collection, ordered by name.
	ListCollections(ctx context.Context) ([]*CollectionRecord, error)

	// DeleteCollection deletes the collection, its jobs and their
	// history in one atomic step, leases or not. ErrNotFound when it does
	// not exist. etag, when not empty, is a condition checked in that
	// step: the collection is deleted only when its stored ETag is etag;
	// otherwise the call fails with ErrPreconditionFailed, deleting
	// nothing (ErrNotFound when the collection does not exist, whatever
	// etag is). The Scheduler passes an ETag that its caller named
	// ([DeleteCollectionOptions].IfMatch), never "*".
	DeleteCollection(ctx context.Context, name, etag string) error

	// PutJob creates j (j.Version == 0) or replaces it (j.Version equal
	// to the stored one), including its scheduling state, Due index
	// entry and state. On success the stored Version is j.Version+1.
	// The collection must exist (ErrNotFound naming it otherwise). A
	// create fails with ErrQuotaExceeded when the collection already
	// holds its MaxJobCount() jobs; the count and the insert are atomic.
	// A replace keeps the stored lease (LeaseOwner, LeaseUntil) whatever
	// j says, so an attempt in flight can still record its outcome (it
	// will see ErrConflict and re-read first). The store hands j.Created
	// back exactly as written, to the nanosecond, and a replace keeps it
	// (the Scheduler passes the stored one); a create draws the job's
	// Incarnation and, once it succeeded, sets it in j, so that the
	// Scheduler's answer says what is stored (a create that failed may
	// have set one too, which nothing stored holds: after an error, j's
	// Incarnation means nothing); a replace keeps the stored
	// Incarnation whatever j says: Record and
	// GiveBack compare both to tell the job from one deleted and created
	// again under its name, also at the same instant (see "Stores" in the
	// package documentation).
	PutJob(ctx context.Context, j *JobRecord) error

	// GetJob returns the job, or ErrNotFound (naming the collection when
	// that is what is missing).
	GetJob(ctx context.Context, collection, name string) (*JobRecord, error)

	// ListJobs returns the collection's jobs in the order f.OrderBy
	// (reversed with f.Descending; by name when empty, ties by name
	// as [JobOrder] says), after filtering by f.State (empty: all) and
	// f.Tag (the zero TagFilter: all) and skipping f.Skip; at most f.Top
	// of them (0: no limit).
	// ErrNotFound when the collection does not exist.
	ListJobs(ctx context.Context, collection string, f JobFilter) ([]*JobRecord, error)

	// DeleteJob deletes the job and its history, leased or not, in one
	// atomic step. ErrNotFound when it does not exist. etag, when not
	// empty, is a condition checked in that step: the job is deleted
	// only when its stored ETag is etag (whatever its Version: a claim or
	// a recorded outcome changes the Version, not the ETag); otherwise
	// the call fails with ErrPreconditionFailed, deleting nothing
	// (ErrNotFound when the job does not exist, whatever etag is). So a
	// job written since the caller read etag is never deleted in its
	// place. The Scheduler passes an ETag that its caller named
	// ([DeleteJobOptions].IfMatch), or one it wrote itself, never "*".
	DeleteJob(ctx context.Context, collection, name, etag string) error

	// ClaimDue leases up to limit jobs that are due at now and returns
	// them, earliest Due first (ties in any order). A job is due when
	// its Schedule.DueAt is set and not after now, its collection is
	// Enabled, and it has no lease or its lease has expired
	// (LeaseUntil not after now). Each returned job has LeaseOwner =
	// owner, LeaseUntil = leaseUntil and a Version one higher than
	// before; the same job is never returned to two concurrent callers
	// whose leases overlap. limit < 1 claims nothing. Each returned job
	// has PreviousLeaseOwner set to the LeaseOwner it had before the
	// claim: the owner of the expired lease the claim replaced (the
	// caller itself, when it claims its own expired lease again), or
	// empty when the job was not leased. The records are the caller's
	// but for their definitions, which it must not modify (see Store).
	ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*JobRecord, error)

	// NextDue returns the earliest instant at which ClaimDue would find
	// a job: the later of a job's DueAt and its LeaseUntil, over jobs of
	// Enabled collections; the zero Time when no job has a DueAt.
	NextDue(ctx context.Context) (time.Time, error)

	// ExtendLease moves the lease of a job the caller holds to until.
	// ErrLeaseLost when owner does not hold the lease (an expired lease
	// that nobody else claimed still counts as held, as in Record);
	// ErrNotFound when the job is gone. An empty owner holds no lease:
	// ExtendLease with owner "" fails with ErrLeaseLost (ErrNotFound
	// when the job is gone) and changes nothing, whether the job is
	// leased or not. It does not change the Version.
	ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error

	// Record stores the outcome of work on a claimed job in one atomic
	// step: it replaces the job record with j (state, status, scheduling
	// state; definition and ETag as given; the stored Tags stay, whatever
	// j holds), releases the lease, and
	// appends history in order. It fails, changing nothing, with
	// ErrNotFound when the job is gone (also when it was deleted and
	// created again since: the stored job's Incarnation or Created
	// differs from j's, whatever its lease and Version), ErrLeaseLost when owner
	// does not hold the lease (an expired lease that nobody else claimed
	// still counts as held), and ErrConflict when j.Version differs from
	// the stored one. On success the stored Version is j.Version+1.
	//
	// The Scheduler repeats a Record that failed with an error other than
	// these (a lost connection, say) until the store answers. A store
	// whose write can commit although the caller hears an error should
	// recognise such a repeat (same owner, j and history, after the first
	// committed) and return nil for it, changing nothing; store/postgres
	// does so by finding the history already stored. Otherwise the repeat
	// fails with ErrLeaseLost, which the Scheduler logs.
	Record(ctx context.Context, owner string, j *JobRecord, history []HistoryEntry) error

	// ListHistory returns the job's history newest first (the reverse of
	// the order in which entries were recorded): the entries f keeps
	// (its Status, Faulted, NotFaulted and Collections, see
	// [HistoryFilter.Keeps]), skipping f.Skip, at most f.Top entries (0: no limit). ErrNotFound
	// when the job does not exist.
	ListHistory(ctx context.Context, collection, job string, f HistoryFilter) ([]HistoryEntry, error)

	// Prune applies retention: it deletes history entries whose EndTime
	// is before p.HistoryBefore (zero: none), keeps at most p.PerJob
	// newest entries of each job (0: no limit), and deletes jobs in a
	// final state (Completed, Faulted) whose Updated is before
	// p.FinalJobsBefore (zero: none), with their history. It returns the
	// number of history entries and jobs deleted.
	Prune(ctx context.Context, p PruneRequest) (int, error)
}

// BatchRecorder is an optional interface of a [Store]: recording the
// outcomes of several claimed jobs in one call, which spares a store a lock
// or a round trip per job. The Scheduler finds it by type assertion and,
// when the store has it, records the outcomes of attempts through it;
// otherwise it calls [Store.Record] once per job.
type BatchRecorder interface {
	// RecordBatch does what [Store.Record] does for each element of
	// batch, in order, each on its own: an element that fails changes
	// nothing and does not stop the others. It returns nil when every
	// element was recorded, and otherwise one error per element, nil for
	// those recorded, with the same meanings as Record's. (A store may
	// also answer a batch that all succeeded with one nil error per
	// element; a non-nil slice shorter than batch counts its missing
	// elements as failed.)
	//
	// Unlike Record, RecordBatch may keep the JobRecord of each element
	// it records and what it points to, modifying the record as it likes
	// but never its [Job] (the definition): the caller must not use those
	// records afterwards, nor change their definitions, which it may
	// still read. Records of elements that fail are left untouched;
	// history entries are copied.
	RecordBatch(ctx context.Context, owner string, batch []RecordRequest) []error
}

// RecordRequest is one element of [BatchRecorder.RecordBatch]: the
// arguments of one [Store.Record] call.
type RecordRequest struct {
	// Job is the record to store; it must not be nil.
	Job *JobRecord
	// History is appended to the job's history, in order; nil appends
	// nothing.
	History []HistoryEntry
	// KeepDefinition says that the definition is the one stored: the
	// caller claimed or read the job at Job.Version and did not replace
	// its definition since. The store then keeps the definition it
	// holds, whatever Job.Job is, and need not encode, send or write it
	// (the element still fails with ErrConflict unless the stored
	// Version is Job.Version, so the definition kept is the one the
	// caller read). False (the zero value): the store writes Job.Job, as
	// Record does. The Scheduler sets it for the outcomes of claimed
	// jobs whose definition its step left as claimed.
	KeepDefinition bool
}

// LeaseExtender is an optional interface of a [Store]: extending the
// leases of many jobs of one owner in one call, which spares a store a
// statement, a lock or a round trip per job. The Scheduler finds it by
// type assertion and, when the store has it, extends the leases of its
// running attempts and of the outcomes waiting to be recorded through it,
// up to 1,000 jobs a call; otherwise it calls [Store.ExtendLease] once per
// job. The memory, SQLite and PostgreSQL stores have it;
// storetest.Run checks it when the store has it. A type that wraps
// a store by embedding it and changes its ExtendLease must change
// ExtendLeases too (or not embed it).
type LeaseExtender interface {
	// ExtendLeases does what [Store.ExtendLease] does for each of jobs,
	// with owner and until, each on its own: a job whose lease owner does
	// not hold (an empty owner holds none; an expired lease that nobody
	// else claimed is still held) fails with ErrLeaseLost, and one that
	// is gone with ErrNotFound, neither stopping the others; no Version
	// changes. It returns nil when every lease was extended, and
	// otherwise one error per job, nil for those extended. A call that
	// fails as a whole (the store unreachable, ctx ended) returns its
	// error for each job it did not extend. A job named more than once
	// in jobs gets the same answer in each place (extended, or not and
	// why), its lease extended once; an empty jobs extends nothing and
	// returns nil.
	ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []JobKey) []error
}

// JobKey names a job: one element of [LeaseExtender.ExtendLeases].
type JobKey struct {
	Collection, Name string
}

// CollectionRecord is a stored job collection.
type CollectionRecord struct {
	// Name is the collection's name.
	Name string
	// Definition is the collection's plan, state and quota.
	Definition JobCollection
	// ETag changes on every write through the Scheduler's API; callers
	// pass it back as IfMatch for optimistic concurrency.
	ETag string
	// Version is the store's write counter; see [Store].
	Version int64
	// Created and Updated are when the collection was created and last
	// written.
	Created, Updated time.Time
}

// JobRecord is a stored job with its state, status and scheduling state.
// The Scheduler's job methods return it.
type JobRecord struct {
	// Collection and Name identify the job.
	Collection, Name string
	// Job is the definition as given, with State and Status left empty;
	// see [JobRecord.Definition] for the definition with both filled in.
	Job *Job
	// Tags are the job's labels, the "tags" of its ARM resource: names
	// and values that the Scheduler does not interpret, for finding jobs
	// ([JobFilter.Tag]). nil when the job has none (never an empty map).
	// PutJob stores them as given; Record keeps the stored ones.
	Tags map[string]string
	// State is Enabled, Disabled, Completed or Faulted.
	State JobState
	// Status holds the counters and execution times.
	Status JobStatus
	// ETag changes on every write through the Scheduler's API (not when
	// the job runs); callers pass it back as IfMatch.
	ETag string
	// Version is the store's write counter; see [Store]. It is 1 right
	// after the job is created.
	Version int64
	// Created is when the job was created; Updated when it was last
	// written by anyone.
	Created, Updated time.Time
	// CreatedByPut is set only on the records that a put of jobs returns
	// ([Scheduler.PutJob], PutJobJSON, PutJobTx, PutJobs): true when that
	// put created the job. The store's write decides it, not a clock: a
	// create is a write over Version 0, which fails when the job exists,
	// so of puts racing to create one job exactly one reports it, and a
	// put that finds the job as it would write it writes nothing and
	// reports false. The Scheduler sets it after the store's write and
	// never passes it set to a store; stores neither keep nor set it.
	CreatedByPut bool
	// Incarnation tells the job from the others that had its name in the
	// store before it, deleted since: the store draws it when PutJob (or
	// a [BulkPutter]'s PutJobs, or a [TxStore]'s PutJob) creates the
	// job, whatever the record given says, never zero, and hands it back
	// from every read. It must differ from the Incarnations of the jobs
	// of the collection and name created before in the store with
	// overwhelming likelihood: a random 64-bit value (which processes
	// sharing a database draw alike with odds of one in 2^64), or a count
	// of the store's creates that comes back only after 2^32 creates or
	// more (store/memory's: 2^48). A job's identity is its Incarnation
	// and its Created together, so two jobs of one name are taken for one
	// only when both are equal: the two drew one Incarnation, and were
	// created at the same instant. A create that succeeded sets it in
	// the record it was given (PutJob's, PutJobs', CreateJob's), so that
	// the Scheduler's answer to the put holds it (one that failed may
	// have set a number that nothing stored holds, so the record given
	// to a put that returned an error says nothing by its Incarnation);
	// a replace and Record keep the stored one, whatever the record
	// given says. Record and [AheadClaimer.GiveBack] compare it, with
	// Created, to tell the claimed job from another created under its
	// name since (see "Stores" in the package documentation). Zero only
	// in the jobs a store holds from before it drew one (the SQL stores'
	// rows of older schemas): those are told apart by Created alone. A
	// store that hands back zero for the jobs it creates fails
	// storetest.Run, and takes a job created again at its predecessor's
	// instant for its predecessor.
	Incarnation int64
	// Schedule is the scheduler's bookkeeping. Stores keep it as is and
	// index Schedule.DueAt.
	Schedule JobSchedule
	// LeaseOwner is the instance working on the job and LeaseUntil when
	// its lease expires; empty and zero when none.
	LeaseOwner string
	LeaseUntil time.Time
	// PreviousLeaseOwner is set only on the records ClaimDue (and
	// [AheadClaimer.ClaimDueBy]) returns: the owner whose expired lease
	// the claim replaced, empty when the job was not leased. A claim with
	// a previous owner other than the claimant is a takeover: that owner
	// stopped working on the job (it died, or lost the store) before
	// recording its outcome. Stores do not keep it: PutJob and Record
	// ignore it, and the other methods return it empty.
	PreviousLeaseOwner string
	// PreviousLeaseUntil goes with PreviousLeaseOwner: the end of the
	// expired lease the claim replaced, zero when the job was not
	// leased. [AheadClaimer.GiveBack] puts it back. A store that is not
	// an AheadClaimer may leave it zero.
	PreviousLeaseUntil time.Time
	// Handle is set only on the records ClaimDue returns, by the store
	// and for the store: what lets it find the job again without looking
	// it up when the record comes back to Record or RecordBatch
	// (store/memory: where it keeps the job); nil from a store that needs
	// none. The Scheduler passes it back as it got it. A store checks
	// what it finds through it (the job may have been deleted since, and
	// a caller may change the record's names), does not keep it, and
	// returns it nil from every other method.
	Handle any
}

// ID returns "collection/name".
func (r *JobRecord) ID() string { return jobID(r.Collection, r.Name) }

// sameJob reports whether r and o are records of one job: the same
// Incarnation and Created, not a job and another created under its name
// after it was deleted.
func (r *JobRecord) sameJob(o *JobRecord) bool {
	return r.Incarnation == o.Incarnation && r.Created.Equal(o.Created)
}

// jobID is the ID of the job of the collection and name (see JobRecord.ID).
func jobID(collection, name string) string { return collection + "/" + name }

// Definition returns the job definition with State, StateReason,
// ResumeTime and Status filled in from the record (the reason and the
// resume time only while the job is Disabled): a new Job that shares what
// r.Job points to.
func (r *JobRecord) Definition() *Job {
	j := *r.Job
	j.State = r.State
	j.StateReason, j.ResumeTime = "", nil
	if p := r.Schedule.Policy; p != nil && r.State == JobDisabled {
		j.StateReason = p.StateReason
		if t := p.ResumeTime; !t.IsZero() {
			j.ResumeTime = &t
		}
	}
	st := r.Status
	j.Status = &st
	return &j
}

// Clone returns a deep copy of r: it shares nothing with r. The copy and the instants its Status
// points to take one allocation.
func (r *JobRecord) Clone() *JobRecord {
	b := new(struct {
		rec        JobRecord
		last, next time.Time
	})
	c := &b.rec
	*c = *r
	c.Job = r.Job.Clone()
	c.Tags = maps.Clone(r.Tags)
	if p := r.Status.LastExecutionTime; p != nil {
		b.last = *p
		c.Status.LastExecutionTime = &b.last
	}
	if p := r.Status.NextExecutionTime; p != nil {
		b.next = *p
		c.Status.NextExecutionTime = &b.next
	}
	c.Schedule = r.Schedule.clone()
	return c
}

// JobSchedule is the scheduler's bookkeeping for one job. A store persists
// it unchanged (for example as JSON) and indexes DueAt; it never interprets
// the other fields.
type JobSchedule struct {
	// DueAt is when the scheduler must next look at the job; zero when
	// nothing is pending (a final or disabled job).
	DueAt time.Time `json:"dueAt,omitzero"`
	// Anchor is the instant the job's timing counts from: its creation,
	// or the last PutJob that replaced it, truncated to the whole second
	// (Created and Updated keep the exact instant).
	Anchor time.Time `json:"anchor,omitzero"`
	// NextOccurrence is the scheduled instant of the next occurrence not
	// yet started; zero when there is none.
	NextOccurrence time.Time `json:"nextOccurrence,omitzero"`
	// Occurrences is the number of occurrences started so far (the
	// repeatCount of the latest one), manual runs included.
	Occurrences int `json:"occurrences,omitempty"`
	// Counted is the number of scheduled occurrences taken so far,
	// which recurrence.count limits.
	Counted int `json:"counted,omitempty"`
	// Current is the occurrence in progress (retries or the error action
	// pending); nil when none.
	Current *Occurrence `json:"current,omitempty"`
	// Waiting is an occurrence that came due while Current was in
	// progress and was postponed; it starts when Current ends.
	Waiting *Occurrence `json:"waiting,omitempty"`
	// RunRequested is when RunJob asked for a run that has not started
	// yet, to the millisecond (the run's expected time); zero when none.
	RunRequested time.Time `json:"runRequested,omitzero"`
	// RunTrace and RunTraceState are the W3C traceparent and tracestate
	// of the span in the context of the RunJob call that asked for the
	// run, as Config.Observer reads it ([Observer.TraceParent]); empty
	// when it had none. The run's occurrence continues that trace.
	RunTrace      string `json:"runTrace,omitempty"`
	RunTraceState string `json:"runTraceState,omitempty"`
	// RunRequestedInClaim, when not 0, says that RunJob asked for the
	// run RunRequested holds while a claim held the job, after the
	// claim's step: it is not the run in progress but one to run after
	// it, and a request repeated meanwhile leaves it, with its time and
	// trace, as it is. It is the Version of the record as that request
	// wrote it, and holds only while the record keeps that Version, which
	// each write through the API (RunJob's own included) moves on with
	// the record's: a claim changes the Version, so a later claim (a
	// takeover, or one after the job was given back unrun) does not see
	// it. The engine's next step of the job clears it (the record written
	// with that attempt's outcome, or any other the engine writes, has it
	// 0).
	RunRequestedInClaim int64 `json:"runRequestedInClaim,omitempty"`
	// LastFailed reports whether the latest finished occurrence failed,
	// and LastSkipped that the latest scheduled occurrence the job got to
	// was passed over by a run policy rather than run.
	LastFailed  bool `json:"lastFailed,omitempty"`
	LastSkipped bool `json:"lastSkipped,omitempty"`
	// LastCancelled reports that the latest finished occurrence failed
	// without faulting: it was cancelled before its next attempt (a retry
	// or errorAction of an occurrence whose main action had not faulted)
	// by runPolicy.overlap CancelRunning, or dropped so by disabling the
	// job. LastFailed is true too; the job's health (Failing) follows the
	// occurrences that faulted only.
	LastCancelled bool `json:"lastCancelled,omitempty"`
	// Faults counts the consecutive faulted occurrences up to the latest
	// finished one (RunPolicy.PauseAfterFaults reads it).
	Faults int `json:"faults,omitempty"`
	// LastSucceeded is when the latest occurrence that succeeded ended;
	// zero when none has.
	LastSucceeded time.Time `json:"lastSucceeded,omitzero"`
	// Policy holds the state of a pause, a backfill and the run policies
	// that most jobs never have; nil when all of it is empty.
	Policy *PolicyState `json:"policy,omitempty"`
}

// PolicyState is the part of a job's scheduling state that pauses,
// backfills and run policies keep ([JobSchedule.Policy]).
type PolicyState struct {
	// StateReason and ResumeTime are the job's stateReason and
	// resumeTime while it is Disabled (see [Job]); empty otherwise.
	StateReason string    `json:"stateReason,omitempty"`
	ResumeTime  time.Time `json:"resumeTime,omitzero"`
	// Resumed is when the job was last Enabled again after it was
	// Disabled (by a write through the API, or at its resumeTime), while that is later than its last success
	// and its anchor: its health counts from there (see
	// [HealthStalePeriods]). Zero otherwise; the step after the job's
	// next success clears it.
	Resumed time.Time `json:"resumed,omitzero"`
	// Buffered is, under OverlapBufferAll, the latest instant at which a
	// scheduler found an occurrence due while another was in progress:
	// scheduled occurrences expected up to it run one after the other
	// whatever the missed policy. Zero when none waits.
	Buffered time.Time `json:"buffered,omitzero"`
	// Backfill holds the expected times of the occurrences that
	// [Scheduler.BackfillJob] asked for and that have not started, in
	// order; they run one at a time while the job is Enabled and nothing
	// else is due (side by side, started in order, under
	// OverlapAllowAll).
	Backfill []time.Time `json:"backfill,omitempty"`
	// Passed is the Skipped history entry of occurrences that a write
	// through the API passed over (enabling a Disabled job starts it from
	// now), for the next step to record; nil when none waits.
	Passed *HistoryEntry `json:"passed,omitempty"`
	// Skipping is the Skipped history entry of the run of consecutive
	// scheduled occurrences passed over so far because an occurrence was
	// in progress (it waits for a retry, under runPolicy.overlap Postpone
	// or Skip): each step that passes over the next one extends it,
	// rather than recording an entry of its own, and it is recorded once
	// the run ends (the occurrence in progress ended, or the next one
	// passed over is not the next of the run, or for another reason); nil
	// when none is under way.
	Skipping *HistoryEntry `json:"skipping,omitempty"`
	// Running holds, under OverlapAllowAll, the job's occurrences that
	// run side by side, each with a lease of its own (at most
	// MaxRunning): those whose attempt runs, and those waiting for a
	// retry or their error action. Ordered by occurrence number.
	Running []Run `json:"running,omitempty"`
	// Ended is, while Running holds occurrences, the number of the
	// newest occurrence that ended or faulted: the outcome of an older
	// one that ends after it changes the counters but neither the job's
	// health nor its count of consecutive faults. Zero when none runs.
	Ended int `json:"ended,omitempty"`
	// Ends holds the history entries of the attempts of Running's
	// occurrences that ended since the job was last stepped (an
	// attempt's outcome is written to the job without the job's lease,
	// see [Run]), and those of the occurrences that disabling the job
	// dropped before their next attempts, for the next step to record;
	// nil when none waits.
	Ends []HistoryEntry `json:"ends,omitempty"`
}

// Run is an occurrence of a job that runs beside the job's others under
// OverlapAllowAll ([PolicyState.Running]). The instance that starts an
// attempt of it writes the job with Owner and Until set and releases the
// job's lease, so that the job's next occurrences can start on any
// instance meanwhile; it writes the attempt's outcome to the job
// (compare-and-swap on its Version) when the attempt ends. Owner moves
// Until on while the attempt runs, also past its timeout. When Until
// passes with Owner still set (its instance stopped), the next instance to
// claim the job runs the attempt again, with the same execution tag.
type Run struct {
	Occurrence
	// Owner is the instance whose attempt of the occurrence runs; empty
	// while the occurrence waits for its next attempt, due at At.
	Owner string `json:"owner,omitempty"`
	// Until is when Owner's claim on the attempt ends: at first the
	// attempt's timeout and Config.LeaseDuration after it started; while
	// the attempt runs, Owner keeps it at least a third of a
	// LeaseDuration ahead.
	Until time.Time `json:"until,omitzero"`
	// Dropped says that the job was disabled while the attempt ran: the
	// occurrence ends with it, without a retry or errorAction; when
	// Until passes first (its instance stopped), it ends without running
	// again.
	Dropped bool `json:"dropped,omitempty"`
}

// due reports whether the next attempt of r may start at now: it waits
// and is due, or its owner's claim has expired.
func (r *Run) due(now time.Time) bool {
	if r.Owner != "" {
		return !r.Until.After(now)
	}
	return !r.At.After(now)
}

// ownRun returns the run of s with execution tag tag whose attempt owner
// claims; nil when there is none.
func (s *JobSchedule) ownRun(owner, tag string) *Run {
	if s.Policy == nil {
		return nil
	}
	for i := range s.Policy.Running {
		if ru := &s.Policy.Running[i]; ru.Owner == owner && ru.Tag == tag {
			return ru
		}
	}
	return nil
}

// clone returns a deep copy of p; nil for a nil p.
func (p *PolicyState) clone() *PolicyState {
	if p == nil {
		return nil
	}
	c := *p
	c.Backfill = slices.Clone(p.Backfill)
	if p.Passed != nil {
		h := *p.Passed
		c.Passed = &h
	}
	if p.Skipping != nil {
		h := *p.Skipping
		c.Skipping = &h
	}
	c.Running = slices.Clone(p.Running)
	for i := range c.Running {
		c.Running[i].Occurrence = *c.Running[i].Occurrence.clone()
	}
	c.Ends = slices.Clone(p.Ends)
	return &c
}

// policy returns s.Policy, made when s has none: for writing.
func (s *JobSchedule) policy() *PolicyState {
	if s.Policy == nil {
		s.Policy = new(PolicyState)
	}
	return s.Policy
}

// tidy drops s.Policy when it holds nothing, and Policy.Resumed once
// the last success or the anchor is as late (health counts from the
// latest of the three).
func (s *JobSchedule) tidy() {
	p := s.Policy
	if p == nil {
		return
	}
	if len(p.Running) == 0 {
		p.Running, p.Ended = nil, 0
	}
	if len(p.Ends) == 0 {
		p.Ends = nil
	}
	if !p.Resumed.After(s.LastSucceeded) || !p.Resumed.After(s.Anchor) {
		p.Resumed = time.Time{}
	}
	if p.StateReason == "" && p.ResumeTime.IsZero() && p.Resumed.IsZero() && p.Buffered.IsZero() && len(p.Backfill) == 0 && p.Passed == nil &&
		p.Skipping == nil && p.Running == nil && p.Ends == nil {
		s.Policy = nil
	}
}

// enabledAgain marks s, the schedule of a Disabled job being Enabled at
// now, as enabled again: its pause and its count of consecutive faults
// end, and its health counts from now (Policy.Resumed).
func (s *JobSchedule) enabledAgain(now time.Time) {
	p := s.policy()
	p.StateReason, p.ResumeTime, p.Resumed = "", time.Time{}, now
	s.Faults = 0
}

// healthSince returns the instant from which the job's health counts
// scheduled occurrences: the latest of its last success, its anchor and
// when it was last enabled again.
func (s *JobSchedule) healthSince() time.Time {
	t := s.LastSucceeded
	if t.Before(s.Anchor) {
		t = s.Anchor
	}
	if p := s.Policy; p != nil && t.Before(p.Resumed) {
		t = p.Resumed
	}
	return t
}

// running returns how many occurrences run side by side (Policy.Running).
func (s *JobSchedule) running() int {
	if s.Policy == nil {
		return 0
	}
	return len(s.Policy.Running)
}

// buffered returns Policy.Buffered, zero without Policy.
func (s *JobSchedule) buffered() time.Time {
	if s.Policy == nil {
		return time.Time{}
	}
	return s.Policy.Buffered
}

// resumeTime returns Policy.ResumeTime, zero without Policy.
func (s *JobSchedule) resumeTime() time.Time {
	if s.Policy == nil {
		return time.Time{}
	}
	return s.Policy.ResumeTime
}

// backfills returns how many occurrences wait to be backfilled.
func (s *JobSchedule) backfills() int {
	if s.Policy == nil {
		return 0
	}
	return len(s.Policy.Backfill)
}

func (s JobSchedule) clone() JobSchedule {
	s.Policy = s.Policy.clone()
	s.Current, s.Waiting = s.Current.clone(), s.Waiting.clone()
	return s
}

// clone returns a deep copy of o; nil for a nil o.
func (o *Occurrence) clone() *Occurrence {
	if o == nil {
		return nil
	}
	c := *o
	if c.Limited != nil {
		c.Limited = new(*c.Limited)
	}
	return &c
}

// Occurrence is one occurrence of a job in progress or waiting.
type Occurrence struct {
	// Number is the occurrence number (history's repeatCount).
	Number int `json:"number,omitempty"`
	// Expected is the instant the occurrence was scheduled for.
	Expected time.Time `json:"expected"`
	// Tag is the execution tag shared by all attempts of the occurrence.
	Tag string `json:"tag,omitempty"`
	// Manual marks a run requested with RunJob.
	Manual bool `json:"manual,omitempty"`
	// Backfill marks an occurrence that BackfillJob asked for.
	Backfill bool `json:"backfill,omitempty"`
	// ErrorAction reports that the main action's attempts are exhausted
	// and the error action's are under way.
	ErrorAction bool `json:"errorAction,omitempty"`
	// Retry is the retry number of the next attempt (0 for the first).
	Retry int `json:"retry,omitempty"`
	// At is when the next attempt is due.
	At time.Time `json:"at,omitzero"`
	// Limited is set while the next attempt waits for the permits of
	// its collection's limits ([Limit]); nil when it was not refused
	// one. It is a pointer so that the occurrences that never wait, most
	// of them, stay in a 128-byte allocation.
	Limited *LimitWait `json:"limited,omitempty"`
	// Trace and TraceState are the W3C traceparent and tracestate that
	// the spans of the occurrence's attempts are children of: the
	// RunJob caller's span for a manual run, else the span of the
	// occurrence's first attempt (so that its retries and error action
	// join the first attempt's trace); empty when none was recorded.
	Trace      string `json:"trace,omitempty"`
	TraceState string `json:"traceState,omitempty"`
}

// LimitWait is the wait of an occurrence's next attempt for the permits of
// its collection's limits: [Occurrence.Limited].
type LimitWait struct {
	// Since is when the attempt was first refused a permit.
	Since time.Time `json:"since"`
	// Key is the key of the limit that refused it last; empty when the
	// store failed.
	Key LimitKey `json:"key,omitempty"`
}

// JobFilter selects jobs for [Store.ListJobs].
type JobFilter struct {
	// State keeps only jobs in this state; empty keeps all.
	State JobState
	// Tag keeps only the jobs it matches ([TagFilter.Keeps]); the zero
	// TagFilter keeps all.
	Tag TagFilter
	// OrderBy is the order of the list; empty (JobsByName) lists by
	// name. See [JobOrder] for where jobs without a value go and how
	// ties are broken.
	OrderBy JobOrder
	// Descending lists in the reverse of OrderBy's order: the exact
	// reverse, ties by name descending too.
	Descending bool
	// Skip leaves out this many jobs first.
	Skip int
	// Top returns at most this many jobs; 0 means no limit.
	Top int
}

// JobOrder is an order of a list of jobs ([JobFilter.OrderBy],
// [ListJobsOptions.OrderBy]); its values are the names of the job
// properties it orders by, as the job's JSON spells them. Jobs with equal
// values are in name order, so that pages that follow one another while
// nothing changes neither miss nor repeat a job. A job without a value
// (no next execution: a Completed, Faulted or Disabled job, or one with no
// occurrence left; no last execution: a job that has not run) comes after
// every job with one in ascending order, and so before them in
// descending order. Times are compared to the nanosecond, as stored: the
// order of a job that names a calendar follows the next execution time
// its record holds, which a list may show replanned ([Scheduler.ListJobs]).
type JobOrder string

// The orders of a list of jobs.
const (
	// JobsByName orders by name, the zero JobOrder.
	JobsByName JobOrder = ""
	// JobsByNextExecution orders by Status.NextExecutionTime, earliest
	// first.
	JobsByNextExecution JobOrder = "nextExecutionTime"
	// JobsByLastExecution orders by Status.LastExecutionTime, earliest
	// first.
	JobsByLastExecution JobOrder = "lastExecutionTime"
	// JobsByFailures orders by Status.FailureCount, fewest first.
	JobsByFailures JobOrder = "failureCount"
)

// JobOrders are the orders of a list of jobs but JobsByName.
var JobOrders = []JobOrder{JobsByNextExecution, JobsByLastExecution, JobsByFailures}

// Valid reports whether o is one of the orders of a list of jobs, as
// spelled here.
func (o JobOrder) Valid() bool { return o == JobsByName || slices.Contains(JobOrders, o) }

// TagFilter selects jobs by one of their tags ([JobRecord.Tags]), as ARM's
// $filter=tagName eq 'NAME' and tagValue eq 'VALUE' does.
type TagFilter struct {
	// Name is the tag a job must have, compared exactly; empty keeps
	// every job (and then Value must be empty too).
	Name string
	// Value is the value the tag must have; empty keeps any value
	// (a tag whose value is empty is found by its name alone).
	Value string
}

// Keeps reports whether a job with these tags passes f.
func (f TagFilter) Keeps(tags map[string]string) bool {
	if f.Name == "" {
		return true
	}
	v, ok := tags[f.Name]
	return ok && (f.Value == "" || v == f.Value)
}

// HistoryFilter selects history entries for [Store.ListHistory] and
// [StatsReader.RecentHistory]: the entries that [HistoryFilter.Keeps],
// then a page of them.
type HistoryFilter struct {
	// Status keeps only entries with this status; empty keeps all.
	Status ExecutionStatus
	// Faulted keeps only entries that faulted their occurrence
	// ([HistoryEntry.Faulted]); false keeps all.
	Faulted bool
	// NotFaulted keeps only entries that did not fault their occurrence
	// (HistoryEntry.Faulted false); false keeps all. With Faulted also
	// set, the filter keeps none.
	NotFaulted bool
	// Collections keeps only entries of jobs in these collections; nil
	// keeps all, and an empty non-nil list keeps none.
	Collections []string
	// Skip leaves out this many entries first.
	Skip int
	// Top returns at most this many entries; 0 means no limit.
	Top int
}

// Keeps reports whether h passes f's Status, Faulted, NotFaulted and
// Collections.
func (f *HistoryFilter) Keeps(h *HistoryEntry) bool {
	return (f.Status == "" || h.Status == f.Status) && (!f.Faulted || h.Faulted) && (!f.NotFaulted || !h.Faulted) &&
		(f.Collections == nil || slices.Contains(f.Collections, h.Collection))
}

// PruneRequest says what [Store.Prune] deletes.
type PruneRequest struct {
	// HistoryBefore deletes history entries that ended before it; zero
	// deletes none by age.
	HistoryBefore time.Time
	// PerJob keeps at most this many newest entries per job; zero keeps
	// all.
	PerJob int
	// FinalJobsBefore deletes Completed and Faulted jobs last updated
	// before it; zero deletes none.
	FinalJobsBefore time.Time
	// LimitsBefore makes a store that is a [Limiter] forget what no
	// longer counts: the rates whose next start was free before it, and
	// the concurrency permits that expired before it. Neither changes
	// what AcquirePermits grants; they are not counted in Prune's result.
	// Zero forgets none. The Scheduler passes a LeaseDuration ago.
	LimitsBefore time.Time
}

// Clone returns a deep copy of r.
func (r *CollectionRecord) Clone() *CollectionRecord {
	c := *r
	c.Definition = *r.Definition.Clone()
	return &c
}

// Notifier is an optional capability of a [Store] shared by several
// processes: Notify returns a channel that receives a value soon after any
// process writes a job or enables a collection, so that a Scheduler looks
// for due work at once instead of at its next poll (Config.PollInterval
// stays the upper bound when notifications are lost). The channel is
// closed when ctx ends. The Scheduler finds it by type assertion and
// listens from Start to Stop; store/postgres implements it with
// LISTEN/NOTIFY.
type Notifier interface {
	Notify(ctx context.Context) (<-chan struct{}, error)
}

// WriteNotifier is an optional capability of a [Notifier] store:
// notifications that name what was written. NotifyWrites is Notify whose
// channel receives, for each notification, the jobs it stands for, so
// that a Scheduler holding claims ahead of their due instants (see
// "Claiming ahead" in the package documentation) gives back only those of
// the jobs written, rather than all it holds. A notification that cannot
// name its jobs (too many, or a write in a host's transaction) stands for
// every job: one Written with both names empty. The channel is closed
// when ctx ends. The Scheduler prefers it to Notify when the store has
// both; store/postgres has both.
type WriteNotifier interface {
	NotifyWrites(ctx context.Context) (<-chan []Written, error)
}

// Written names what a notification of a [WriteNotifier] stands for: job
// Collection/Name; every job of Collection when Name is empty (a write of
// the collection, a bulk put); every job when both are empty.
type Written struct {
	Collection, Name string
}

// AheadClaimer is an optional capability of a [Store]: claiming jobs
// ahead of their due instants (Config.ClaimAhead), and giving back such a
// claim unrun exactly as the job was before it. The Scheduler finds it by
// type assertion and claims ahead only over a store that has it; over
// another store (a user's that predates it) it claims each job once it is
// due, whatever ClaimAhead says. The memory, SQLite and PostgreSQL stores
// have it; storetest.Run checks it when the store has it. A type that
// wraps a store by embedding it and changes its ClaimDue must change
// ClaimDueBy too (or not embed it), as the Scheduler calls ClaimDueBy
// instead when it claims ahead.
type AheadClaimer interface {
	// ClaimDueBy is ClaimDue with a due horizon apart from the lease
	// clock: it leases up to c.Limit jobs whose Schedule.DueAt is set and
	// not after c.DueBy, in Enabled collections, that have no lease or
	// whose lease has expired at c.Now (LeaseUntil not after c.Now), and
	// returns them earliest first by the later of DueAt and the expired
	// lease's end (ties in any order). A lease ending after c.Now is
	// never taken, however soon it ends. Each returned job has
	// LeaseOwner c.Owner, LeaseUntil c.LeaseUntil, a Version one higher
	// than before, and PreviousLeaseOwner and PreviousLeaseUntil set to
	// the lease it had before the claim (empty and zero when it had
	// none). ClaimDue(ctx, now, owner, leaseUntil, limit) is ClaimDueBy
	// with DueBy = Now. c.DueBy before c.Now, or c.LeaseUntil not after
	// c.DueBy, is an error; c.Limit < 1 claims nothing. The records are
	// the caller's as ClaimDue's are.
	ClaimDueBy(ctx context.Context, c ClaimRequest) ([]*JobRecord, error)

	// GiveBack gives back claims that owner holds and did not run: for each
	// record (as ClaimDueBy returned it; only its Collection, Name, Created,
	// Incarnation, Version, LeaseUntil, PreviousLeaseOwner and
	// PreviousLeaseUntil are read), it puts the job's
	// lease back as it was before the claim, so that the next claim of the
	// job reports the same previous owner (a takeover stays one) and cannot
	// take the lease before its end. Nothing else of the job changes, and
	// neither does its Version: a write that came after the claim (PutJob
	// keeps the lease) stays. Each job is given back in an atomic step, and
	// only while owner holds its lease (expired or not, as in Record) as
	// the claim left it: with the record's LeaseUntil, or its Version (a
	// write since changes the Version, an extension the lease's end, a
	// later claim both). A claim whose lease lapsed and that owner then
	// claimed again is not given back, as that would release the later
	// claim, which owner may be running; nor is one both written and
	// extended since, which then keeps its lease until it ends. The
	// result has one error per record, nil when it was given back:
	// ErrLeaseLost when owner does not hold the lease, or holds it by a
	// later claim (nothing changes),
	// ErrNotFound when the job is gone (also when it was deleted and created
	// again since the claim: its Incarnation or Created differs, whoever
	// holds its lease).
	//
	// A claim not given back keeps its lease until it expires, which does
	// no harm but a late start; a caller held for as long as another
	// transaction holds a job's lock would do more. So a store whose
	// GiveBack can wait for such a lock may bound a call whose ctx has no
	// deadline, failing it with the lock's error: store/postgres stops
	// trying again a second after the call began, and never cuts short a
	// try that waits for no lock. store/memory waits for nothing but its
	// own mutex, and store/sqlite for its turn at its one writer, as long
	// as ctx lets it. The Scheduler always passes a deadline: a tenth of
	// Config.LeaseDuration.
	GiveBack(ctx context.Context, owner string, claims []*JobRecord) []error
}

// ClaimRequest is what [AheadClaimer.ClaimDueBy] claims: up to Limit
// jobs due by DueBy whose leases expired at Now, for Owner until
// LeaseUntil.
type ClaimRequest struct {
	Now, DueBy time.Time
	Owner      string
	LeaseUntil time.Time
	Limit      int
}

// StatsReader is an optional capability of a [Store]: aggregate reads for
// dashboards and metrics, each answered in one store call however many
// jobs and history entries the store holds. The Scheduler finds it by type
// assertion: [Scheduler.JobCounts], [Scheduler.DueCount],
// [Scheduler.HistoryCounts] and [Scheduler.RecentHistory] use it when the
// store has it, and otherwise compute the same answers from the Store
// methods, with a call per collection and per job. The memory, SQLite and
// PostgreSQL stores have it; storetest.RunStats checks an implementation.
//
// Each method reads one consistent state of the store, as a single read
// transaction would see it. Like the other methods, none reads a clock.
type StatsReader interface {
	// CountJobs returns how many jobs each collection holds in each
	// state: one JobCount per collection and state with at least one
	// job, ordered by collection name, then by state, both compared
	// bytewise. A collection without jobs does not appear. A metrics
	// scraper may call it every few seconds, so it should not decode job
	// records (keep counts, or count over an index).
	CountJobs(ctx context.Context) ([]JobCount, error)

	// CountDue returns how many jobs ClaimDue would claim at now if
	// there were no limit: jobs whose Schedule.DueAt is set and not
	// after now, whose collection is Enabled, and that have no lease or
	// whose lease has expired (LeaseUntil not after now). It claims
	// nothing.
	CountDue(ctx context.Context, now time.Time) (int, error)

	// CountHistory counts the history entries whose EndTime lies in
	// [from, to), in buckets of width step: bucket k covers
	// [from+k*step, from+(k+1)*step), the last one cut at to. It returns
	// one HistoryCount per bucket, action name and status with at least
	// one entry, ordered by Start, then ActionName, then Status (names
	// compared bytewise); Start is in UTC. Entries with a zero EndTime
	// are never counted.
	//
	// The caller makes sure that step is positive, from is before to,
	// both lie within the years 1678 to 2262 (what UnixNano can
	// represent), and to is less than 292 years after from, as
	// [Scheduler.HistoryCounts] does; a store may return an error or a
	// meaningless answer otherwise, but must not panic.
	//
	// collections, when not nil, restricts the count to the history of
	// jobs in those collections (an empty non-nil list counts nothing).
	CountHistory(ctx context.Context, from, to time.Time, step time.Duration, collections []string) ([]HistoryCount, error)

	// RecentHistory returns the history entries of all jobs newest first
	// (the reverse of the order in which they were recorded, across
	// jobs), those that f keeps (its Status, Faulted and Collections),
	// skipping f.Skip, at most f.Top entries (0: no limit, as in
	// ListHistory; callers that show pages pass a Top).
	RecentHistory(ctx context.Context, f HistoryFilter) ([]HistoryEntry, error)
}

// JobCount is one element of [StatsReader.CountJobs]: the number of jobs
// of a collection in a state.
type JobCount struct {
	// Collection is the collection's name.
	Collection string
	// State is the jobs' state.
	State JobState
	// Jobs is the number of jobs, at least 1.
	Jobs int
}

// HistoryCount is one element of [StatsReader.CountHistory]: the number of
// history entries of one action name and status whose EndTime lies in one
// bucket of time.
type HistoryCount struct {
	// Start is the start of the bucket, in UTC; the bucket ends one step
	// later (or at the end of the counted range, if that comes first).
	Start time.Time
	// ActionName is MainAction or ErrorAction.
	ActionName ActionName
	// Status is Completed, Failed or Postponed.
	Status ExecutionStatus
	// Entries is the number of entries, at least 1.
	Entries int
	// Retries is how many of them are retries (RetryCount above 0); the
	// others are the first attempts of their occurrences (or Postponed
	// entries), so Entries-Retries of MainAction counts occurrences.
	Retries int
	// Faulted is how many of them faulted their occurrence
	// ([HistoryEntry.Faulted]).
	Faulted int
}

// Transactional is an optional capability of a [Store] in a database the
// host writes to as well: reading and writing jobs inside a transaction of
// the host's, so that a job is created, changed or deleted exactly when the
// host's own rows are, and not at all when the host rolls back.
// [Scheduler.PutJobTx], PatchJobTx, DeleteJobTx, PutCollectionTx and
// PutCalendarTx find it by type assertion. store/postgres takes a pgx.Tx and store/sqlite a *sql.Tx
// (on the *sql.DB the store was made over with sqlite.New).
type Transactional interface {
	// InTx returns the store's job and collection methods inside tx. It fails when tx
	// is not a transaction of the kind the store takes, or cannot be
	// used (a SQLite transaction that cannot take the write lock).
	// Writes through the view take the same locks as the store's own,
	// so that a create counts against the collection's MaxJobCount
	// exactly when it commits: on the SQL stores each job holds one of
	// its collection's places (0 to MaxJobCount()-1, unique), so a
	// concurrent create in the same collection waits for the host's
	// transaction only when both take the same place, and a change of
	// the collection's quota waits for it.
	InTx(ctx context.Context, tx any) (TxStore, error)
}

// TxStore is the part of a [Store] that writes of jobs go through; a
// [Transactional] store returns one that works inside a host's
// transaction. Its methods behave as the Store's of the same names, inside
// the transaction: what they write is seen by others only once the host
// commits, and forgotten if it rolls back.
type TxStore interface {
	GetCollection(ctx context.Context, name string) (*CollectionRecord, error)
	GetJob(ctx context.Context, collection, name string) (*JobRecord, error)
	PutJob(ctx context.Context, j *JobRecord) error
	DeleteJob(ctx context.Context, collection, name, etag string) error
}

// CollectionTxStore is an optional capability of the [TxStore] that a
// [Transactional] store returns: writing collections inside the host's
// transaction, for [Scheduler.PutCollectionTx] and PutCalendarTx, which
// find it by type assertion and refuse with an error matching
// [errors.ErrUnsupported] when it is missing. The SQLite and PostgreSQL
// stores' TxStores have it. Its PutCollection behaves as the Store's,
// inside the transaction; one that replaces a collection keeps it from
// changing in other transactions, and keeps jobs from being created in it,
// until the host's transaction ends.
type CollectionTxStore interface {
	TxStore
	PutCollection(ctx context.Context, c *CollectionRecord) error
}

// PutReader is an optional capability of a [Store] or of the [TxStore]
// that a [Transactional] store returns: reading what a put of a job reads,
// its collection and the job, in one step instead of GetCollection and
// GetJob. [Scheduler.PutJob] and its kin find it by type assertion; the
// SQLite and PostgreSQL stores (and their TxStores) have it, one
// statement, and storetest.Run checks that it answers as GetCollection
// and GetJob do.
type PutReader interface {
	// ReadForPut returns the record of collection and the record of its
	// job name, nil when the collection holds no such job; ErrNotFound
	// naming the collection when it does not exist. Like GetJob's, the
	// records are the caller's.
	ReadForPut(ctx context.Context, collection, name string) (*CollectionRecord, *JobRecord, error)
}

// JobCreator is an optional capability of a [Store] (and of the
// [TxStore] of a [Transactional] store): creating a job over the record of
// its collection that the caller read earlier, without reading it again.
// A put of a job that the Scheduler has not been asked to check against an
// ETag (PutJobOptions.IfMatch) is first tried as a create over the record
// of its collection that the Scheduler's last put into that collection
// read; when that fails, it reads the collection and the job as usual and
// puts again. That makes a put of a new job one step instead of a read and
// a write, and a replace one step more. The SQLite and PostgreSQL stores
// and their TxStores have it; storetest.Run checks it.
type JobCreator interface {
	// CreateJob does what PutJob does for j, a new job (Version 0) of
	// collection col.Name, provided col is still the collection's stored
	// record (the same Version and ETag). Otherwise, and when the job
	// exists, the collection is gone, or the store finds no free place
	// under col's quota at once, it writes nothing and fails with
	// ErrConflict: the caller then reads what is stored and puts as usual.
	CreateJob(ctx context.Context, col *CollectionRecord, j *JobRecord) error
}

// BulkPutter is an optional capability of a [Store]: putting many jobs of
// one collection in one atomic step, which spares a store a transaction,
// a lock and a round trip per job. [Scheduler.PutJobs] finds it by type
// assertion; the memory, SQLite and PostgreSQL stores have it, and
// storetest.RunBulkPutter checks an implementation.
type BulkPutter interface {
	// GetJobs returns the jobs of collection with the given names, in
	// the order of names: nil where there is no such job (also when the
	// collection does not exist). Like GetJob's, the records are the
	// caller's.
	GetJobs(ctx context.Context, collection string, names []string) ([]*JobRecord, error)

	// PutJobs does what PutJob does for each of jobs, all of collection
	// and with distinct names, in one atomic step: all are written, or
	// none is. Each element creates (Version 0) or replaces (Version
	// equal to the stored one) its job, as in PutJob. It fails, writing
	// nothing, with ErrNotFound when the collection, or a job being
	// replaced, does not exist; with ErrConflict when a version differs
	// or a created job exists; and with ErrQuotaExceeded when the
	// collection cannot take the jobs created (the jobs it holds plus
	// those created would exceed its MaxJobCount()), counted once for
	// the batch and atomically with the writes. On success each stored
	// Version is one higher than the element's. An empty batch writes
	// nothing and returns nil.
	PutJobs(ctx context.Context, collection string, jobs []*JobRecord) error
}
