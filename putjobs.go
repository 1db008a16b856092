package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/jobdef"
)

// JobPut is one job of [Scheduler.PutJobs]: its name, definition and
// tags.
type JobPut struct {
	// Name is the job's name.
	Name string
	// Job is the definition, as given to [Scheduler.PutJob].
	Job *Job
	// Tags are the job's labels, as [PutJobOptions.Tags] gives them to
	// PutJob: the put replaces them, nil leaves the job without tags.
	Tags map[string]string
}

// PutJobsError is the error of a [Scheduler.PutJobs] batch in which some
// jobs could not be put: one item per such job, in the order of the batch.
// errors.Is sees through it to each item's error (ErrInvalid,
// ErrQuotaExceeded, ErrPreconditionFailed, ...), and [ValidationErrors]
// finds the validation errors of all items.
type PutJobsError struct {
	Items []PutJobsItemError
}

// PutJobsItemError is what went wrong with one job of a batch.
type PutJobsItemError struct {
	// Index is the job's index in the batch, from 0.
	Index int
	// Name is the job's name.
	Name string
	// Err is what went wrong; validation errors ([*ValidationError])
	// carry paths within the job's definition ("recurrence.interval"),
	// or "name" for its name.
	Err error
}

// Error returns `jobs[INDEX] "NAME": ERR`.
func (e *PutJobsItemError) Error() string {
	return fmt.Sprintf("jobs[%d] %q: %s", e.Index, e.Name, strings.ReplaceAll(e.Err.Error(), "\n", "; "))
}

// Unwrap returns Err.
func (e *PutJobsItemError) Unwrap() error { return e.Err }

// Error lists the items, one a line.
func (e *PutJobsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "put jobs: %d of the batch failed", len(e.Items))
	for i := range e.Items {
		b.WriteString("\n")
		b.WriteString(e.Items[i].Error())
	}
	return b.String()
}

// Unwrap returns the items, each an error.
func (e *PutJobsError) Unwrap() []error {
	out := make([]error, len(e.Items))
	for i := range e.Items {
		out[i] = &e.Items[i]
	}
	return out
}

// PutJobs puts the jobs of a batch into collection at one instant, each as
// [Scheduler.PutJob] does (creating it, replacing the job of that name
// with its status counters and history kept, or leaving its schedule as it
// is when the job has that definition and state, and writing nothing when
// it has those tags too), and returns their records in the order of jobs.
//
// Every definition is checked first, as PutJob checks one; when any job is
// invalid (a bad name, a name that an earlier job of the batch has, a bad
// definition, a schedule more frequent than the collection's
// maxRecurrence, a missing calendar) nothing is written and the error is
// a [*PutJobsError] with an item for each such job, naming its index, its
// name and the paths in its definition: all of them in one answer, the
// quota items of the jobs that are otherwise valid included. The
// collection's maxJobCount is checked once for the batch, and only when
// no job has an item: when the jobs it holds plus those the batch creates
// exceed it, nothing is written and the error matches ErrQuotaExceeded. A
// batch with an invalid job is thus refused for that job alone, even when
// it would also exceed maxJobCount (fix the job and put the batch again
// to learn that). A missing collection fails with ErrNotFound. A batch of 512 jobs or more is
// checked in parts on up to GOMAXPROCS goroutines, so an executor's
// [action.Validator] may see several of its jobs at once; a panic in a
// check there is raised again on the caller's goroutine, once every part
// ended, as a [*PartPanic].
//
// opts.IfMatch may be empty, or "*": every job of the batch must then
// exist already (the batch only replaces), and those that do not are
// reported as items matching ErrPreconditionFailed. A job's own ETag
// cannot be given: put such a job with PutJob. opts.IfNoneMatch may be
// empty, or "*": the batch then only creates, and the jobs of it that
// exist are reported as items matching ErrPreconditionFailed, checked in
// the write that creates the others (on a store that is no BulkPutter, in
// the write of each job). Any other value of either fails with ErrInvalid
// at its name. opts may be nil.
//
// On a store that is a [BulkPutter] (the memory, SQLite and PostgreSQL
// stores) the batch is written in one atomic step, one transaction on the
// SQL stores: all jobs or none. On another store each job is written with
// Store.PutJob in turn, after all were checked: a store error stops the
// batch there, and the jobs before it stay written (the error is a
// *PutJobsError whose item names the job it stopped at). An empty batch
// writes nothing.
func (s *Scheduler) PutJobs(ctx context.Context, collection string, jobs []JobPut, opts *PutJobOptions) ([]*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &PutJobOptions{}
	}
	var errs []error
	if err := checkName("collection", collection); err != nil {
		errs = append(errs, err)
	}
	if opts.IfMatch != "" && opts.IfMatch != "*" {
		errs = append(errs, &ValidationError{Path: "IfMatch", Value: strconv.Quote(opts.IfMatch), Reason: `must be empty or "*" for a batch; put a job with its ETag with PutJob`})
	}
	errs = append(errs, checkIfNoneMatch(opts.IfNoneMatch))
	cond := putCond{ifMatch: opts.IfMatch, createOnly: opts.IfNoneMatch == "*"}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return []*JobRecord{}, nil
	}
	now := time.Now()
	bp, bulk := s.store.(BulkPutter)
	var read *batchRead
	if bulk {
		// Read what the batch writes over while its jobs are checked.
		read = s.readBatch(ctx, bp, collection, jobs)
		defer read.stop()
	}
	stored, err := s.judgedOver(ctx, collection, jobs, read)
	if err != nil {
		return nil, err
	}
	batch, items := s.checkBatch(collection, jobs, now, stored)
	var out []*JobRecord
	switch {
	case bulk:
		out, err = s.putBatch(ctx, bp, collection, jobs, batch, items, now, cond, read)
	case items != nil:
		err = s.refuseEach(ctx, collection, batch, items, now)
	default:
		out, err = s.putEach(ctx, collection, jobs, batch, now, cond)
	}
	if len(out) > 0 {
		s.wrote(collection, "")
	}
	return out, err
}

// checkedPut is a job of a batch once checked: its definition checked
// and sealed, its state and its timing, and, as putCond has them, whether
// its sealed secrets were judged against a version of the job and that
// version's ETag. Its job is nil when the check failed.
type checkedPut struct {
	name   string
	job    *Job
	tags   map[string]string
	state  JobState
	t      *Timing
	judged bool
	over   string
}

// judgedOver returns, for the jobs of a batch, the jobs stored that
// those whose definitions hold sealed secrets are judged against (see
// openGiven): nil when none holds one, else the record of each such
// job's name (nil: none stored). It takes them from read, the batch's
// read, when there is one (nil when read failed: putBatch reports its
// error), else reads them.
func (s *Scheduler) judgedOver(ctx context.Context, collection string, jobs []JobPut, read *batchRead) ([]*JobRecord, error) {
	if !slices.ContainsFunc(jobs, func(p JobPut) bool { return p.Job != nil && anySealed(jobSecrets(p.Job)) }) {
		return nil, nil
	}
	if read != nil {
		<-read.done
		return read.olds, nil
	}
	stored := make([]*JobRecord, len(jobs))
	for i, p := range jobs {
		if p.Job == nil || !anySealed(jobSecrets(p.Job)) || checkName("name", p.Name) != nil {
			continue
		}
		r, err := s.store.GetJob(ctx, collection, p.Name)
		switch {
		case err == nil:
			stored[i] = r
		case !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("put jobs: %w", err)
		}
	}
	return stored, nil
}

// checkBatch checks the names and definitions of a batch put at now,
// the sealed secrets of each against the job stored of its name (stored,
// see judgedOver). It returns the checked jobs, and an item for each job
// that failed, whose checkedPut has a nil job.
func (s *Scheduler) checkBatch(collection string, jobs []JobPut, now time.Time, stored []*JobRecord) ([]checkedPut, []PutJobsItemError) {
	out := make([]checkedPut, len(jobs))
	errs := make([]error, len(jobs))
	eachPart(len(jobs), func(from, to int) {
		for i := from; i < to; i++ {
			var over *JobRecord
			if stored != nil {
				over = stored[i]
			}
			errs[i] = s.checkPut(collection, jobs[i], now, &out[i], over)
		}
	})
	seen := make(map[string]int, len(jobs))
	var items []PutJobsItemError
	for i, p := range jobs {
		err := errs[i]
		if first, dup := seen[p.Name]; dup && err == nil {
			err = &ValidationError{Path: "name", Value: strconv.Quote(p.Name), Reason: fmt.Sprintf("is the name of jobs[%d] too; a batch puts each job once", first)}
		} else if !dup {
			seen[p.Name] = i
		}
		if err != nil {
			out[i] = checkedPut{}
			items = append(items, PutJobsItemError{Index: i, Name: p.Name, Err: err})
		}
	}
	return out, items
}

// recordsOf returns the records that the jobs of batch that passed
// checkBatch write over olds (nil: none read) into col at now, and items
// (checkBatch's) with an item added, in the batch's order, for each of
// those jobs that cannot be written: its precondition fails, its schedule
// is more frequent than col allows, its calendar is missing. The records
// are nil when there is any item.
func (s *Scheduler) recordsOf(col *CollectionRecord, batch []checkedPut, items []PutJobsItemError, olds []*JobRecord, cond putCond, now time.Time) ([]*JobRecord, []PutJobsItemError) {
	recs := make([]*JobRecord, len(batch))
	checked := len(items)
	for i := range batch {
		p := &batch[i]
		if p.job == nil {
			continue
		}
		var old *JobRecord
		if olds != nil {
			old = olds[i]
		}
		err := cond.check(p.name, old)
		if err == nil {
			recs[i], err = s.newRecord(col, p.name, p.job, p.tags, p.state, p.t, now, old)
		}
		if err != nil {
			items = append(items, PutJobsItemError{Index: i, Name: p.name, Err: err})
		}
	}
	if items == nil {
		return recs, nil
	}
	if checked > 0 && checked < len(items) {
		slices.SortStableFunc(items, func(a, b PutJobsItemError) int { return a.Index - b.Index })
	}
	return nil, items
}

// refuseEach returns the error of a batch, some of whose jobs failed
// checkBatch (items), for a store that is no BulkPutter: with an item
// added for each other job that recurs more often than the collection
// allows, or whose calendar is missing (items alone when the collection
// cannot be read).
func (s *Scheduler) refuseEach(ctx context.Context, collection string, batch []checkedPut, items []PutJobsItemError, now time.Time) error {
	col, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return &PutJobsError{Items: items}
	}
	_, items = s.recordsOf(col, batch, items, nil, putCond{}, now)
	return &PutJobsError{Items: items}
}

// batchPart is the least number of jobs of a batch that eachPart gives a
// goroutine of its own.
const batchPart = 256

// eachPart calls do on parts [from, to) of [0, n), in parallel on up to
// GOMAXPROCS goroutines when n is large enough to be worth it, and
// returns when every call has returned. A panic in a call on a goroutine
// of its own is raised again on the caller's goroutine once every call
// has ended, so that the caller's recover sees it as it would a panic of
// a call on its own goroutine: the first such panic, as a [*PartPanic].
func eachPart(n int, do func(from, to int)) {
	parts := min(runtime.GOMAXPROCS(0), n/batchPart)
	if parts <= 1 {
		do(0, n)
		return
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicked *PartPanic
	)
	for p := range parts {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					mu.Lock()
					if panicked == nil {
						panicked = &PartPanic{Value: v, Stack: debug.Stack()}
					}
					mu.Unlock()
				}
			}()
			do(p*n/parts, (p+1)*n/parts)
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// PartPanic is the value with which [Scheduler.PutJobs] panics when a
// check of a batch checked in parts on several goroutines panicked (an
// executor's [action.Validator], a payload's Validate method): raised
// again on the caller's goroutine, so that its recover sees it. It holds
// the first such panic's value and the stack of the goroutine on which
// it happened. A batch checked on the caller's goroutine (fewer than 512
// jobs, or GOMAXPROCS 1) panics with the value itself.
type PartPanic struct {
	// Value is what the check panicked with.
	Value any
	// Stack is the stack of the goroutine that panicked, as
	// [runtime/debug.Stack] formats it.
	Stack []byte
}

// Error returns the value and the stack of the goroutine that panicked.
func (p *PartPanic) Error() string {
	return fmt.Sprintf("panic in a check of a batch: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns Value when it is an error (a runtime error, an error a
// check panicked with), so that errors.Is and errors.As see it; nil
// otherwise.
func (p *PartPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// checkPut checks one job of a batch into c, its sealed secrets against
// stored, the job stored of its name (nil: none).
func (s *Scheduler) checkPut(collection string, p JobPut, now time.Time, c *checkedPut, stored *JobRecord) error {
	if err := checkName("name", p.Name); err != nil {
		return err
	}
	if err := jobdef.ValidateTags(p.Tags); err != nil {
		return err
	}
	job, err := s.checkDefinition(p.Job, collection, p.Name, now, anchorAt(now), false, jobOf(stored))
	if err != nil {
		return err
	}
	if job, err = s.sealDefinition(job, collection, p.Name); err != nil {
		return err
	}
	t, err := job.Timing(collection, p.Name, anchorAt(now))
	if err != nil {
		return err
	}
	*c = checkedPut{name: p.Name, job: job, tags: p.Tags, state: stateOf(p.Job), t: t,
		judged: anySealed(jobSecrets(p.Job)), over: etagOf(stored)}
	return nil
}

// batchRead is what a batch writes over, read while the batch is checked:
// the collection's record and the jobs of the batch's names that exist.
type batchRead struct {
	col    *CollectionRecord
	olds   []*JobRecord
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// stop ends the read, and returns once it has ended.
func (r *batchRead) stop() {
	r.cancel()
	<-r.done
}

// readBatch starts reading, through bp, the collection and the jobs of
// jobs' names, for putBatch; read.done is closed once the read has ended.
// The caller stops it (stop) when done with it.
func (s *Scheduler) readBatch(ctx context.Context, bp BulkPutter, collection string, jobs []JobPut) *batchRead {
	ctx, cancel := context.WithCancel(ctx)
	read := &batchRead{done: make(chan struct{}), cancel: cancel}
	names := make([]string, len(jobs))
	for i := range jobs {
		names[i] = jobs[i].Name
	}
	go func() {
		defer close(read.done)
		read.col, read.olds, read.err = s.readForBatch(ctx, bp, collection, names)
	}()
	return read
}

// readForBatch reads the collection and the jobs of names.
func (s *Scheduler) readForBatch(ctx context.Context, bp BulkPutter, collection string, names []string) (*CollectionRecord, []*JobRecord, error) {
	col, err := s.store.GetCollection(ctx, collection)
	if err != nil {
		return nil, nil, fmt.Errorf("put jobs: %w", err)
	}
	olds, err := bp.GetJobs(ctx, collection, names)
	return col, olds, err
}

// putBatch writes jobs, a batch checked into batch, through bp in one
// step, over what read found, reading what it replaces again when
// another writer got there first; a job whose sealed secrets were judged
// against another version than the one read again is judged again.
func (s *Scheduler) putBatch(ctx context.Context, bp BulkPutter, collection string, jobs []JobPut, batch []checkedPut, checked []PutJobsItemError, now time.Time, cond putCond, read *batchRead) ([]*JobRecord, error) {
	names := make([]string, len(batch))
	for i := range batch {
		names[i] = batch[i].name
	}
	for attempt := range maxWriteAttempts {
		var col *CollectionRecord
		var olds []*JobRecord
		var err error
		if attempt == 0 {
			<-read.done
			col, olds, err = read.col, read.olds, read.err
		} else {
			col, olds, err = s.readForBatch(ctx, bp, collection, names)
		}
		if err != nil && checked != nil {
			// The items of the check still say what is wrong with the
			// batch; the read's error would hide them.
			return nil, &PutJobsError{Items: checked}
		}
		if err != nil {
			return nil, err
		}
		checked := slices.Clip(checked)
		for i := range batch {
			if p := &batch[i]; p.judged && p.job != nil && p.over != etagOf(olds[i]) {
				if err := s.checkPut(collection, jobs[i], now, p, olds[i]); err != nil {
					*p = checkedPut{}
					checked = append(checked, PutJobsItemError{Index: i, Name: jobs[i].Name, Err: err})
				}
			}
		}
		recs, items := s.recordsOf(col, batch, checked, olds, cond, now)
		if items != nil {
			return nil, &PutJobsError{Items: items}
		}
		// A job the batch leaves as it is (see newRecord) is not written.
		write := recs
		if slices.ContainsFunc(olds, func(old *JobRecord) bool { return old != nil && slices.Contains(recs, old) }) {
			write = nil
			for i, r := range recs {
				if r != olds[i] {
					write = append(write, r)
				}
			}
		}
		if len(write) > 0 {
			err = bp.PutJobs(ctx, collection, write)
		}
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for i, r := range recs {
			if r != olds[i] {
				r.Version++
				r.CreatedByPut = olds[i] == nil
			}
		}
		if err := s.recheckBatch(ctx, collection, olds, recs, col.Definition.RecurrenceLimit(time.Now())); err != nil {
			return nil, err
		}
		return recs, nil
	}
	return nil, fmt.Errorf("put jobs: too many concurrent writes: %w", ErrConflict)
}

// putEach writes jobs, a batch checked into batch, one job at a time,
// for a store that is no BulkPutter; it stops at the first job that
// fails. A job whose sealed secrets were judged against another version
// than the one it would replace is judged again.
func (s *Scheduler) putEach(ctx context.Context, collection string, jobs []JobPut, batch []checkedPut, now time.Time, cond putCond) ([]*JobRecord, error) {
	out := make([]*JobRecord, 0, len(batch))
	for i := range batch {
		p := &batch[i]
		var r *JobRecord
		err := errJudgedOther
		for range maxWriteAttempts {
			r, err = s.writeJob(ctx, s.store, collection, p.name, p.job, p.tags, p.state, p.t, now, putCond{ifMatch: cond.ifMatch, createOnly: cond.createOnly, judged: p.judged, over: p.over})
			if !errors.Is(err, errJudgedOther) {
				break
			}
			old, gerr := s.store.GetJob(ctx, collection, p.name)
			if errors.Is(gerr, ErrNotFound) {
				old, gerr = nil, nil
			}
			if gerr != nil {
				err = gerr
				break
			}
			if err = s.checkPut(collection, jobs[i], now, p, old); err != nil {
				break
			}
		}
		if errors.Is(err, errJudgedOther) {
			err = fmt.Errorf("put job %q: too many concurrent writes: %w", p.name, ErrConflict)
		}
		if err != nil {
			return out, &PutJobsError{Items: []PutJobsItemError{{Index: i, Name: p.name, Err: err}}}
		}
		out = append(out, r)
	}
	return out, nil
}

// recheckBatch is recheckPut for a batch written over olds: when the
// calendar one of recs names is marked for deletion or gone, or leaves it
// no occurrence (see calendarFault), or one of recs recurs more often than
// the collection now allows (see quotaFault), the whole batch is undone,
// and its items at fault fail.
func (s *Scheduler) recheckBatch(ctx context.Context, collection string, olds, recs []*JobRecord, limit MaxRecurrence) error {
	need := false
	for i, r := range recs {
		need = need || r != olds[i] && needsRecheck(olds[i], r)
	}
	if !need {
		return nil
	}
	col, err := s.store.GetCollection(ctx, collection)
	var items []PutJobsItemError
	for i, r := range recs {
		if err != nil {
			break
		}
		if r == olds[i] {
			continue // not written
		}
		ferr := s.calendarFault(col, r)
		if ferr == nil {
			ferr = s.quotaFault(col, r, limit)
		}
		if ferr != nil {
			items = append(items, PutJobsItemError{Index: i, Name: r.Name, Err: ferr})
		}
	}
	if err == nil && items == nil {
		return nil
	}
	for i, r := range recs {
		if r != olds[i] {
			s.undoPut(ctx, s.store, olds[i], r)
		}
	}
	if err != nil {
		return fmt.Errorf("put jobs: read the collection again: %w", err)
	}
	return &PutJobsError{Items: items}
}
