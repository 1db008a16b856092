package recurrence

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Exclusions is a compiled exclusion calendar: the local dates, spans of
// local time and recurring dates on which a job that names the calendar
// does not run. Build one with [CompileExclusions]. It is immutable and
// safe for concurrent use.
type Exclusions struct {
	loc    *time.Location
	dates  []int64    // excluded local dates as days since 1970-01-01, sorted
	ranges [][2]int64 // [start, end) local wall times as seconds of a UTC clock, sorted by start
	rules  []*Rule
}

// ExclusionRange is a span of local wall time, Start included and End
// excluded, read in the calendar's zone.
type ExclusionRange struct {
	Start, End time.Time // wall clock readings; their zone is ignored
}

// RulesStart is the start from which an exclusion calendar's rules count
// their intervals: midnight of 1 January 2000 in the calendar's zone.
var RulesStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// CompileExclusions returns the exclusion calendar of loc (nil: UTC) that
// excludes each of dates (their year, month and day; the rest is
// ignored), each local span of ranges, and every local date on which one of
// rules has an occurrence, counted from [RulesStart] in loc. A rule that
// does not compile is an error naming its index ("rules[1]: ...").
func CompileExclusions(loc *time.Location, dates []time.Time, ranges []ExclusionRange, rules []*Recurrence) (*Exclusions, error) {
	if loc == nil {
		loc = time.UTC
	}
	e := &Exclusions{loc: loc}
	for _, d := range dates {
		e.dates = append(e.dates, dayNumber(d.Year(), d.Month(), d.Day()))
	}
	slices.Sort(e.dates)
	e.dates = slices.Compact(e.dates)
	for _, r := range ranges {
		e.ranges = append(e.ranges, [2]int64{wallSeconds(r.Start), wallSeconds(r.End)})
	}
	slices.SortFunc(e.ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	start := time.Date(RulesStart.Year(), RulesStart.Month(), RulesStart.Day(), 0, 0, 0, 0, loc)
	for i, r := range rules {
		c := CalendarRule(r)
		c.TimeZone = loc.String()
		rule, err := Compile(c, start)
		if err != nil {
			return nil, fmt.Errorf("rules[%d]: %w", i, err)
		}
		e.rules = append(e.rules, rule)
	}
	return e, nil
}

// CalendarRule returns a copy of r, a rule of an exclusion calendar, as
// it is compiled: a yearly rule with an interval of 1 and monthDays or
// monthlyOccurrences is read as the monthly rule of the same months
// ({"frequency": "Year", "schedule": {"months": [5], "monthDays": [1]}}
// is the first of May of every year), since a Year recurrence does not
// take those members. Count, endTime and window are dropped.
func CalendarRule(r *Recurrence) *Recurrence {
	c := r.Clone()
	c.Count, c.EndTime, c.Window = 0, nil, 0
	if c.Frequency == Year && c.Interval <= 1 && c.Schedule != nil &&
		(len(c.Schedule.MonthDays) > 0 || len(c.Schedule.MonthlyOccurrences) > 0) {
		c.Frequency, c.Interval = Month, 1
	}
	return c
}

// dayNumber returns the days from 1970-01-01 to the date.
func dayNumber(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// wallSeconds returns t's wall clock reading as seconds of a UTC clock.
func wallSeconds(t time.Time) int64 {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, 0, time.UTC).Unix()
}

// Location returns the zone in which e reads dates and spans.
func (e *Exclusions) Location() *time.Location { return e.loc }

// Excludes reports whether e excludes the instant t: its local date (in
// e's zone) is one of the dates or a date on which a rule has an
// occurrence, or its local wall time lies in one of the ranges.
func (e *Exclusions) Excludes(t time.Time) bool {
	l := t.In(e.loc)
	y, m, d := l.Date()
	if _, ok := slices.BinarySearch(e.dates, dayNumber(y, m, d)); ok {
		return true
	}
	if len(e.ranges) > 0 {
		w := wallSeconds(l)
		for _, r := range e.ranges {
			if r[0] > w {
				break
			}
			if w < r[1] {
				return true
			}
		}
	}
	if len(e.rules) > 0 {
		day := time.Date(y, m, d, 0, 0, 0, 0, e.loc)
		end := time.Date(y, m, d+1, 0, 0, 0, 0, e.loc)
		for _, r := range e.rules {
			if n := r.Next(day.Add(-time.Nanosecond)); !n.IsZero() && n.Before(end) {
				return true
			}
		}
	}
	return false
}
