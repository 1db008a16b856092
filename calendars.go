package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// CalendarRecord is an exclusion calendar of a job collection, as the
// calendar methods of [Scheduler] return it.
type CalendarRecord struct {
	// Collection and Name identify the calendar.
	Collection, Name string
	// Calendar is the definition.
	Calendar Calendar
	// ETag changes on every write of the calendar; pass it back as
	// IfMatch for optimistic concurrency.
	ETag string
	// Created is set by PutCalendar when the write created the
	// calendar, and clear when it replaced one: decided in the write
	// itself, so of two racing puts that find no calendar one creates
	// it and the other replaces it.
	Created bool
}

// PutCalendarOptions are the options of [Scheduler.PutCalendar].
type PutCalendarOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the calendar exists with this ETag
	// ("*": exists at all).
	IfMatch string
	// IfNoneMatch, when "*", makes the put create the calendar only: it
	// fails with ErrPreconditionFailed when the calendar exists, checked
	// in the same store write that creates it (a write of its
	// collection's record), so that of several such puts at once exactly
	// one creates it. Empty puts whether the calendar exists or not; any
	// other value fails with ErrInvalid at "IfNoneMatch".
	IfNoneMatch string
}

// calendarNotFound is the error of a calendar that does not exist.
func calendarNotFound(collection, name string) error {
	return &NotFoundError{Collection: collection, Calendar: name}
}

// PutCalendar creates or replaces the exclusion calendar name of the
// collection, which must exist (ErrNotFound naming it). An invalid
// definition fails with ErrInvalid (joined [*ValidationError] values whose
// paths start at the calendar object, "properties.dates[0]"). The calendar
// is kept in the collection's record (its ETag changes too): a new
// calendar is one atomic write of the collection; a replacement is two,
// and takes effect, whole, with the second (see below). opts may be nil.
//
// A calendar that jobs of the collection name changes their occurrences
// from their next one on (see the package documentation, "Exclusion
// calendars"): before PutCalendar returns, the next occurrence of each
// Enabled job that names it is planned again under it. A replacement
// that would leave one of them no occurrence within
// [recurrence.CalendarHorizon] from now fails with ErrInvalid at
// "properties", naming the jobs; a put of a job at the same moment cannot
// slip past that check (see the package documentation). A replacement
// that another write of the calendar overtakes while its jobs are
// checked fails with ErrConflict.
func (s *Scheduler) PutCalendar(ctx context.Context, collection, name string, def *Calendar, opts *PutCalendarOptions) (*CalendarRecord, error) {
	return s.putCalendar(ctx, s.inStore(), collection, name, def, opts)
}

// putCalendar is PutCalendar through to. Inside a host's transaction, a
// replacement by a calendar that differs from the stored one is refused
// (see PutCalendarTx).
func (s *Scheduler) putCalendar(ctx context.Context, to collectionTarget, collection, name string, def *Calendar, opts *PutCalendarOptions) (*CalendarRecord, error) {
	if opts == nil {
		opts = &PutCalendarOptions{}
	}
	if def == nil {
		def = &Calendar{}
	}
	if err := checkName("collection", collection); err != nil {
		return nil, err
	}
	if err := checkName("calendar", name); err != nil {
		return nil, err
	}
	if err := checkIfNoneMatch(opts.IfNoneMatch); err != nil {
		return nil, err
	}
	excl, err := def.Compile()
	if err != nil {
		return nil, err
	}
	etag := newETag()
	next := &CalendarEntry{ETag: etag, Calendar: *def.Clone(), At: time.Now()}
	created := false
	// A replacement is written as the calendar's Next first, checked
	// against the jobs that name the calendar, then made the calendar:
	// a put of a job naming it that the check does not see sees Next
	// (see recheckPut).
	_, err = s.writeCollectionTo(ctx, to, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if opts.IfNoneMatch == "*" && e != nil {
			return nil, fmt.Errorf("calendar %q of collection %q exists: %w", name, collection, ErrPreconditionFailed)
		}
		if err := preconditions("calendar", name, opts.IfMatch, etagOfCalendar(e), e != nil); err != nil {
			return nil, err
		}
		created = e == nil
		c := old.Definition.Clone()
		if c.Calendars == nil {
			c.Calendars = make(map[string]*CalendarEntry)
		}
		switch {
		case created:
			c.Calendars[name] = &CalendarEntry{ETag: etag, Calendar: *def.Clone()}
		case to.tx && !sameCalendar(&e.Calendar, def):
			return nil, fmt.Errorf("calendar %q of collection %q: a calendar that differs from the stored one is not written inside a transaction "+
				"(the jobs that name it are checked against it in steps that other writers must see): write it with PutCalendar: %w",
				name, collection, errors.ErrUnsupported)
		case to.tx:
			// The same calendar: its jobs' occurrences stay as they are.
			c.Calendars[name].ETag = etag
		default:
			c.Calendars[name].Next = next.Clone()
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	if !created && !to.tx {
		checked := s.checkCalendarJobs(ctx, collection, name, excl)
		if checked == nil && time.Since(next.At) > MarkLifetime/2 {
			checked = fmt.Errorf("calendar %q of collection %q: its jobs took longer than %v to check: %w", name, collection, MarkLifetime/2, ErrConflict)
		}
		if err := s.settleCalendar(ctx, collection, name, etag, checked); err != nil {
			return nil, err
		}
	}
	if !to.tx {
		s.replanJobs(ctx, collection, name)
	}
	return &CalendarRecord{Collection: collection, Name: name, Calendar: *def.Clone(), ETag: etag, Created: created}, nil
}

// sameCalendar reports whether calendars a and b exclude the same
// occurrences because they are written the same (in JSON).
func sameCalendar(a, b *Calendar) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// replanJobs plans the next occurrence of each Enabled job of collection
// that names the calendar name again under the calendar as this instance
// holds it, just written (see [machine.follow]). A job it cannot write
// (the store failed, or other writes kept coming first) is logged: the
// engine plans it again when the occurrence comes due (see
// [Scheduler.timing]).
func (s *Scheduler) replanJobs(ctx context.Context, collection, name string) {
	jobs, err := s.jobsNaming(ctx, collection, name)
	if err != nil {
		s.log.Error("plan the jobs that name a changed calendar again: list them", "collection", collection, "calendar", name, "err", err)
		return
	}
	for _, r := range jobs {
		if err := s.replanJob(ctx, r); err != nil {
			s.log.Error("plan a job again under its changed calendar; it is planned again when its occurrence comes due",
				"collection", collection, "job", r.Name, "calendar", name, "err", err)
		}
	}
}

// replanJob plans r's next scheduled occurrence again under the calendar
// it names as this instance holds it, and writes r when that changes it
// (a compare-and-swap on its version, done again over a fresh read when
// another write came first, or after a failure of the store). The
// occurrences the calendar now drops get their Skipped entry (see
// PolicyState.Passed) unless one waits already. A record that is leased
// (an occurrence runs) or whose occurrence is due is left to the engine,
// which follows the calendar when it takes the occurrence.
func (s *Scheduler) replanJob(ctx context.Context, r *JobRecord) error {
	var err error
	for try := range maxWriteAttempts {
		if try > 0 {
			if r, err = s.store.GetJob(ctx, r.Collection, r.Name); errors.Is(err, ErrNotFound) {
				return nil
			} else if err != nil {
				continue
			}
		}
		now := time.Now()
		if r.State != JobEnabled || r.Schedule.NextOccurrence.IsZero() {
			return nil
		}
		if r.LeaseUntil.After(now) || !r.Schedule.NextOccurrence.After(now) {
			// An instance works on the occurrence (the record keeps it
			// until its outcome is recorded), or is about to take it:
			// moving it would make the engine's write conflict and run
			// it again at its new instant. The engine follows the
			// calendar itself when it takes the occurrence.
			return nil
		}
		t, terr := s.timing(r, now)
		if terr != nil {
			return terr
		}
		m := s.machine(r, now)
		next := r.Schedule.NextOccurrence
		hist := m.follow(r, t, now, nil)
		if r.Schedule.NextOccurrence.Equal(next) {
			return nil
		}
		if p := r.Schedule.policy(); len(hist) > 0 && p.Passed == nil {
			p.Passed = &hist[0]
		}
		m.settle(r, now)
		if err = s.store.PutJob(ctx, r); err == nil {
			s.wrote(r.Collection, r.Name)
			return nil
		}
		if !errors.Is(err, ErrConflict) && !transient(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// settleCalendar ends the replacement of the calendar name of collection
// by the version etag (its Next): it makes it the calendar when checked
// is nil, and drops it otherwise, returning checked. It fails with
// ErrConflict when another write replaced or removed that version
// meanwhile.
func (s *Scheduler) settleCalendar(ctx context.Context, collection, name, etag string, checked error) error {
	err := againAfterOutage(ctx, func() (bool, error) {
		_, err := s.writeCollection(ctx, collection, "", false, s.settleBuild(collection, name, etag, checked))
		return transient(err) && !errors.Is(err, ErrStopped), err
	})
	if checked != nil {
		if err != nil {
			s.log.Error("drop the version of a calendar that was refused", "collection", collection, "calendar", name, "err", err)
		}
		return checked
	}
	return err
}

// settleBuild is the build of settleCalendar's write.
func (s *Scheduler) settleBuild(collection, name, etag string, checked error) func(old *CollectionRecord) (*JobCollection, error) {
	return func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if e == nil || e.Next == nil || e.Next.ETag != etag {
			return nil, fmt.Errorf("calendar %q of collection %q: another write replaced or deleted it while its jobs were checked: %w", name, collection, ErrConflict)
		}
		c := old.Definition.Clone()
		if checked != nil {
			c.Calendars[name].Next = nil
		} else {
			c.Calendars[name] = &CalendarEntry{ETag: etag, Calendar: e.Next.Calendar}
		}
		return c, nil
	}
}

// jobsNaming returns the jobs of collection, not in a final state, whose
// recurrence names the calendar name, ordered by name.
func (s *Scheduler) jobsNaming(ctx context.Context, collection, name string) ([]*JobRecord, error) {
	var out []*JobRecord
	for skip := 0; ; skip += 1000 {
		jobs, err := s.store.ListJobs(ctx, collection, JobFilter{Skip: skip, Top: 1000})
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if !j.State.Final() && j.Job.Recurrence.Ext().Calendar == name {
				out = append(out, j)
			}
		}
		if len(jobs) < 1000 {
			slices.SortFunc(out, func(a, b *JobRecord) int { return strings.Compare(a.Name, b.Name) })
			return out, nil
		}
	}
}

// checkCalendarJobs refuses excl as the calendar name of collection when
// it would leave a job that names it no occurrence within
// [recurrence.CalendarHorizon] from now.
func (s *Scheduler) checkCalendarJobs(ctx context.Context, collection, name string, excl *recurrence.Exclusions) error {
	jobs, err := s.jobsNaming(ctx, collection, name)
	if err != nil {
		return err
	}
	now := time.Now()
	var bad []string
	for _, j := range jobs {
		if leavesNone(j, excl, now) {
			bad = append(bad, j.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &ValidationError{Path: "properties", Reason: "leaves " + jobList(bad) + " no occurrence: it excludes every one within " + horizonWords + " from now"}
}

// leavesNone reports whether the calendar excl, as the one j names,
// leaves j no occurrence within [recurrence.CalendarHorizon] from now
// when j has one without it.
func leavesNone(j *JobRecord, excl *recurrence.Exclusions, now time.Time) bool {
	under, err := j.Job.TimingUnder(j.Collection, j.Name, j.Schedule.Anchor, excl)
	if err != nil || !under.Next(now).IsZero() {
		return false
	}
	plain, err := j.Job.Timing(j.Collection, j.Name, j.Schedule.Anchor)
	return err == nil && !plain.Next(now).IsZero()
}

// jobList names jobs in words: `job "a"`, `jobs "a", "b" and 3 more`.
func jobList(names []string) string {
	const most = 10
	var b strings.Builder
	if len(names) == 1 {
		b.WriteString("job ")
	} else {
		b.WriteString("jobs ")
	}
	for i, n := range names[:min(len(names), most)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	if len(names) > most {
		fmt.Fprintf(&b, " and %d more", len(names)-most)
	}
	return b.String()
}

// CalendarInUseError is the error of a calendar that cannot be deleted
// because jobs of its collection name it. It matches [ErrCalendarInUse].
type CalendarInUseError struct {
	// Collection and Calendar name the calendar.
	Collection, Calendar string
	// Jobs are the names of the jobs that name it (not in a final
	// state), ordered by name.
	Jobs []string
}

// Error returns `calendar "h" of collection "c" is used by jobs "a", "b"`.
func (e *CalendarInUseError) Error() string {
	return fmt.Sprintf("calendar %q of collection %q is used by %s", e.Calendar, e.Collection, jobList(e.Jobs))
}

// Is reports whether target is ErrCalendarInUse.
func (e *CalendarInUseError) Is(target error) bool { return target == ErrCalendarInUse }

func etagOfCalendar(e *CalendarEntry) string {
	if e == nil {
		return ""
	}
	return e.ETag
}

// GetCalendar returns the calendar, or an error matching ErrNotFound
// (a [*NotFoundError] naming the calendar, or the collection when that is
// what is missing).
func (s *Scheduler) GetCalendar(ctx context.Context, collection, name string) (*CalendarRecord, error) {
	c, err := s.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	e := c.Definition.Calendars[name]
	if e == nil {
		return nil, calendarNotFound(collection, name)
	}
	return &CalendarRecord{Collection: collection, Name: name, Calendar: *e.Calendar.Clone(), ETag: e.ETag}, nil
}

// ListCalendars returns the collection's calendars ordered by name, or an
// error matching ErrNotFound when the collection does not exist.
func (s *Scheduler) ListCalendars(ctx context.Context, collection string) ([]*CalendarRecord, error) {
	c, err := s.GetCollection(ctx, collection)
	if err != nil {
		return nil, err
	}
	out := []*CalendarRecord{}
	for _, name := range slices.Sorted(maps.Keys(c.Definition.Calendars)) {
		e := c.Definition.Calendars[name]
		out = append(out, &CalendarRecord{Collection: collection, Name: name, Calendar: *e.Calendar.Clone(), ETag: e.ETag})
	}
	return out, nil
}

// DeleteCalendarOptions are the options of [Scheduler.DeleteCalendar].
type DeleteCalendarOptions struct {
	// IfMatch, when not empty, makes the deletion fail with
	// ErrPreconditionFailed, deleting nothing, unless the calendar exists
	// with this ETag ("*": exists at all): a calendar or collection that
	// does not exist fails it, as for DeleteJobOptions.IfMatch. The
	// calendar is deleted only with the ETag checked, as a replacement
	// while it is being deleted fails the deletion.
	IfMatch string
}

// DeleteCalendar deletes the calendar, or fails with an error matching
// ErrNotFound when it (or its collection) does not exist, with
// ErrPreconditionFailed when opts.IfMatch is not met (also when it or its
// collection does not exist), and with a
// [*CalendarInUseError] (matching ErrCalendarInUse) naming the jobs that
// name it while there are any (jobs in a final state do not count).
//
// No job is left naming a deleted calendar, whatever runs at the same
// time: the deletion first marks the calendar (a write of the
// collection), from when on puts of jobs naming it fail at
// recurrence.calendar; then it looks for the jobs that name it, and
// removes the calendar when there are none, or clears the mark. A put of a
// job naming a calendar reads the collection again after its write, and
// undoes the write when it finds the calendar marked or gone (see
// [Scheduler.PutJob]): of a put and a deletion at the same moment, at
// least one sees the other. A calendar replaced while it is being
// deleted stays, and the deletion fails with ErrConflict. The mark holds
// for [MarkLifetime] (one left behind by a deletion that stopped is
// ignored after that); a deletion whose look for jobs takes more than
// half of it clears the mark and fails with ErrConflict. opts may be nil.
func (s *Scheduler) DeleteCalendar(ctx context.Context, collection, name string, opts *DeleteCalendarOptions) error {
	if err := checkName("collection", collection); err != nil {
		return err
	}
	if opts == nil {
		opts = &DeleteCalendarOptions{}
	}
	// deleteCalendar checks opts.IfMatch in its write of the collection;
	// deleteIfMatch makes a calendar or collection that does not exist
	// fail the condition, as for jobs and collections.
	err := deleteIfMatch(opts.IfMatch, func(string) error { return s.deleteCalendar(ctx, collection, name, opts.IfMatch) })
	if err != nil {
		return fmt.Errorf("delete calendar %q of collection %q: %w", name, collection, err)
	}
	return nil
}

// deleteCalendar is DeleteCalendar's three steps.
func (s *Scheduler) deleteCalendar(ctx context.Context, collection, name, ifMatch string) error {
	var etag string
	marked := time.Now()
	_, err := s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if e == nil {
			return nil, calendarNotFound(collection, name)
		}
		if err := preconditions("calendar", name, ifMatch, e.ETag, true); err != nil {
			return nil, err
		}
		etag = e.ETag
		return withCalendarMark(old, name, marked), nil
	})
	if err != nil {
		return err
	}
	jobs, err := s.jobsNaming(ctx, collection, name)
	if err == nil && time.Since(marked) > MarkLifetime/2 {
		err = fmt.Errorf("its jobs took longer than %v to check: %w", MarkLifetime/2, ErrConflict)
	}
	if err != nil || len(jobs) > 0 {
		// Clear the mark: the calendar stays.
		if _, uerr := s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
			if e := old.Definition.Calendars[name]; e == nil || e.ETag != etag || !e.Deleting {
				return nil, errUnchanged
			}
			return withCalendarMark(old, name, time.Time{}), nil
		}); uerr != nil && !errors.Is(uerr, errUnchanged) {
			s.log.Error("clear the deletion mark of a calendar", "collection", collection, "calendar", name, "err", uerr)
		}
		if err != nil {
			return err
		}
		e := &CalendarInUseError{Collection: collection, Calendar: name}
		for _, j := range jobs {
			e.Jobs = append(e.Jobs, j.Name)
		}
		return e
	}
	_, err = s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if e == nil {
			return nil, calendarNotFound(collection, name)
		}
		if e.ETag != etag || !e.Deleting {
			return nil, fmt.Errorf("it was replaced while being deleted: %w", ErrConflict)
		}
		c := old.Definition.Clone()
		delete(c.Calendars, name)
		if len(c.Calendars) == 0 {
			c.Calendars = nil
		}
		return c, nil
	})
	return err
}

// errUnchanged stops a write of a collection that finds nothing to do.
var errUnchanged = errors.New("unchanged")

// withCalendarMark returns the definition of old with the deletion mark
// of its calendar name set, made at at, or cleared when at is zero.
func withCalendarMark(old *CollectionRecord, name string, at time.Time) *JobCollection {
	c := old.Definition.Clone()
	c.Calendars[name].Deleting, c.Calendars[name].DeletingAt = !at.IsZero(), at
	return c
}

// calendarFault returns the error of r, a job just written, when the
// calendar it names is missing from col or marked for deletion
// (calendarDeleted), or when it, or the version a replacement is checking
// (CalendarEntry.Next), leaves r no occurrence (see leavesNone); nil
// otherwise, and when r names no calendar.
func (s *Scheduler) calendarFault(col *CollectionRecord, r *JobRecord) error {
	cname := r.Job.Recurrence.Ext().Calendar
	if cname == "" {
		return nil
	}
	e := col.Definition.Calendars[cname]
	now := time.Now()
	if e == nil || e.BeingDeleted(now) {
		return calendarDeleted(r)
	}
	excl := s.policies.compile(s, col.Name, cname, e)
	if leavesNone(r, excl, now) {
		return calendarReplaced(r)
	}
	if next := e.Pending(now); next != nil {
		if excl, err := next.Calendar.CompileStored(); err == nil && leavesNone(r, excl, now) {
			return calendarReplaced(r)
		}
	}
	return nil
}

// calendarReplaced is the error of a put of r undone by recheckPut
// because the calendar r names was replaced meanwhile by a version that
// leaves r no occurrence.
func calendarReplaced(r *JobRecord) error {
	return &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(r.Job.Recurrence.Ext().Calendar),
		Reason: "was replaced while the job was written, by a version that leaves it no occurrence within " + horizonWords + " from now; the write was undone"}
}

// calendarDeleted is the error of a put of r undone by recheckPut.
func calendarDeleted(r *JobRecord) error {
	return &ValidationError{Path: "recurrence.calendar", Value: strconv.Quote(r.Job.Recurrence.Ext().Calendar),
		Reason: "was deleted while the job was written; the write was undone"}
}

// undoPut puts back old, what a put that wrote r replaced (nil: deletes
// the job r created), when r's version is still the stored one (see
// recheckPut); a failure is logged. A job written again since r is left
// alone: that write is checked on its own. A created job is deleted only
// while it holds r's ETag, which the store's delete checks (any later
// write changed it).
func (s *Scheduler) undoPut(ctx context.Context, st TxStore, old, r *JobRecord) {
	var err error
	if old == nil {
		if err = st.DeleteJob(ctx, r.Collection, r.Name, r.ETag); errors.Is(err, ErrNotFound) || errors.Is(err, ErrPreconditionFailed) {
			return
		}
	} else {
		u := old.Clone()
		u.Version = r.Version
		if err = st.PutJob(ctx, u); errors.Is(err, ErrConflict) {
			return
		}
	}
	if err != nil {
		s.log.Error("undo the write of a job that its collection no longer allows", "collection", r.Collection, "job", r.Name,
			"calendar", r.Job.Recurrence.Ext().Calendar, "err", err)
	}
}
