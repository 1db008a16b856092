package scheduler

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	if err := def.Validate(); err != nil {
		return nil, err
	}
	etag := newETag()
	_, err := s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		e := old.Definition.Calendars[name]
		if err := preconditions("calendar", name, opts.IfMatch, etagOfCalendar(e), e != nil); err != nil {
			return nil, err
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
	return &CalendarRecord{Collection: collection, Name: name, Calendar: *def.Clone(), ETag: etag}, nil
}

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
// ErrNotFound when it (or its collection) does not exist.
func (s *Scheduler) DeleteCalendar(ctx context.Context, collection, name string) error {
	if err := checkName("collection", collection); err != nil {
		return err
	}
	_, err := s.writeCollection(ctx, collection, "", false, func(old *CollectionRecord) (*JobCollection, error) {
		if old.Definition.Calendars[name] == nil {
			return nil, calendarNotFound(collection, name)
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
