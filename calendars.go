package scheduler

import (
	"context"
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
}

// calendarNotFound is the error of a calendar that does not exist.
func calendarNotFound(collection, name string) error {
	return &NotFoundError{Collection: collection, Calendar: name}
}

// PutCalendar creates or replaces the exclusion calendar name of the
// collection, which must exist (ErrNotFound naming it). An invalid
// definition fails with ErrInvalid (joined [*ValidationError] values whose
// paths start at the calendar object, "properties.dates[0]"). The calendar
// is kept in the collection's record, so the write is one atomic write of
// the collection (its ETag changes too). opts may be nil.
//
// A calendar that jobs of the collection name changes their occurrences
// from their next one on (see the package documentation, "Exclusion
// calendars"). A replacement that would leave one of them no occurrence
// within [recurrence.CalendarHorizon] from now fails with ErrInvalid at
// "properties", naming the jobs.
func (s *Scheduler) PutCalendar(ctx context.Context, collection, name string, def *Calendar, opts *PutCalendarOptions) (*CalendarRecord, error) {
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
	excl, err := def.Compile()
	if err != nil {
		return nil, err
	}
	etag := newETag()
	created := false
	_, err = s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if err := preconditions("calendar", name, opts.IfMatch, etagOfCalendar(e), e != nil); err != nil {
			return nil, err
		}
		created = e == nil
		if !created {
			if err := s.checkCalendarJobs(ctx, collection, name, excl); err != nil {
				return nil, err
			}
		}
		c := old.Definition.Clone()
		if c.Calendars == nil {
			c.Calendars = make(map[string]*CalendarEntry)
		}
		c.Calendars[name] = &CalendarEntry{ETag: etag, Calendar: *def.Clone()}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return &CalendarRecord{Collection: collection, Name: name, Calendar: *def.Clone(), ETag: etag, Created: created}, nil
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
		plain, err := j.Job.Timing(j.Collection, j.Name, j.Schedule.Anchor)
		if err != nil {
			continue
		}
		under, err := j.Job.TimingUnder(j.Collection, j.Name, j.Schedule.Anchor, excl)
		if err != nil {
			continue
		}
		if !plain.Next(now).IsZero() && under.Next(now).IsZero() {
			bad = append(bad, j.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &ValidationError{Path: "properties", Reason: "leaves " + jobList(bad) + " no occurrence: it excludes every one within " + horizonWords + " from now"}
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

// DeleteCalendar deletes the calendar, or fails with an error matching
// ErrNotFound when it (or its collection) does not exist, and with a
// [*CalendarInUseError] (matching ErrCalendarInUse) naming the jobs that
// name it while there are any (jobs in a final state do not count).
func (s *Scheduler) DeleteCalendar(ctx context.Context, collection, name string) error {
	if err := checkName("collection", collection); err != nil {
		return err
	}
	_, err := s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		if old.Definition.Calendars[name] == nil {
			return nil, calendarNotFound(collection, name)
		}
		jobs, err := s.jobsNaming(ctx, collection, name)
		if err != nil {
			return nil, err
		}
		if len(jobs) > 0 {
			e := &CalendarInUseError{Collection: collection, Calendar: name}
			for _, j := range jobs {
				e.Jobs = append(e.Jobs, j.Name)
			}
			return nil, e
		}
		c := old.Definition.Clone()
		delete(c.Calendars, name)
		if len(c.Calendars) == 0 {
			c.Calendars = nil
		}
		return c, nil
	})
	if err != nil {
		return fmt.Errorf("delete calendar %q of collection %q: %w", name, collection, err)
	}
	return nil
}
