package jobdef

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// Bounds of what an iCalendar text of a calendar may expand to: the
// occurrences of an event's RRULE are taken from recurrence.RulesStart to
// icalUntil, at most maxICalOccurrences of each, and an all-day event
// spans at most maxICalDays days; all events of a text together expand to
// at most maxICalExclusions excluded days and spans (every day from 2000
// to 2100 is fewer), so that a short text cannot make a calendar that
// takes gigabytes to build.
const (
	maxICalOccurrences = 10_000
	maxICalDays        = 3660
	maxICalExclusions  = 50_000
)

var icalUntil = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// icalProblem is a problem with an iCalendar text at a line (counted
// from 1 in the text as given, before unfolding).
type icalProblem struct {
	line   int
	reason string
}

// icalEvent is what a VEVENT says of when it is.
type icalEvent struct {
	begin                   int // the line of its BEGIN:VEVENT
	start, end, dur, rrules *icalLine
}

// readICal returns the exclusions of the VEVENTs of text read in loc (the
// calendar's zone): all-day events (DTSTART;VALUE=DATE or a date alone)
// as the local dates they span (DTEND excluded; one day without it), the
// others as spans of loc's wall time from DTSTART to DTEND (or DTSTART
// plus DURATION). A date-time with a Z is UTC, with TZID in that zone,
// else in loc. An RRULE repeats the event (see maxICalOccurrences).
// Other components, and the members of an event besides those, are
// ignored.
func readICal(text string, loc *time.Location) (dates []time.Time, ranges []recurrence.ExclusionRange, problems []icalProblem) {
	lines := unfoldICal(text)
	if len(lines) == 0 || lines[0].name != "BEGIN" || !strings.EqualFold(lines[0].value, "VCALENDAR") {
		return nil, nil, []icalProblem{{1, "is not an iCalendar text: it must begin with BEGIN:VCALENDAR"}}
	}
	top, problems := readICalComponents(lines)
	for _, cal := range top {
		if cal.name != "VCALENDAR" {
			continue
		}
		for _, c := range cal.subs {
			if c.name != "VEVENT" {
				continue
			}
			ev := &icalEvent{begin: c.begin, start: c.prop("DTSTART"), end: c.prop("DTEND"), dur: c.prop("DURATION"), rrules: c.prop("RRULE")}
			d, r, p := ev.exclusions(loc, maxICalExclusions-len(dates)-len(ranges))
			dates, ranges, problems = append(dates, d...), append(ranges, r...), append(problems, p...)
		}
	}
	slices.SortStableFunc(problems, func(a, b icalProblem) int { return cmp.Compare(a.line, b.line) })
	return dates, ranges, problems
}

// icalTime reads a DTSTART or DTEND: allDay for a date.
func icalTime(l *icalLine, loc *time.Location) (t time.Time, allDay bool, problem string) {
	v := l.value
	if strings.EqualFold(l.params["VALUE"], "DATE") || len(v) == 8 {
		d, err := time.Parse("20060102", v)
		if err != nil {
			return time.Time{}, false, fmt.Sprintf("%s %q is not a date written YYYYMMDD", l.name, v)
		}
		return d, true, ""
	}
	in := loc
	if tz := l.params["TZID"]; tz != "" {
		z, err := recurrence.LoadTimeZone(tz)
		if err != nil {
			return time.Time{}, false, fmt.Sprintf("%s TZID %q is not a known time zone", l.name, tz)
		}
		in = z
	}
	if strings.HasSuffix(v, "Z") {
		v, in = strings.TrimSuffix(v, "Z"), time.UTC
	}
	t, err := time.ParseInLocation("20060102T150405", v, in)
	if err != nil {
		return time.Time{}, false, fmt.Sprintf("%s %q is not a date (YYYYMMDD) or a date-time (YYYYMMDDThhmmss, Z for UTC)", l.name, l.value)
	}
	return t, false, ""
}

// exclusions returns what ev excludes, read in loc, or a problem when
// that is more than budget excluded days and spans.
func (ev *icalEvent) exclusions(loc *time.Location, budget int) (dates []time.Time, ranges []recurrence.ExclusionRange, problems []icalProblem) {
	fail := func(line int, reason string) ([]time.Time, []recurrence.ExclusionRange, []icalProblem) {
		return nil, nil, []icalProblem{{line, reason}}
	}
	if ev.start == nil {
		return fail(ev.begin, "VEVENT has no DTSTART")
	}
	start, allDay, p := icalTime(ev.start, loc)
	if p != "" {
		return fail(ev.start.n, p)
	}
	var length time.Duration // of a date-time event; days of an all-day one
	days := 1
	switch {
	case ev.end != nil:
		end, endAllDay, p := icalTime(ev.end, loc)
		switch {
		case p != "":
			return fail(ev.end.n, p)
		case endAllDay != allDay:
			return fail(ev.end.n, "DTEND is not of DTSTART's kind (a date, or a date-time)")
		case !end.After(start):
			return fail(ev.end.n, "DTEND is not after DTSTART")
		case allDay:
			days = int(end.Sub(start).Hours()/24 + 0.5)
		default:
			length = end.Sub(start)
		}
	case ev.dur != nil:
		d, err := retry.ParseDuration(ev.dur.value)
		if err != nil || d <= 0 {
			return fail(ev.dur.n, fmt.Sprintf("DURATION %q is not a positive duration such as P1D or PT2H", ev.dur.value))
		}
		if allDay {
			days = max(1, int(time.Duration(d).Hours()/24))
		} else {
			length = time.Duration(d)
		}
	case !allDay:
		return fail(ev.start.n, "a VEVENT with a date-time DTSTART needs DTEND or DURATION")
	}
	if days > maxICalDays {
		return fail(ev.start.n, fmt.Sprintf("the event spans more than %d days", maxICalDays))
	}
	starts := []time.Time{start}
	if l := ev.rrules; l != nil {
		opt, err := rrule.StrToROptionInLocation(l.value, start.Location())
		if err != nil {
			return fail(l.n, fmt.Sprintf("RRULE %q is not a recurrence rule: %v", l.value, err))
		}
		opt.Dtstart = start
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			return fail(l.n, fmt.Sprintf("RRULE %q is not a recurrence rule: %v", l.value, err))
		}
		starts = nil
		it := r.Iterator()
		for {
			t, ok := it()
			if !ok || !t.Before(icalUntil) {
				break
			}
			if len(starts) == maxICalOccurrences {
				return fail(l.n, fmt.Sprintf("RRULE %q has more than %d occurrences before 2100", l.value, maxICalOccurrences))
			}
			starts = append(starts, t)
		}
	}
	if n := len(starts) * days; n > budget {
		return fail(ev.begin, fmt.Sprintf("the VEVENT expands to %d excluded days or spans, more than the %d left of the %d a calendar's iCalendar text may make",
			n, max(budget, 0), maxICalExclusions))
	}
	for _, s := range starts {
		if allDay {
			for k := range days {
				dates = append(dates, s.AddDate(0, 0, k))
			}
			continue
		}
		ranges = append(ranges, recurrence.ExclusionRange{Start: s.In(loc), End: s.Add(length).In(loc)})
	}
	return dates, ranges, nil
}
