package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"

	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/recurrence"
)

// maxWriteAttempts bounds the retries of a write that lost a race with the
// run loop or another writer.
const maxWriteAttempts = 10

// PutJobOptions are the options of [Scheduler.PutJob].
type PutJobOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the job exists with this ETag.
	IfMatch string
	// IfNoneMatch, when "*", makes the put create the job only: it fails
	// with ErrPreconditionFailed when the job exists, checked in the same
	// store write that creates it. Empty puts whether the job exists or
	// not; any other value fails with ErrInvalid.
	IfNoneMatch string
	// Tags are the job's labels ([JobRecord.Tags]), which the put
	// replaces as ARM's PUT does: nil leaves the job without tags. At
	// most 15, names of 1 to 512 characters, values of at most 256
	// (jobdef.ValidateTags); problems are reported at "tags" and
	// "tags.NAME". PutJobJSON takes the tags of its envelope instead,
	// when it has some.
	Tags map[string]string
}

// PatchJobOptions are the options of [Scheduler.PatchJob].
type PatchJobOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the job's ETag is this.
	IfMatch string
}

// ListJobsOptions are the options of [Scheduler.ListJobs].
type ListJobsOptions struct {
	// State keeps only jobs in this state; empty keeps all.
	State JobState
	// Tag keeps only jobs with this tag ([TagFilter]); the zero
	// TagFilter keeps all. It is the one filter on labels; to search
	// every collection, list each (ListCollections) with the same Tag.
	Tag TagFilter
	// Health keeps only jobs of this health; empty keeps all. The
	// store holds no health: the Scheduler reads the collection's jobs a
	// page at a time until it has found the page asked for.
	Health JobHealth
	// OrderBy is the order of the list ([JobOrder]): by name when
	// empty, else by next execution time, last execution time or
	// failure count, ties by name, jobs without a time after those with
	// one. The store orders the jobs, so that a page costs one read
	// whatever the collection's size; except by next execution time in
	// a collection with exclusion calendars, where the order is that of
	// the next execution times the list shows (a job that names a
	// calendar shows its next run where the calendar places it now,
	// which may differ from the instant its record planned and the store
	// orders by): each page then reads all the collection's jobs (of
	// State and Tag) and sorts them. In a collection that is not
	// Enabled no job shows a next execution time: by it, the jobs are
	// in name order.
	OrderBy JobOrder
	// Descending lists in the exact reverse of OrderBy's order (ties by
	// name descending, jobs without a time first).
	Descending bool
	// Top is the most jobs returned, 1 to 100; 0 means 100.
	Top int
	// Skip is the number of jobs left out first (0-based index of the
	// first job returned).
	Skip int
}

// ListHistoryOptions are the options of [Scheduler.ListHistory] and
// [Scheduler.RecentHistory].
type ListHistoryOptions struct {
	// Status keeps only entries with this status; empty keeps all.
	Status ExecutionStatus
	// Faulted keeps only entries that faulted their occurrence
	// ([HistoryEntry.Faulted]); false keeps all.
	Faulted bool
	// NotFaulted keeps only entries that did not fault their occurrence
	// (HistoryEntry.Faulted false: every Completed, Postponed and Skipped
	// entry, and the Failed entries of attempts that a retry or a later
	// occurrence followed); false keeps all. Faulted and NotFaulted
	// together are refused (ErrInvalid at "notFaulted").
	NotFaulted bool
	// Collections keeps only entries of jobs in these collections; nil
	// keeps all, an empty non-nil list keeps none. A dashboard limited to
	// some tenants passes their collections.
	Collections []string
	// Top is the most entries returned, 1 to 100; 0 means 100.
	Top int
	// Skip is the number of entries left out first.
	Skip int
}

// MaxPageSize is the largest Top of a list call.
const MaxPageSize = 100

// checkJobKey validates a collection and job name pair.
func checkJobKey(collection, name string) error {
	return errors.Join(checkName("collection", collection), checkName("job", name))
}

// parseOptions returns the options jobs are checked with at now: each
// action's type must have an executor in Config.Executors (or be Http or
// Https), looked up as executors are, so a type registered after New is
// accepted too; executors that are action.Validators check their actions.
func (s *Scheduler) parseOptions(now time.Time) ParseOptions {
	opts := s.parse
	opts.Now = now
	return opts
}

// ParseOptions returns the options this Scheduler checks definitions with
// when they are put, at the current time: its executors (their types
// besides the built-in ones also in ActionTypes), executor checks and
// MinRetryInterval. A caller that checks a job as if created at another
// instant sets Created (and Now) on the copy; [Scheduler.ParseJob] is
// ParseJob with these options.
func (s *Scheduler) ParseOptions() ParseOptions {
	opts := s.parseOptions(time.Now())
	if reg := s.cfg.Executors; reg != nil {
		for _, t := range reg.Types() {
			if !t.Builtin() {
				opts.ActionTypes = append(opts.ActionTypes, t)
			}
		}
		slices.Sort(opts.ActionTypes)
	}
	return opts
}

// ParseJob parses and validates a job definition as [ParseJob] does, with
// the rules this Scheduler applies when the job is put: the action types of
// Config.Executors besides the built-in ones (each action's type must have
// an executor, and executors that are an [action.Validator], such as an
// [action.Handler], check their payload), Config.MinRetryInterval, and a
// startTime at most 18 months from now. It is what the REST API parses
// job bodies with; the package-level ParseJob checks a definition on its
// own, without a Scheduler.
func (s *Scheduler) ParseJob(data []byte) (*Job, error) {
	opts := s.parseOptions(time.Now())
	return ParseJob(data, &opts)
}

// checkDefinition validates def, job name of collection, against the
// scheduler's rules for a job created (or replaced) at created and returns
// its canonical form (see [jobdef.Canonical]), a copy without state and
// status, with its client certificates described and its secrets plain
// (sealed ones opened, judged against stored, the definition the store
// holds for the job, nil when none: see openGiven): pass it through
// sealDefinition before storing it.
//
// parsed says that def is what ParseJob returned for options
// s.parseOptions(now) with Created set to created, and that nobody else
// has seen it: ParseJob validated that very job with these rules and gave
// it in canonical form, so it is neither validated again nor copied,
// unless opening sealed secrets changed it.
func (s *Scheduler) checkDefinition(def *Job, collection, name string, now, created time.Time, parsed bool, stored *Job) (*Job, error) {
	if def == nil {
		return nil, &ValidationError{Path: "job", Reason: "is required"}
	}
	opened, err := s.openGiven(def, collection, name, stored)
	if err != nil {
		return nil, err
	}
	var job *Job
	if parsed && opened == def {
		job = new(*opened) // def keeps its state, for the caller
	} else {
		opts := s.parseOptions(now)
		opts.Created = created
		if err := opened.Validate(&opts); err != nil {
			return nil, err
		}
		if job, err = jobdef.Canonical(opened, &opts); err != nil {
			return nil, err
		}
	}
	if r := job.Recurrence; r != nil && r.Cron != "" {
		// H forms of a spec decide members per job: store the job's own.
		x, err := r.ExpandCronJob(collection, name)
		if err != nil {
			return nil, err
		}
		job.Recurrence = x
	}
	describeCertificates(job)
	job.State, job.Status = "", nil
	return job, nil
}

// stateOf returns the state a definition asks for: Enabled unless it says
// Disabled.
func stateOf(def *Job) JobState {
	if def.State == JobDisabled {
		return JobDisabled
	}
	return JobEnabled
}

// checkRecurrenceQuota reports whether t is too frequent for col.
func checkRecurrenceQuota(col *CollectionRecord, name string, t *Timing) error {
	limit := col.Definition.RecurrenceLimit(time.Now())
	if r := t.Rule(); r == nil || limit.Period() <= r.Resolution() {
		// One occurrence, or occurrences that lie whole units of the
		// rule's resolution apart (a minute unless it has seconds): none
		// is closer to the next than the limit.
		return nil
	}
	gap, ok := shortestGap(t)
	if !ok || gap >= limit.Period() {
		return nil
	}
	return &QuotaError{Collection: col.Name, Quota: "maxRecurrence", Limit: limit.String(),
		Reason: fmt.Sprintf("job %q can run %s apart", name, gap)}
}

// quotaSample is the number of occurrences expanded to find the shortest
// gap of a schedule.
const quotaSample = 200

// shortestGap returns the shortest time between consecutive occurrences
// among the first quotaSample; ok is false when there are fewer than two.
func shortestGap(t *Timing) (gap time.Duration, ok bool) {
	var prev time.Time
	n := 0
	for at := range t.Occurrences() {
		if r := t.Rule(); r != nil {
			// How often a job recurs is its schedule's business, not
			// its window's: two spread occurrences can lie closer.
			at = r.Scheduled(at)
		}
		if n > 0 {
			if d := at.Sub(prev); !ok || d < gap {
				gap, ok = d, true
			}
		}
		prev = at
		n++
		if n >= quotaSample {
			break
		}
	}
	return gap, ok
}

// checkIfNoneMatch refuses an IfNoneMatch option other than "" and "*".
func checkIfNoneMatch(v string) error {
	if v != "" && v != "*" {
		return &ValidationError{Path: "IfNoneMatch", Value: strconv.Quote(v), Reason: `must be empty or "*"`}
	}
	return nil
}

// preconditions checks IfMatch against the stored ETag.
func preconditions(kind, name, ifMatch, etag string, exists bool) error {
	if ifMatch == "" || ifMatch == "*" && exists {
		return nil
	}
	if !exists {
		return fmt.Errorf("%s %q does not exist: %w", kind, name, ErrPreconditionFailed)
	}
	if ifMatch != etag {
		return fmt.Errorf("%s %q has ETag %q, not %q: %w", kind, name, etag, ifMatch, ErrPreconditionFailed)
	}
	return nil
}

// PutJob creates the job, or replaces its definition. The collection must
// exist (ErrNotFound naming it). Creating a job in a full collection, or a
// job more frequent than the collection's maxRecurrence, fails with
// ErrQuotaExceeded. An invalid definition fails with ErrInvalid (joined
// [*ValidationError] values). A put of the definition and state the job
// has (an ARM template deployed again, a host that puts its jobs at each
// start) leaves it where it is in its recurrence: its anchor, its next
// occurrence, an occurrence in progress and its counters stay, nothing
// runs at once, and only its tags (the put's) and its ETag change; when
// its tags are the job's too, nothing is written and the job is returned
// as stored, with its ETag (the same representation keeps its ETag, as
// an HTTP PUT of it would). A put
// that changes either replaces the job, which is scheduled as if created
// now (an attempt in flight still records its outcome, but retries of its
// occurrence are dropped, and the occurrences that come due before it
// ends are handled by the overlap policy, as due while it is in
// progress); its status counters and history are kept, and a
// job in a final state becomes Enabled (or Disabled) again. opts may be
// nil. It returns the stored record as GetJob would right after (with its
// health, and a resumeTime in UTC), whose CreatedByPut is true when this
// put created the job (its Version is then 1; a put that writes nothing
// may return a job at Version 1 that another put created). A recurrence
// given as a cron spec is stored with the fields the spec stands for
// filled in (see [recurrence.Recurrence.ExpandCron]).
func (s *Scheduler) PutJob(ctx context.Context, collection, name string, def *Job, opts *PutJobOptions) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	r, err := s.putJob(ctx, s.store, collection, name, def, opts)
	if err != nil {
		return nil, err
	}
	s.wrote(collection, name)
	return s.withHealth(r, time.Now()), nil // as GetJob returns it
}

// PutJobJSON parses data, a job definition as JSON (a job's properties
// object, or the ARM envelope around it), with the rules of
// [Scheduler.ParseJob], and puts the job as [Scheduler.PutJob] does, at one
// instant and validating the definition once. The REST API puts jobs with
// it. Every problem with the definition names its path in data: under
// "properties" when data is the envelope. opts may be nil.
func (s *Scheduler) PutJobJSON(ctx context.Context, collection, name string, data []byte, opts *PutJobOptions) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := checkJobKey(collection, name); err != nil {
		return nil, err
	}
	now := time.Now()
	popts := s.parseOptions(now)
	popts.Created = anchorAt(now)
	res, err := jobdef.ParseJobResource(data, &popts)
	if err != nil {
		return nil, err
	}
	if res.Tags != nil {
		o := PutJobOptions{}
		if opts != nil {
			o = *opts
		}
		o.Tags, opts = res.Tags, &o
	}
	r, err := s.putJobAt(ctx, s.store, collection, name, res.Job, opts, now, true)
	if err != nil {
		return nil, under(res.At, err)
	}
	s.wrote(collection, name)
	return s.withHealth(r, time.Now()), nil // as GetJob returns it
}

// under returns err with the path of each of its problems with a job
// definition (other than the definition as a whole, "job", and its tags)
// under at, and the paths its reason names with it
// ([ValidationError.Under]).
func under(at string, err error) error {
	if at == "" {
		return err
	}
	for _, e := range ValidationErrors(err) {
		if e.Path != "job" && !isTagPath(e.Path) {
			e.Under(at)
		}
	}
	return err
}

// putJob is PutJob over st.
func (s *Scheduler) putJob(ctx context.Context, st TxStore, collection, name string, def *Job, opts *PutJobOptions) (*JobRecord, error) {
	return s.putJobAt(ctx, st, collection, name, def, opts, time.Now(), false)
}

// putJobAt is putJob at now; parsed is as for checkDefinition.
func (s *Scheduler) putJobAt(ctx context.Context, st TxStore, collection, name string, def *Job, opts *PutJobOptions, now time.Time, parsed bool) (*JobRecord, error) {
	if err := checkJobKey(collection, name); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &PutJobOptions{}
	}
	if err := jobdef.ValidateTags(opts.Tags); err != nil {
		return nil, err
	}
	if err := checkIfNoneMatch(opts.IfNoneMatch); err != nil {
		return nil, err
	}
	judged := def != nil && anySealed(jobSecrets(def))
	for range maxWriteAttempts {
		var stored *JobRecord
		if judged {
			// A sealed secret is kept from the job's definition: it is
			// sent only where that definition sends it, so the put is
			// judged against the job stored, and writes over that
			// version only.
			old, err := st.GetJob(ctx, collection, name)
			switch {
			case err == nil:
				stored = old
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		job, err := s.checkDefinition(def, collection, name, now, anchorAt(now), parsed, jobOf(stored))
		if err != nil {
			return nil, err
		}
		if job, err = s.sealDefinition(job, collection, name); err != nil {
			return nil, err
		}
		t, err := job.Timing(collection, name, anchorAt(now))
		if err != nil {
			return nil, err
		}
		cond := putCond{ifMatch: opts.IfMatch, createOnly: opts.IfNoneMatch == "*", judged: judged, over: etagOf(stored)}
		r, err := s.writeJob(ctx, st, collection, name, job, opts.Tags, stateOf(def), t, now, cond)
		if errors.Is(err, errJudgedOther) {
			continue // judge it again, against the job now stored
		}
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	return nil, fmt.Errorf("put job %q: too many concurrent writes: %w", name, ErrConflict)
}

// jobOf returns r's definition; nil for a nil r.
func jobOf(r *JobRecord) *Job {
	if r == nil {
		return nil
	}
	return r.Job
}

// errJudgedOther is what a put whose sealed secrets were judged against
// one version of the job (putCond.judged) meets when another is stored:
// its caller judges the put again.
var errJudgedOther = errors.New("the job changed since the put's secrets were judged against it")

// putCond is what a put of a job requires of the job stored.
type putCond struct {
	// ifMatch is as PutJobOptions.IfMatch.
	ifMatch string
	// createOnly is PutJobOptions.IfNoneMatch "*": the job must not
	// exist.
	createOnly bool
	// judged says that the put's sealed secrets were judged against the
	// job stored with ETag over ("": none) (see openGiven): the put
	// writes over that version only, so that the decision and its
	// message are those of the job that the write replaces, which its
	// IfMatch checks. Another one fails with errJudgedOther.
	judged bool
	over   string
}

// check returns ErrPreconditionFailed when old, the job stored (nil: none),
// does not meet c.
func (c putCond) check(name string, old *JobRecord) error {
	if c.createOnly && old != nil {
		return fmt.Errorf("job %q exists: %w", name, ErrPreconditionFailed)
	}
	if err := preconditions("job", name, c.ifMatch, etagOf(old), old != nil); err != nil {
		return err
	}
	if c.judged && etagOf(old) != c.over {
		return errJudgedOther
	}
	return nil
}

// writeJob writes the checked and sealed definition job, with checked
// tags and timing t from anchorAt(now), as job name of collection over
// what st holds, reading it again when another writer got there first.
func (s *Scheduler) writeJob(ctx context.Context, st TxStore, collection, name string, job *Job, tags map[string]string, state JobState, t *Timing, now time.Time, cond putCond) (*JobRecord, error) {
	if r, err := s.createOver(ctx, st, collection, name, job, tags, state, t, now, cond); r != nil || err != nil {
		return r, err
	}
	for range maxWriteAttempts {
		col, old, err := readForPut(ctx, st, collection, name)
		if err != nil {
			return nil, err
		}
		if _, ok := st.(JobCreator); ok {
			// The next put tries a create without reading only after a
			// create: after a replacement it would likely fail first.
			if old == nil {
				s.putCols.Store(collection, col)
			} else {
				s.putCols.Delete(collection)
			}
		}
		if err := cond.check(name, old); err != nil {
			return nil, err
		}
		r, err := s.storeJob(ctx, st, col, name, job, tags, state, t, now, old)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil || r == old {
			return r, err // r == old: nothing to write
		}
		if err := s.recheckPut(ctx, st, old, r, col.Definition.RecurrenceLimit(time.Now())); err != nil {
			return nil, err
		}
		return r, nil
	}
	return nil, fmt.Errorf("put job %q: too many concurrent writes: %w", name, ErrConflict)
}

// createOver is writeJob's first try when st is a [JobCreator] and no
// ETag is to be checked: it creates the job over the record of its
// collection that the last put into it read (putCols), without reading
// first. It returns nil and nil when it did not try, when that record
// finds fault with the job (a newer one may not), or when the create
// fails with ErrConflict (the job exists, the collection was written since
// that read or is gone, or no place was free at once): writeJob then reads
// both and puts as usual.
func (s *Scheduler) createOver(ctx context.Context, st TxStore, collection, name string, job *Job, tags map[string]string, state JobState, t *Timing, now time.Time, cond putCond) (*JobRecord, error) {
	jc, ok := st.(JobCreator)
	if !ok || cond.ifMatch != "" || cond.judged && cond.over != "" {
		return nil, nil
	}
	v, ok := s.putCols.Load(collection)
	if !ok {
		return nil, nil
	}
	col := v.(*CollectionRecord)
	r, err := s.newRecord(col, name, job, tags, state, t, now, nil)
	if err != nil {
		// Judged by a record that may be old: read the one stored.
		return nil, nil
	}
	if err = jc.CreateJob(ctx, col, r); errors.Is(err, ErrConflict) {
		s.putCols.CompareAndDelete(collection, col)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.Version++
	r.CreatedByPut = true
	if err := s.recheckPut(ctx, st, nil, r, col.Definition.RecurrenceLimit(time.Now())); err != nil {
		return nil, err
	}
	return r, nil
}

// recheckPut is the second half of the rules that no job names a deleted
// calendar (see [Scheduler.DeleteCalendar]), nor one that leaves it no
// occurrence (see [Scheduler.PutCalendar]), nor recurs more often than
// its collection allows (see tighten): after r was written through st
// over old (nil: r created the job), having been checked against the
// maxRecurrence limit (the zero MaxRecurrence: unknown), it reads r's
// collection again, and when the calendar r names is marked for deletion
// or gone, or it or the version replacing it leaves r no occurrence (see
// calendarFault), or r recurs more often than the collection now allows
// (JobCollection.RecurrenceLimit), or the collection cannot be read, it
// undoes the write and returns the error.
func (s *Scheduler) recheckPut(ctx context.Context, st TxStore, old, r *JobRecord, limit MaxRecurrence) error {
	if !needsRecheck(old, r) {
		return nil
	}
	col, err := st.GetCollection(ctx, r.Collection)
	if err == nil {
		if err = s.calendarFault(col, r); err == nil {
			if err = s.quotaFault(col, r, limit); err == nil {
				return nil
			}
		}
	} else {
		err = fmt.Errorf("put job %q: read its collection again: %w", r.Name, err)
	}
	s.undoPut(ctx, st, old, r)
	return err
}

// needsRecheck reports whether r, written over old (nil: created), can
// break a rule that recheckPut checks: only a job with a recurrence can
// name a calendar or recur too often, and a replacement that keeps its
// recurrence, its startTime and no calendar is judged as old was (a
// stricter collection write lists old, which was in place before r's read),
// unless old is in a final state: that write does not look at a Completed
// or Faulted job, so a put bringing one back is checked again.
// Skipping the read keeps the puts of one-time jobs, and of jobs whose
// schedule a put leaves alone, at one collection read.
func needsRecheck(old, r *JobRecord) bool {
	if r.Job.Recurrence == nil {
		return false
	}
	if r.Job.Recurrence.Ext().Calendar != "" || old == nil || old.State.Final() {
		return true
	}
	return timingChanged(old.Job, r.Job)
}

// quotaFault returns the error of r, a job just written after being
// checked against the maxRecurrence limit, when it recurs more often than
// col allows; nil when col allows no less than limit did.
func (s *Scheduler) quotaFault(col *CollectionRecord, r *JobRecord, limit MaxRecurrence) error {
	if r.Job.Recurrence == nil || col.Definition.RecurrenceLimit(time.Now()).Period() <= limit.Period() {
		return nil
	}
	t, err := s.timing(r, time.Now())
	if err != nil {
		return nil
	}
	return checkRecurrenceQuota(col, r.Name, t)
}

// readForPut returns what a put of job name in collection reads from st:
// the collection's record and the job's record, nil when there is none;
// in one step when st is a [PutReader].
func readForPut(ctx context.Context, st TxStore, collection, name string) (col *CollectionRecord, old *JobRecord, err error) {
	if pr, ok := st.(PutReader); ok {
		if col, old, err = pr.ReadForPut(ctx, collection, name); err != nil {
			return nil, nil, fmt.Errorf("put job %q: %w", name, err)
		}
		return col, old, nil
	}
	if col, err = st.GetCollection(ctx, collection); err != nil {
		return nil, nil, fmt.Errorf("put job %q: %w", name, err)
	}
	old, err = st.GetJob(ctx, collection, name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	return col, old, nil
}

// anchorAt returns the anchor of a job put at now (see
// [JobSchedule.Anchor]): now truncated to the whole second, so that a job
// without startTime runs on whole seconds.
func anchorAt(now time.Time) time.Time { return now.Truncate(time.Second) }

// storeJob writes the checked definition job, with checked tags and timing
// t (its timing from anchorAt(now)), as job name of collection col, over
// old (nil: create it), and returns the stored record: old itself, not
// written, when the put changes nothing (see newRecord). It fails with
// ErrConflict when another writer changed the job since old was read.
func (s *Scheduler) storeJob(ctx context.Context, st TxStore, col *CollectionRecord, name string, job *Job, tags map[string]string, state JobState, t *Timing, now time.Time, old *JobRecord) (*JobRecord, error) {
	r, err := s.newRecord(col, name, job, tags, state, t, now, old)
	if err != nil || r == old {
		return r, err
	}
	if err := st.PutJob(ctx, r); err != nil {
		return nil, err
	}
	r.Version++
	r.CreatedByPut = old == nil
	return r, nil
}

// newRecord returns the record that a put of the checked definition job,
// with checked tags and timing t, as job name of collection col over old
// (nil: a create) writes at now; an error when t is more frequent than col
// allows. It returns old itself when the put changes nothing: the
// definition and state are old's (see unchanged), and so are the tags.
func (s *Scheduler) newRecord(col *CollectionRecord, name string, job *Job, tags map[string]string, state JobState, t *Timing, now time.Time, old *JobRecord) (*JobRecord, error) {
	if job.Recurrence.Ext().Calendar != "" {
		var err error
		if t, err = s.calendarTiming(col, name, job, t, anchorAt(now)); err != nil {
			return nil, err
		}
	}
	if err := checkRecurrenceQuota(col, name, t); err != nil {
		return nil, err
	}
	if old != nil && s.unchanged(old, job, state) {
		// Nothing the put says changes when or how the job runs: it keeps
		// its place in its recurrence, as Schedule leaves such a job alone.
		if maps.Equal(old.Tags, tags) {
			return old, nil // nor its tags: the same job, with its ETag
		}
		r := old.Clone()
		r.Tags = nil
		if len(tags) > 0 {
			r.Tags = maps.Clone(tags)
		}
		r.ETag, r.Updated = newETag(), now
		return r, nil
	}
	if job.StateReason != "" || job.ResumeTime != nil {
		// keepPause moves the pause out of the stored definition: leave
		// the caller's as it is, for a put retried after a conflict.
		j := *job
		job = &j
	}
	b := new(putBox)
	r := &b.rec
	*r = JobRecord{
		Collection: col.Name, Name: name, Job: job, State: state,
		ETag: newETag(), Created: now, Updated: now,
		Schedule: JobSchedule{Anchor: anchorAt(now), NextOccurrence: t.First()},
	}
	if len(tags) > 0 {
		r.Tags = maps.Clone(tags)
	}
	if old != nil {
		r.Version, r.Created, r.Incarnation, r.Status = old.Version, old.Created, old.Incarnation, old.Status
		r.Schedule.Occurrences = old.Schedule.Occurrences
		r.Schedule.LastFailed, r.Schedule.LastCancelled = old.Schedule.LastFailed, old.Schedule.LastCancelled
		keepRuns(r, old)
		keepBackfills(r, old)
	}
	keepPause(r, job)
	s.machineOver(r, col.Definition.Properties.RunPolicy).settleIn(r, now, &b.next)
	return r, nil
}

// unchanged reports whether a put of the checked definition job, in
// state, over old leaves old as it is: old is in that state (a job in a
// final state put again is not), with the same pause when Disabled, and
// job is the definition of old (see sameDefinition).
func (s *Scheduler) unchanged(old *JobRecord, job *Job, state JobState) bool {
	if old.State != state {
		return false
	}
	if state == JobDisabled {
		var reason string
		var resume time.Time
		if p := old.Schedule.Policy; p != nil {
			reason, resume = p.StateReason, p.ResumeTime
		}
		var want time.Time
		if job.ResumeTime != nil {
			want = *job.ResumeTime
		}
		if reason != job.StateReason || !resume.Equal(want) {
			return false
		}
	}
	return s.sameDefinition(old.Job, job, old.Collection, old.Name)
}

// sameDefinition reports whether a and b, checked definitions of job
// name of collection (their secrets sealed or not), say the same: their
// canonical forms with their secrets open are equal, whatever their state,
// pause and status. One whose secrets do not open is taken as another.
// Both are written into one buffer, kept for the next comparison.
func (s *Scheduler) sameDefinition(a, b *Job, collection, name string) bool {
	if a == b {
		return true
	}
	bp := formBufs.Get().(*[]byte)
	form, err := s.appendForm((*bp)[:0], a, collection, name)
	n := len(form)
	if err == nil {
		form, err = s.appendForm(form, b, collection, name)
	}
	same := err == nil && bytes.Equal(form[:n], form[n:])
	if cap(form) <= maxFormBuf {
		*bp = form
		formBufs.Put(bp)
	}
	return same
}

// formBufs are the buffers of sameDefinition.
var formBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxFormBuf is the largest buffer sameDefinition keeps: two
// definitions of the largest size, MaxJobSize.
const maxFormBuf = 2 * jobdef.MaxJobSize

// appendForm appends to b the canonical form of j, a checked definition
// of job name of collection, with its secrets open, without its state,
// pause and status: what sameDefinition compares. It is the JSON that
// encoding/json writes for it, written by internal/codec, the codec of
// the stores and the management API.
func (s *Scheduler) appendForm(b []byte, j *Job, collection, name string) ([]byte, error) {
	o, err := s.openDefinition(j, collection, name)
	if err != nil {
		return b, err
	}
	c := *o
	c.State, c.StateReason, c.ResumeTime, c.Status = "", "", nil, nil
	return codec.Append(b, &c, true)
}

// keepRuns carries into r, a put's new record over old, the occurrences of
// old that run side by side (OverlapAllowAll) whose attempt is under way,
// each to end with its attempt (Run.Dropped), and the history entries of
// those that ended: their outcomes count, as the outcome of an occurrence
// in progress under the job's lease does when the job is replaced, and
// PolicyState.Ended, so that one older than an occurrence that ended
// changes neither the job's health nor its faults when it ends.
func keepRuns(r, old *JobRecord) {
	p := old.Schedule.Policy
	if p == nil {
		return
	}
	var keep []Run
	for _, ru := range p.Running {
		if ru.Owner != "" {
			ru.Dropped = true
			keep = append(keep, ru)
		}
	}
	if keep != nil || p.Ends != nil || p.Skipping != nil {
		np := r.Schedule.policy()
		np.Running, np.Ends = keep, slices.Clone(p.Ends)
		if p.Skipping != nil {
			// The run of occurrences passed over while a retry waited
			// ends with the occurrence the put drops: its entry is
			// recorded at the next step, as the others that ended.
			np.Ends = append(np.Ends, *p.Skipping)
		}
		if keep != nil {
			np.Ended = p.Ended // an older one that ends later is late still
		}
	}
}

// keepBackfills carries into r, a put's new record over old, the
// occurrences of old that wait to be backfilled (PolicyState.Backfill),
// in order: they were asked for by their expected times, and run under
// the definition put, as they do once the job is Enabled again after a
// pause.
func keepBackfills(r, old *JobRecord) {
	if p := old.Schedule.Policy; p != nil && len(p.Backfill) > 0 {
		r.Schedule.policy().Backfill = slices.Clone(p.Backfill)
	}
}

// calendarTiming returns the timing of job, name in col, anchored at
// anchor (see [JobSchedule.Anchor]), under the exclusion calendar its recurrence names; t is its timing
// without. It fails at recurrence.calendar when col has no such calendar,
// or when the calendar leaves the job no occurrence within
// [recurrence.CalendarHorizon] of its first.
func (s *Scheduler) calendarTiming(col *CollectionRecord, name string, job *Job, t *Timing, anchor time.Time) (*Timing, error) {
	cname := job.Recurrence.Ext().Calendar
	e := col.Definition.Calendars[cname]
	if e == nil {
		return nil, &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(cname),
			Reason: "is not a calendar of the job's collection (PUT the calendar first)"}
	}
	if e.BeingDeleted(time.Now()) {
		return nil, &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(cname),
			Reason: "is being deleted"}
	}
	ct, err := job.TimingUnder(col.Name, name, anchor, s.policies.compile(s, col.Name, cname, e))
	if err != nil {
		return nil, err
	}
	if ct.First().IsZero() && !t.First().IsZero() {
		return nil, &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(cname),
			Reason: "leaves the job no occurrence: it excludes every one within " + horizonWords + " from " + stamp(t.First())}
	}
	if next := e.Pending(time.Now()); next != nil {
		// A replacement is under way (see Scheduler.PutCalendar).
		if excl, err := next.Calendar.CompileStored(); err == nil {
			if nt, err := job.TimingUnder(col.Name, name, anchor, excl); err == nil && nt.First().IsZero() && !t.First().IsZero() {
				return nil, &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(cname),
					Reason: "is being replaced by a version that leaves the job no occurrence: it excludes every one within " + horizonWords + " from " + stamp(t.First())}
			}
		}
	}
	return ct, nil
}

// horizonWords is recurrence.CalendarHorizon in words.
const horizonWords = "732 days"

// putBox holds the record a put returns with the instant its
// Status.NextExecutionTime points to, in one allocation of the size the
// record alone takes.
type putBox struct {
	rec  JobRecord
	next time.Time
}

func etagOf(r *JobRecord) string {
	if r == nil {
		return ""
	}
	return r.ETag
}

// update reads the job from st, applies change, and writes it back,
// retrying when the run loop or another writer got there first. change
// returns the new record or an error; it may be called several times (a
// change that makes a job name a calendar, or changes the recurrence of
// one that names none, is done twice: the first time shows that a copy
// of the record is needed, for recheckPut).
func (s *Scheduler) update(ctx context.Context, st TxStore, collection, name, ifMatch string, change func(r *JobRecord, now time.Time) error) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := checkJobKey(collection, name); err != nil {
		return nil, err
	}
	keep := false // keep a copy of the record whatever it names
	for range maxWriteAttempts {
		r, err := st.GetJob(ctx, collection, name)
		if err != nil {
			return nil, err
		}
		if err := preconditions("job", name, ifMatch, r.ETag, true); err != nil {
			return nil, err
		}
		now := time.Now()
		// The record as it was, for recheckPut to put back: needed only
		// when the job names a calendar or its recurrence changes.
		var prev *JobRecord
		if keep || r.Job.Recurrence.Ext().Calendar != "" {
			prev = r.Clone()
		}
		job := r.Job
		if err := change(r, now); err != nil {
			return nil, err
		}
		if sc := &r.Schedule; sc.RunRequestedInClaim != 0 && sc.RunRequestedInClaim == r.Version {
			// A run requested under the claim that holds the job stays
			// noted so through the write, which changes the Version, not
			// the claim.
			sc.RunRequestedInClaim++
		}
		recheck := r.Job.Recurrence.Ext().Calendar != "" || timingChanged(job, r.Job)
		if prev == nil && recheck {
			// Do it again over a fresh read, keeping a copy.
			keep = true
			continue
		}
		r.Updated = now
		s.machine(r, now).settle(r, now)
		err = st.PutJob(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Version++
		if recheck {
			if err := s.recheckPut(ctx, st, prev, r, MaxRecurrence{}); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	return nil, fmt.Errorf("update job %q: too many concurrent writes: %w", name, ErrConflict)
}

// timingChanged reports whether b, a job's definition after a change,
// may run at other instants than a, the one before it.
func timingChanged(a, b *Job) bool {
	return a != b && (!reflect.DeepEqual(a.Recurrence, b.Recurrence) || !reflect.DeepEqual(a.StartTime, b.StartTime))
}

// PatchJob merges patch into the job's definition and stores the result.
// patch is a JSON merge patch (RFC 7386) of the job definition: fields it
// leaves out keep their values, null removes a field (such as
// "authentication"), comments and trailing commas are allowed, and the ARM
// envelope {"properties": {...}} is accepted (then the paths of the
// problems with the definition start with "properties.", as ParseJob's
// do). A member given twice in one object of the patch, with the same
// name or in another case, is refused at its path (its members are merged
// without regard to case). It may not set "status"
// (read-only) nor a state other than Enabled and Disabled; a job in a final
// state cannot be patched (ErrFinalState). The merged definition is
// validated like PutJob's; the job keeps its anchor and occurrence count,
// and its next occurrence is recomputed from the new definition (the first
// at or after now). A patch that gives recurrence.cron a spec replaces the
// frequency, interval and schedule the job had (and its timeZone, when
// either spec has a CRON_TZ= prefix), so the new spec fills them in; a
// patch that sets cron to null keeps them, so the job runs as before as a
// plain recurrence. opts may be nil. It returns the job as GetJob would
// right after: with its health, and a resumeTime in UTC.
func (s *Scheduler) PatchJob(ctx context.Context, collection, name string, patch []byte, opts *PatchJobOptions) (*JobRecord, error) {
	r, err := s.patchJob(ctx, s.store, collection, name, patch, opts)
	if err != nil {
		return nil, err
	}
	s.wrote(collection, name)
	return s.withHealth(r, time.Now()), nil // as GetJob returns it
}

// patchJob is PatchJob over st.
func (s *Scheduler) patchJob(ctx context.Context, st TxStore, collection, name string, patch []byte, opts *PatchJobOptions) (*JobRecord, error) {
	if opts == nil {
		opts = &PatchJobOptions{}
	}
	p, err := parsePatch(patch, "job")
	if err != nil {
		return nil, err
	}
	// The resource's tags stand beside its properties, or, in a patch
	// without an envelope, beside the definition's members.
	env, at := p, ""
	if props, ok := takeMember(p, "properties"); ok {
		p, at = props.(map[string]any), "properties"
	}
	tags, hasTags := takeMember(env, "tags")
	if len(p) == 0 && hasTags {
		p = nil // tags alone: the definition stays as it is
	}
	tagPatch, err := tagsPatch(tags, hasTags)
	errs := []error{err}
	for _, k := range slices.Sorted(maps.Keys(p)) { // errors in path order
		v := p[k]
		switch {
		case strings.EqualFold(k, "status"):
			errs = append(errs, &ValidationError{Path: "status", Reason: "is read-only and cannot be patched"})
		case strings.EqualFold(k, "state"):
			st, _ := v.(string)
			if v != nil && !strings.EqualFold(st, string(JobEnabled)) && !strings.EqualFold(st, string(JobDisabled)) {
				b, _ := json.Marshal(v)
				errs = append(errs, &ValidationError{Path: "state", Value: string(b), Reason: "cannot be set; a patch may set Enabled or Disabled"})
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, under(at, err)
	}
	r, err := s.update(ctx, st, collection, name, opts.IfMatch, func(r *JobRecord, now time.Time) error {
		if r.State.Final() {
			return fmt.Errorf("patch job %q: it is %s: %w", name, r.State, ErrFinalState)
		}
		if hasTags {
			t, err := patchTags(r.Tags, tagPatch)
			if err != nil {
				return err
			}
			r.Tags, r.ETag = t, newETag()
		}
		if p == nil {
			return nil
		}
		// The patch is merged into the definition with its secrets
		// open, so that the merged one is validated once; a secret the
		// patch leaves out is kept only where, and as, the job used it
		// (see keptMoved). When one does not open, the definition stays
		// sealed: the check opens the secrets kept (see openGiven), and
		// names the one that does not open unless the patch gives it.
		stored := r.Job
		if plain, err := s.openDefinition(r.Job, collection, name); err == nil {
			stored = plain
		}
		rd := *r
		rd.Job = stored
		cur := rd.Definition()
		cur.Status = nil
		base, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(base, &doc); err != nil {
			return err
		}
		dropCronFields(doc, p)
		dropPause(doc, p)
		merged, err := json.Marshal(mergePatch(doc, p))
		if err != nil {
			return err
		}
		// The job keeps its anchor: its periods count from there.
		opts := s.parseOptions(now)
		opts.Created = r.Schedule.Anchor
		def, err := ParseJob(merged, &opts)
		if err != nil {
			return err
		}
		if err := keptMoved(def, stored, p); err != nil {
			return err
		}
		job, err := s.checkDefinition(def, collection, name, now, r.Schedule.Anchor, true, r.Job)
		if err != nil {
			return err
		}
		if job, err = s.sealDefinition(job, collection, name); err != nil {
			return err
		}
		col, err := st.GetCollection(ctx, collection)
		if err != nil {
			return err
		}
		t, err := job.Timing(collection, name, r.Schedule.Anchor)
		if err != nil {
			return err
		}
		if job.Recurrence.Ext().Calendar != "" {
			if t, err = s.calendarTiming(col, name, job, t, r.Schedule.Anchor); err != nil {
				return err
			}
		}
		if err := checkRecurrenceQuota(col, name, t); err != nil {
			return err
		}
		wasDisabled := r.State == JobDisabled
		r.Job, r.State, r.ETag = job, stateOf(def), newETag()
		keepPause(r, job)
		missed := r.Schedule.NextOccurrence
		reschedule(r, t, now, !s.noEntries)
		if wasDisabled && r.State == JobEnabled {
			r.Schedule.enabledAgain(now) // the count of faults and the job's health start over
			if !s.noEntries {
				// Else nothing would record the Skipped entry.
				passedWhileDisabled(r, t, missed, now)
			}
		}
		return nil
	})
	if err != nil {
		return nil, under(at, err)
	}
	return r, nil
}

// passedWhileDisabled leaves in r's schedule the Skipped entry of the
// scheduled occurrences from missed, the job's next occurrence while it was
// Disabled, up to now, which enabling it passed over (the entry is
// recorded by the next step; a second one replaces it). Those from r's
// next occurrence on are not passed over: a one-time job's that passed
// while it was Disabled is missed (see reschedule).
func passedWhileDisabled(r *JobRecord, t *Timing, missed, now time.Time) {
	until := now
	if next := r.Schedule.NextOccurrence; !next.IsZero() && next.Before(until) {
		until = next
	}
	if missed.IsZero() || !missed.Before(until) {
		return
	}
	n, last, _ := span(t, missed, until.Add(-time.Nanosecond), MaxSkippedCounted)
	h := skipped(r, missed, last, n, now, "the job was Disabled, and enabling it started it from now")
	r.Schedule.policy().Passed = &h
}

// keepPause moves the stateReason and resumeTime of job, the definition
// being written as r's, to r's schedule, where they are kept with the
// state (a scheduler clears them when it enables the job again), and
// clears them in job. [JobRecord.Definition] gives them back.
func keepPause(r *JobRecord, job *Job) {
	sc := &r.Schedule
	if sc.Policy != nil {
		sc.Policy.StateReason, sc.Policy.ResumeTime = "", time.Time{}
	}
	if r.State == JobDisabled && (job.StateReason != "" || job.ResumeTime != nil) {
		p := sc.policy()
		p.StateReason = job.StateReason
		if job.ResumeTime != nil {
			p.ResumeTime = job.ResumeTime.UTC() // as stores keep it
		}
	}
	sc.tidy()
	job.StateReason, job.ResumeTime = "", nil
}

// reschedule recomputes the next occurrence after a change of definition
// or state: the first at or after now. Disabling drops the occurrence in
// progress and the one waiting, and those running side by side
// (OverlapAllowAll) that wait for a retry; one whose attempt is under way
// ends with it (Run.Dropped), and its outcome counts. An occurrence
// dropped while it waited for its next attempt (a retry, its errorAction)
// gets a Failed entry that says so when entries says that history is
// kept, as one that CancelRunning cancels before its next attempt does
// (the next step records it, see PolicyState.Ends).
func reschedule(r *JobRecord, t *Timing, now time.Time, entries bool) {
	sc := &r.Schedule
	if r.State == JobDisabled {
		if c := sc.Current; c != nil && c.waitsToTryAgain() && !(r.LeaseOwner != "" && r.LeaseUntil.After(now)) {
			// It waits for its retry or errorAction, and no attempt of
			// it is under way (its job is not leased). One that never
			// ran (waiting for a collection's limit) is dropped without
			// an entry: it did not fail.
			if entries {
				p := sc.policy()
				p.Ends = append(p.Ends, droppedEntry(r, c, now))
			}
			sc.LastFailed, sc.LastCancelled = true, !c.ErrorAction
		}
		sc.Current, sc.Waiting = nil, nil
		if p := sc.Policy; p != nil {
			for _, ru := range p.Running {
				if ru.Owner == "" && ru.waitsToTryAgain() && entries {
					p.Ends = append(p.Ends, droppedEntry(r, &ru.Occurrence, now))
				}
			}
			p.Running = slices.DeleteFunc(p.Running, func(ru Run) bool { return ru.Owner == "" })
			for i := range p.Running {
				p.Running[i].Dropped = true
			}
			sc.tidy()
		}
	}
	sc.NextOccurrence = time.Time{}
	switch c := t.Count(); {
	case r.Job.Recurrence == nil && sc.Counted == 0:
		// A one-time job's occurrence that has not run stays, even when
		// it has passed (while the job was Disabled, or its collection
		// not Enabled): it is missed, and the missed policy decides
		// whether it runs.
		sc.NextOccurrence = t.First()
	case c == 0 || sc.Counted < c:
		sc.NextOccurrence = t.Next(now.Add(-time.Nanosecond))
	}
}

// waitsToTryAgain reports whether o waits for a retry or for its
// errorAction: an attempt of it ran and failed.
func (o *Occurrence) waitsToTryAgain() bool { return o.Retry > 0 || o.ErrorAction }

// droppedEntry is the Failed history entry of occurrence o of r, which
// disabling the job at now dropped before its next attempt.
func droppedEntry(r *JobRecord, o *Occurrence, now time.Time) HistoryEntry {
	h := HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusFailed,
		ExpectedExecutionTime: o.Expected, StartTime: now, EndTime: now, RetryCount: o.Retry, RepeatCount: o.Number,
		ExecutionTag: o.Tag, Backfill: o.Backfill, Manual: o.Manual,
		Message: "dropped before its next attempt: the job was Disabled",
	}
	if o.ErrorAction {
		h.ActionName = ErrorAction
	}
	return h
}

// takeMember removes the member of m whose key equals key ignoring case,
// and returns its value and whether there was one.
func takeMember(m map[string]any, key string) (any, bool) {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			delete(m, k)
			return v, true
		}
	}
	return nil, false
}

// tagsPatch checks the "tags" member of a job's merge patch, given when
// has: null (remove every tag) or an object whose members are strings (set
// the tag) or null (remove it).
func tagsPatch(v any, has bool) (map[string]any, error) {
	if !has || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		b, _ := json.Marshal(v)
		return nil, &ValidationError{Path: "tags", Value: jsonpath.Abbreviate(string(b)), Reason: `is not an object; tags are {"name": "value", ...}`}
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if _, ok := m[k].(string); !ok && m[k] != nil {
			b, _ := json.Marshal(m[k])
			errs = append(errs, &ValidationError{Path: jsonpath.Key("tags", k), Value: jsonpath.Abbreviate(string(b)), Reason: "is not a string (or null, to remove the tag)"})
		}
	}
	return m, errors.Join(errs...)
}

// patchTags returns tags with patch merged in (nil patch: no tags), checked
// by jobdef.ValidateTags; nil when none remain.
func patchTags(tags map[string]string, patch map[string]any) (map[string]string, error) {
	out := make(map[string]string)
	if patch != nil {
		maps.Copy(out, tags)
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v.(string)
		}
	}
	if err := jobdef.ValidateTags(out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// isTagPath reports whether path names a job's tags or one of them.
func isTagPath(path string) bool {
	return path == "tags" || strings.HasPrefix(path, "tags.") || strings.HasPrefix(path, "tags[")
}

// parsePatch reads a JSON merge patch document; the "properties" of a
// job's ARM envelope must be an object.
func parsePatch(data []byte, what string) (map[string]any, error) {
	std, err := jsonc.Standardize(data)
	if err != nil {
		return nil, &ValidationError{Path: what, Reason: "patch is not JSON: " + err.Error()}
	}
	var p map[string]any
	if err := json.Unmarshal(std, &p); err != nil || p == nil {
		return nil, &ValidationError{Path: what, Reason: "patch is not a JSON object"}
	}
	if err := repeatedMembers(std); err != nil {
		return nil, err
	}
	if what == "job" {
		for k, v := range p {
			if strings.EqualFold(k, "properties") {
				if _, ok := v.(map[string]any); !ok {
					return nil, &ValidationError{Path: "properties", Reason: "is not an object"}
				}
				return p, nil
			}
		}
	}
	return p, nil
}

// repeatedMembers returns an error at the path of each member of an
// object of the patch data (valid JSON) that an earlier member of the same
// object names again, in any case: a patch's members are merged without
// regard to case, so two such members would be applied in no set order,
// and one given twice with the same name would lose its first value
// unseen.
func repeatedMembers(data []byte) error {
	var errs []error
	var s jsonc.Scanner
	s.Reset(data)
	var walk func(path string) bool
	walk = func(path string) bool {
		switch s.Kind() {
		case jsonc.Object:
			seen := make(map[string]string)
			return s.Object(func(name []byte) bool {
				n := string(name)
				at := jsonpath.Key(path, n)
				if first, ok := seen[strings.ToLower(n)]; !ok {
					seen[strings.ToLower(n)] = n
				} else if first == n {
					errs = append(errs, &ValidationError{Path: at, Reason: "is given more than once"})
				} else {
					errs = append(errs, &ValidationError{Path: at, Reason: fmt.Sprintf("is a duplicate of %q", first)})
				}
				return walk(at)
			})
		case jsonc.Array:
			return s.Array(func(i int) bool { return walk(path + "[" + strconv.Itoa(i) + "]") })
		default:
			return s.Skip()
		}
	}
	walk("")
	return errors.Join(errs...)
}

// dropPause prepares doc, a stored definition, for a merge patch that
// sets the state to Enabled: the stateReason and resumeTime of the pause
// go with it, unless the patch gives them again (and validation refuses
// them).
func dropPause(doc, patch map[string]any) {
	enable := false
	for k, v := range patch {
		if st, ok := v.(string); ok && strings.EqualFold(k, "state") && strings.EqualFold(st, string(JobEnabled)) {
			enable = true
		}
	}
	if !enable {
		return
	}
	for _, key := range []string{"stateReason", "resumeTime"} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(patch)), func(k string) bool { return strings.EqualFold(k, key) }) {
			delete(doc, key)
		}
	}
}

// dropCronFields prepares doc, a stored definition, for a merge patch that
// gives recurrence.cron a spec: it removes the fields a spec stands for
// (frequency, interval, schedule, and timeZone when the old or the new spec
// names a zone), so that the new spec fills them in instead of conflicting
// with the old values. The patch may give any of them again.
func dropCronFields(doc, patch map[string]any) {
	pr, _ := memberFold(patch, "recurrence").(map[string]any)
	spec, _ := memberFold(pr, "cron").(string)
	dr, _ := doc["recurrence"].(map[string]any)
	if spec == "" || dr == nil {
		return
	}
	hasZone := func(spec string) bool {
		r, err := recurrence.ParseCron(spec)
		return err == nil && r.TimeZone != ""
	}
	old, _ := dr["cron"].(string)
	for _, k := range []string{"frequency", "interval", "schedule"} {
		delete(dr, k)
	}
	if hasZone(old) || hasZone(spec) {
		delete(dr, "timeZone")
	}
}

// memberFold returns the member of m whose key equals key ignoring case.
func memberFold(m map[string]any, key string) any {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// mergePatch applies an RFC 7386 merge patch, matching keys without regard
// to case as the service did.
func mergePatch(doc map[string]any, patch map[string]any) map[string]any {
	if doc == nil {
		doc = make(map[string]any)
	}
	for k, v := range patch {
		key := k
		for dk := range doc {
			if strings.EqualFold(dk, k) {
				key = dk
			}
		}
		if v == nil {
			delete(doc, key)
			continue
		}
		if pv, ok := v.(map[string]any); ok {
			dv, _ := doc[key].(map[string]any)
			doc[key] = mergePatch(dv, pv)
			continue
		}
		doc[key] = v
	}
	return doc
}

// EnableJob sets the job's state to Enabled; its next occurrence is the
// first at or after now, but for a one-time job's that has not run: one
// that passed while the job was Disabled is missed, and the job's missed
// policy decides whether it runs. ErrFinalState for a Completed or
// Faulted job.
func (s *Scheduler) EnableJob(ctx context.Context, collection, name string) (*JobRecord, error) {
	return s.PatchJob(ctx, collection, name, []byte(`{"state":"Enabled"}`), nil)
}

// DisableJob sets the job's state to Disabled: it runs no more
// occurrences until enabled again; an occurrence that waits for a retry
// (or its errorAction) is dropped, with a Failed history entry that says
// so.
// ErrFinalState for a Completed or Faulted job.
func (s *Scheduler) DisableJob(ctx context.Context, collection, name string) (*JobRecord, error) {
	return s.PatchJob(ctx, collection, name, []byte(`{"state":"Disabled"}`), nil)
}

// GetJob returns the job, or an error matching ErrNotFound.
func (s *Scheduler) GetJob(ctx context.Context, collection, name string) (*JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if err := checkJobKey(collection, name); err != nil {
		return nil, err
	}
	r, err := s.store.GetJob(ctx, collection, name)
	if err != nil {
		return nil, err
	}
	return s.withHealth(r, time.Now()), nil
}

// DeleteJobOptions are the options of [Scheduler.DeleteJob] and
// [Scheduler.DeleteJobTx].
type DeleteJobOptions struct {
	// IfMatch, when not empty, makes the deletion fail with
	// ErrPreconditionFailed, deleting nothing, unless the job exists with
	// this ETag ("*": exists at all). The store checks the ETag in the
	// write that deletes the job ([Store.DeleteJob]), so a job written
	// since the caller read its ETag is never deleted in its place; a
	// run of the job does not change its ETag.
	IfMatch string
}

// DeleteJob deletes the job and its history, in whatever state it is. An
// attempt in flight finishes but its outcome is dropped. A job that does
// not exist is an error matching ErrNotFound, or ErrPreconditionFailed
// when opts.IfMatch is set. opts may be nil.
func (s *Scheduler) DeleteJob(ctx context.Context, collection, name string, opts *DeleteJobOptions) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := deleteJob(ctx, s.store, collection, name, opts); err != nil {
		return err
	}
	s.wrote(collection, name)
	return nil
}

// deleteJob is DeleteJob over st.
func deleteJob(ctx context.Context, st TxStore, collection, name string, opts *DeleteJobOptions) error {
	if err := checkJobKey(collection, name); err != nil {
		return err
	}
	var ifMatch string
	if opts != nil {
		ifMatch = opts.IfMatch
	}
	return deleteIfMatch(ifMatch, func(etag string) error { return st.DeleteJob(ctx, collection, name, etag) })
}

// deleteIfMatch runs del, a store's delete, under the precondition
// ifMatch: none deletes; "*" deletes what exists; an ETag deletes only the
// record holding it, which del (the store) checks. A record that does not
// exist fails the precondition, as for puts.
func deleteIfMatch(ifMatch string, del func(etag string) error) error {
	etag := ifMatch
	if etag == "*" {
		etag = ""
	}
	err := del(etag)
	if ifMatch != "" && errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%v: %w", err, ErrPreconditionFailed)
	}
	return err
}

// RunJob runs the job once now, outside its schedule: the run is an
// occurrence of its own (with retries and the error action) that counts in
// the status counters like any other, but not toward recurrence.count.
// When an occurrence is in progress, the run is postponed until it ends,
// also when it is a run requested earlier. A run requested and not yet
// started is not repeated: the record answered holds its RunRequested,
// the run's expected time: when it was asked for, to the millisecond.
// While the job's attempt runs, the first request is noted at its own time
// (after the run requested before it, when that run is the one in
// progress), and the runs requested then run once after that attempt's
// occurrence ends, however many requests came meanwhile: as the first of
// them, at its time and with its trace context.
// A Disabled job may be run; a Completed or Faulted one may not
// (ErrFinalState), nor a job of a collection that is not Enabled
// (ErrCollectionNotEnabled). When ctx carries a span (RunJob called while
// serving a traced request) that Config.Observer reads
// ([Observer.TraceParent]), the run's attempts are traced as its
// children; a run already requested and not started keeps its own.
func (s *Scheduler) RunJob(ctx context.Context, collection, name string) (*JobRecord, error) {
	r, err := s.update(ctx, s.store, collection, name, "", func(r *JobRecord, now time.Time) error {
		if r.State.Final() {
			return fmt.Errorf("run job %q: it is %s: %w", name, r.State, ErrFinalState)
		}
		col, err := s.store.GetCollection(ctx, collection)
		if err != nil {
			return err
		}
		if st := col.Definition.State(); st != CollectionEnabled {
			return fmt.Errorf("run job %q: job collection %q is %s: %w", name, collection, st, ErrCollectionNotEnabled)
		}
		sc := &r.Schedule
		claimed := r.LeaseOwner != "" && r.LeaseUntil.After(now)
		at := now.Truncate(time.Millisecond) // the run's expected time
		switch {
		case sc.RunRequested.IsZero():
		case claimed && sc.RunRequestedInClaim != r.Version:
			// The job is claimed, and the store holds a claimed job as
			// it was until the attempt's outcome is recorded: the run
			// requested, unless noted under this very claim (see
			// JobSchedule.RunRequestedInClaim), may be the one in
			// progress. Requested again, later than before, it runs
			// once after that attempt ends (see machine.replay); when it
			// had not started, it still runs once.
			if !at.After(sc.RunRequested) {
				at = sc.RunRequested.Add(time.Millisecond)
			}
		default:
			// Requested and not started (asked for while the attempt in
			// progress runs, or while none did): not repeated, and it
			// keeps the time and trace it was asked with.
			return nil
		}
		sc.RunRequested = at
		sc.RunRequestedInClaim = 0
		if claimed {
			sc.RunRequestedInClaim = r.Version + 1 // the record's Version once written
		}
		if obs := s.cfg.Observer; obs != nil {
			sc.RunTrace, sc.RunTraceState = obs.TraceParent(ctx)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.wrote(collection, name)
	return r, nil
}

// ListJobs returns the collection's jobs ordered by name, or in the
// order opts.OrderBy, one page at a time. opts may be nil (the first 100
// jobs by name).
func (s *Scheduler) ListJobs(ctx context.Context, collection string, opts *ListJobsOptions) ([]*JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &ListJobsOptions{}
	}
	errs := []error{checkName("collection", collection), checkPage(opts.Top, opts.Skip)}
	if opts.State != "" && !opts.State.Valid() {
		errs = append(errs, &ValidationError{Path: "state", Value: strconv.Quote(string(opts.State)), Reason: "is not a job state (Enabled, Disabled, Completed or Faulted)"})
	}
	if opts.Tag.Name == "" && opts.Tag.Value != "" {
		errs = append(errs, &ValidationError{Path: "tag.name", Reason: "is required with tag.value"})
	}
	if !opts.OrderBy.Valid() {
		errs = append(errs, &ValidationError{Path: "orderBy", Value: strconv.Quote(string(opts.OrderBy)), Reason: "is not an order of jobs (empty for the name, nextExecutionTime, lastExecutionTime or failureCount)"})
	}
	if opts.Health != "" && !opts.Health.Valid() {
		errs = append(errs, &ValidationError{Path: "health", Value: strconv.Quote(string(opts.Health)), Reason: "is not a job health (OK, Skipped, Stale, Late or Failing)"})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	now := time.Now()
	if opts.OrderBy == JobsByNextExecution {
		switch {
		case !s.policies.running(s, collection, now):
			// No job shows a next execution time (see withHealth):
			// ties by name.
			byName := *opts
			byName.OrderBy = JobsByName
			opts = &byName
		case len(s.policies.entry(s, collection, now).cals) > 0:
			return s.listByShownNext(ctx, collection, opts, now)
		}
	}
	if opts.Health == "" {
		list, err := s.store.ListJobs(ctx, collection, JobFilter{State: opts.State, Tag: opts.Tag, OrderBy: opts.OrderBy, Descending: opts.Descending, Skip: opts.Skip, Top: pageSize(opts.Top)})
		for _, r := range list {
			s.withHealth(r, now)
		}
		return list, err
	}
	var out []*JobRecord
	skip, top := opts.Skip, pageSize(opts.Top)
	err := s.scanJobs(ctx, collection, JobFilter{State: opts.State, Tag: opts.Tag, OrderBy: opts.OrderBy, Descending: opts.Descending}, now, func(r *JobRecord) bool {
		switch {
		case r.Status.Health != opts.Health:
		case skip > 0:
			skip--
		default:
			out = append(out, r)
		}
		return len(out) < top
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listByShownNext is ListJobs by next execution time in a collection
// with exclusion calendars: the order of the nextExecutionTime the list
// shows (see withHealth), which the store's order, by the instant each
// record planned, need not be. It reads all the collection's jobs (of
// opts.State, opts.Tag and opts.Health) and sorts them as the store
// would: ties by name, jobs without a next execution last, descending
// the exact reverse.
func (s *Scheduler) listByShownNext(ctx context.Context, collection string, opts *ListJobsOptions, now time.Time) ([]*JobRecord, error) {
	var all []*JobRecord
	err := s.scanJobs(ctx, collection, JobFilter{State: opts.State, Tag: opts.Tag}, now, func(r *JobRecord) bool {
		if opts.Health == "" || r.Status.Health == opts.Health {
			all = append(all, r)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b *JobRecord) int {
		an, bn := a.Status.NextExecutionTime, b.Status.NextExecutionTime
		switch {
		case an == nil && bn != nil:
			return 1
		case an != nil && bn == nil:
			return -1
		case an != nil:
			if c := an.Compare(*bn); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Name, b.Name)
	})
	if opts.Descending {
		slices.Reverse(all)
	}
	from := min(opts.Skip, len(all))
	return all[from:min(from+pageSize(opts.Top), len(all))], nil
}

// scanJobs reads the jobs of collection that f keeps (its Skip and Top
// aside), a store page of MaxPageSize at a time, sets the health of each
// at now (see withHealth) and hands it to more, until more returns false
// or no job is left.
func (s *Scheduler) scanJobs(ctx context.Context, collection string, f JobFilter, now time.Time, more func(*JobRecord) bool) error {
	f.Top = MaxPageSize
	for f.Skip = 0; ; f.Skip += MaxPageSize {
		page, err := s.store.ListJobs(ctx, collection, f)
		if err != nil {
			return err
		}
		for _, r := range page {
			if !more(s.withHealth(r, now)) {
				return nil
			}
		}
		if len(page) < MaxPageSize {
			return nil
		}
	}
}

// ListHistory returns the job's history, newest first, one page at a
// time. opts may be nil (the newest 100 entries).
func (s *Scheduler) ListHistory(ctx context.Context, collection, name string, opts *ListHistoryOptions) ([]HistoryEntry, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &ListHistoryOptions{}
	}
	errs := []error{checkJobKey(collection, name), checkPage(opts.Top, opts.Skip)}
	errs = append(errs, checkHistoryOptions(opts))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.store.ListHistory(ctx, collection, name, historyFilter(opts))
}

// checkHistoryOptions checks the filter of opts: its status
// (checkStatus), and that it does not ask both for the entries that
// faulted their occurrence and for those that did not.
func checkHistoryOptions(opts *ListHistoryOptions) error {
	errs := []error{checkStatus(opts.Status)}
	if opts.Faulted && opts.NotFaulted {
		errs = append(errs, &ValidationError{Path: "notFaulted", Value: "true", Reason: "contradicts faulted, which is true too: set one of them, or neither for all entries"})
	}
	return errors.Join(errs...)
}

// checkStatus checks status, the filter of a list of history entries by
// their status: empty (all), or one of the execution statuses, which the
// error names.
func checkStatus(status ExecutionStatus) error {
	if status == "" || status.Valid() {
		return nil
	}
	names := make([]string, len(executionStatuses))
	for i, st := range executionStatuses {
		names[i] = string(st)
	}
	last := len(names) - 1
	return &ValidationError{Path: "status", Value: strconv.Quote(string(status)),
		Reason: fmt.Sprintf("is not an execution status (%s or %s)", strings.Join(names[:last], ", "), names[last])}
}

// historyFilter is the store filter of opts, a page of at most
// MaxPageSize entries.
func historyFilter(opts *ListHistoryOptions) HistoryFilter {
	return HistoryFilter{Status: opts.Status, Faulted: opts.Faulted, NotFaulted: opts.NotFaulted, Collections: opts.Collections, Skip: opts.Skip, Top: pageSize(opts.Top)}
}

func checkPage(top, skip int) error {
	var errs []error
	if top < 0 || top > MaxPageSize {
		errs = append(errs, &ValidationError{Path: "top", Value: strconv.Itoa(top), Reason: fmt.Sprintf("is out of range (1-%d)", MaxPageSize)})
	}
	if skip < 0 {
		errs = append(errs, &ValidationError{Path: "skip", Value: strconv.Itoa(skip), Reason: "is negative"})
	}
	return errors.Join(errs...)
}

func pageSize(top int) int {
	if top == 0 {
		return MaxPageSize
	}
	return top
}
