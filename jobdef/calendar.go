package jobdef

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/recurrence"
)

// Calendar is an exclusion calendar of a job collection, an extension
// beyond Azure Scheduler: the dates and spans of time on which the jobs
// that name it do not run as scheduled (see [recurrence.Recurrence]'s
// Calendar).
type Calendar struct {
	// Properties holds the calendar's zone and what it excludes.
	Properties CalendarProperties `json:"properties"`
}

// CalendarProperties is the "properties" object of a calendar. Any of
// Dates, Ranges, Rules and ICal may be given; a calendar with none
// excludes nothing.
type CalendarProperties struct {
	// TimeZone is the IANA (or Windows) name of the zone in which dates,
	// ranges and rules are read. Empty means UTC.
	TimeZone string `json:"timeZone,omitempty"`
	// Dates are excluded local dates, written YYYY-MM-DD.
	Dates []string `json:"dates,omitempty"`
	// Ranges are excluded spans of local time.
	Ranges []CalendarRange `json:"ranges,omitempty"`
	// Rules are recurrences in the form of a job's recurrence: each
	// local date on which one has an occurrence is excluded. Their
	// intervals count from [recurrence.RulesStart]; their timeZone is the
	// calendar's, and count, endTime and window are not allowed.
	Rules []*recurrence.Recurrence `json:"rules,omitempty"`
	// ICal is an iCalendar text (RFC 5545, "BEGIN:VCALENDAR ...
	// END:VCALENDAR") whose events are excluded: each instance of an
	// event's recurrence set (DTSTART, its RRULEs and RDATEs, less its
	// EXDATEs and EXRULEs; up to the year 2100 and at most 10,000 of
	// them), an all-day one (DTSTART;VALUE=DATE) as the local dates it
	// spans (DTEND excluded; one day without it), another as the span of
	// time from its start to DTEND (or plus DURATION, whose days are days
	// of the wall clock; an RDATE period has its own), read in the
	// calendar's zone unless it is UTC (a Z) or has a TZID: an IANA or
	// Windows name ([recurrence.LoadTimeZone]), or else the TZID of a
	// VTIMEZONE of the text, whose STANDARD and DAYLIGHT rules are
	// evaluated (from 1970); any other TZID is refused. An event with the
	// UID of another and a RECURRENCE-ID replaces that instance (of
	// several, the one of the highest SEQUENCE), and with
	// RANGE=THISANDFUTURE that one and the later ones (moved by as much
	// wall time as it is); a cancelled one (STATUS:CANCELLED) excludes
	// nothing. Transparent events (TRANSP:TRANSPARENT, as exported
	// holidays are) are excluded like the others. Other components
	// (VTODO, VJOURNAL, VALARM) and properties are ignored. Empty means
	// none.
	ICal string `json:"ical,omitempty"`
}

// CalendarRange is a span of local time in a calendar's zone, written
// YYYY-MM-DDThh:mm:ss without an offset: Start is excluded, End is not.
type CalendarRange struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// CalendarEntry is a calendar as its collection keeps it, with the ETag
// that changes on every write of it.
type CalendarEntry struct {
	ETag     string   `json:"etag"`
	Calendar Calendar `json:"calendar"`
	// Deleting is set while Scheduler.DeleteCalendar looks for jobs
	// that name the calendar: puts of jobs naming it are refused, and the
	// engine still applies it. The deletion then removes the calendar,
	// or clears the mark when jobs name it. The mark holds for
	// [MarkLifetime] from DeletingAt (see [CalendarEntry.BeingDeleted]);
	// one older, or without DeletingAt (written by a version from before
	// the mark carried its instant), is ignored.
	Deleting bool `json:"deleting,omitempty"`
	// DeletingAt is when Deleting was set; zero when it is not.
	DeletingAt time.Time `json:"deletingAt,omitzero"`
	// Next is the version that Scheduler.PutCalendar is replacing the
	// calendar with while it checks the jobs that name it: puts of jobs
	// naming the calendar must leave them an occurrence under both
	// versions, and the engine still applies Calendar. The replacement
	// then makes Next the calendar, or drops it when it leaves a job no
	// occurrence. Nil when no replacement is under way. One older than
	// [MarkLifetime] (left by a writer that stopped or lost the store)
	// is ignored.
	Next *CalendarEntry `json:"next,omitempty"`
	// At is when Next was made, on Next itself (see MarkLifetime); zero
	// on the calendar.
	At time.Time `json:"at,omitzero"`
}

// Pending returns the replacement under way of the calendar e (Next) at
// now, nil when there is none or its mark is older than [MarkLifetime].
func (e *CalendarEntry) Pending(now time.Time) *CalendarEntry {
	if e == nil || e.Next == nil || !markLive(e.Next.At, now) {
		return nil
	}
	return e.Next
}

// BeingDeleted reports whether the deletion mark of e (Deleting) holds at
// now: it was set at most [MarkLifetime] before now (DeletingAt). False
// for a nil e.
func (e *CalendarEntry) BeingDeleted(now time.Time) bool {
	return e != nil && e.Deleting && markLive(e.DeletingAt, now)
}

// Clone returns a deep copy of e; nil for a nil e.
func (e *CalendarEntry) Clone() *CalendarEntry {
	if e == nil {
		return nil
	}
	return &CalendarEntry{ETag: e.ETag, Calendar: *e.Calendar.Clone(), Deleting: e.Deleting, DeletingAt: e.DeletingAt,
		Next: e.Next.Clone(), At: e.At}
}

// Clone returns a deep copy of c; nil for a nil c.
func (c *Calendar) Clone() *Calendar {
	if c == nil {
		return nil
	}
	cp := *c
	p := &cp.Properties
	p.Dates = slices.Clone(p.Dates)
	p.Ranges = slices.Clone(p.Ranges)
	p.Rules = nil
	for _, r := range c.Properties.Rules {
		p.Rules = append(p.Rules, r.Clone())
	}
	return &cp
}

// Layouts of a calendar's dates and range ends.
const (
	calendarDate = "2006-01-02"
	calendarWall = "2006-01-02T15:04:05"
)

// Validate reports every problem with c as joined [*ValidationError]
// values whose paths start at the calendar object
// ("properties.dates[1]"): the check of a calendar to write.
func (c *Calendar) Validate() error {
	_, err := c.Compile()
	return err
}

// Compile validates c, as Validate does, and returns its exclusions: the
// compilation of a calendar to write. The error is joined
// [*ValidationError] values whose paths start at the calendar object.
func (c *Calendar) Compile() (*recurrence.Exclusions, error) {
	return c.compile(false)
}

// CompileStored returns the exclusions of c, a calendar as stored (read
// back from a collection's record), as Compile does but for what a
// previous version accepted and this one refuses on a write: an iCalendar
// RRULE or EXRULE without an occurrence before 2100 adds nothing (its
// event keeps its DTSTART instance) instead of failing the calendar, so
// that a calendar stored then still excludes its other events. Such a rule
// costs the checks of a write, not a search to the year 9999.
func (c *Calendar) CompileStored() (*recurrence.Exclusions, error) {
	return c.compile(true)
}

// compile is Compile, or CompileStored when stored is set.
func (c *Calendar) compile(stored bool) (*recurrence.Exclusions, error) {
	var errs []error
	add := func(path, value, reason string) {
		errs = append(errs, &ValidationError{Path: path, Value: value, Reason: reason})
	}
	p := c.Properties
	loc, err := recurrence.LoadTimeZone(p.TimeZone)
	if err != nil {
		add("properties.timeZone", strconv.Quote(p.TimeZone), "is not a known time zone"+didYouMeanZone(err))
		loc = time.UTC
	}
	var dates []time.Time
	for i, d := range p.Dates {
		t, err := time.Parse(calendarDate, d)
		if err != nil {
			add(fmt.Sprintf("properties.dates[%d]", i), strconv.Quote(d), "is not a date written YYYY-MM-DD")
			continue
		}
		dates = append(dates, t)
	}
	var ranges []recurrence.ExclusionRange
	for i, r := range p.Ranges {
		at := fmt.Sprintf("properties.ranges[%d]", i)
		start, err1 := time.Parse(calendarWall, r.Start)
		if err1 != nil {
			add(at+".start", strconv.Quote(r.Start), "is not a local date-time written YYYY-MM-DDThh:mm:ss")
		}
		end, err2 := time.Parse(calendarWall, r.End)
		if err2 != nil {
			add(at+".end", strconv.Quote(r.End), "is not a local date-time written YYYY-MM-DDThh:mm:ss")
		}
		if err1 == nil && err2 == nil {
			if !end.After(start) {
				add(at+".end", strconv.Quote(r.End), "is not after start "+strconv.Quote(r.Start))
				continue
			}
			ranges = append(ranges, recurrence.ExclusionRange{Start: start, End: end})
		}
	}
	var rules []*recurrence.Recurrence
	for i, r := range p.Rules {
		at := fmt.Sprintf("properties.rules[%d]", i)
		switch {
		case r == nil:
			add(at, "null", "is not a recurrence object")
			continue
		case r.Count != 0:
			add(at+".count", strconv.Itoa(int(r.Count)), "is not allowed in a calendar's rule")
		case r.EndTime != nil:
			add(at+".endTime", quoteTime(*r.EndTime), "is not allowed in a calendar's rule")
		case r.Ext().Window != 0:
			add(at+".window", strconv.Quote(r.Window.String()), "is not allowed in a calendar's rule")
		case r.Ext().Calendar != "":
			add(at+".calendar", strconv.Quote(r.Calendar), "is not allowed in a calendar's rule")
		case r.Ext().OnExcluded != "":
			add(at+".onExcluded", strconv.Quote(string(r.OnExcluded)), "is not allowed in a calendar's rule")
		case r.TimeZone != "":
			add(at+".timeZone", strconv.Quote(r.TimeZone), "is not allowed in a calendar's rule: the calendar's timeZone applies")
		default:
			var fe *recurrence.FieldError
			if _, err := recurrence.Compile(recurrence.CalendarRule(r), recurrence.RulesStart); err != nil {
				for _, err := range flatten(err) {
					if errors.As(err, &fe) {
						e := &ValidationError{Path: fe.Path, Value: fe.Value, Reason: fe.Reason, Refs: fe.Refs}
						e.Under(at)
						errs = append(errs, e)
					} else {
						add(at, "", err.Error())
					}
				}
				continue
			}
			rules = append(rules, r)
		}
	}
	if p.ICal != "" {
		d, r, problems := readICal(p.ICal, loc, stored)
		for _, pr := range problems {
			add("properties.ical", "", fmt.Sprintf("line %d: %s", pr.line, pr.reason))
		}
		dates, ranges = append(dates, d...), append(ranges, r...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return recurrence.CompileExclusions(loc, dates, ranges, rules)
}

// calendarRules are the rules a calendar is read by: the members of the
// ARM envelope around it are accepted and dropped.
var calendarRules = &codec.Rules{
	Ignored: map[reflect.Type]map[string]bool{
		reflect.TypeFor[Calendar](): {"id": true, "name": true, "type": true},
	},
}

// calendarPath is the path of problems with a calendar as a whole.
const calendarPath = "calendar"

// ParseCalendar parses and validates a calendar: {"properties": {...}},
// or the ARM envelope with "id", "name" and "type" (ignored), read as
// [ParseCollection] reads a collection.
func ParseCalendar(data []byte) (*Calendar, error) {
	c := new(Calendar)
	if err := parseObject(data, calendarRules, calendarPath, c, c.Validate,
		`a calendar is a JSON object such as {"properties": {"dates": ["2026-12-25"]}}`); err != nil {
		return nil, err
	}
	return c, nil
}

// didYouMeanZone returns the end of a message for a zone name that
// [recurrence.LoadTimeZone] refused with err: the names it suggests
// (`, did you mean "Europe/Berlin"?`), or "".
func didYouMeanZone(err error) string {
	if u, ok := errors.AsType[*recurrence.UnknownTimeZoneError](err); ok {
		return u.DidYouMean()
	}
	return ""
}
