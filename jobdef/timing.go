package jobdef

import (
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// Timing is a job's schedule as of its creation time: when it first runs
// and when it runs after that. Get one with [Job.Timing]. It is safe for
// concurrent use.
//
// The rules (startTime absent means the creation time stands in for it):
//
//   - No recurrence: one occurrence, at startTime, or at the creation
//     time when startTime has passed ("run once immediately").
//
//   - Recurrence without a schedule: occurrences lie on the grid of
//     startTime plus whole intervals; the first is the first grid point at
//     or after the creation time. With startTime 2015-04-07T14:00Z, every
//     2 days, and a job created 2015-04-08T13:00Z, that is 2015-04-09T14:00Z.
//
//   - Recurrence with a schedule: the first schedule match at or after the
//     later of startTime and the creation time; interval periods count from
//     startTime's period.
//
//   - Recurrence with a window: each of those instants is the scheduled
//     one, and the occurrence runs at the planned instant, the scheduled
//     one plus its offset (see [recurrence.CompileJob]). Every instant a
//     Timing returns is a planned one: the first is the first planned
//     instant at or after the later of startTime and the creation time,
//     and count and endTime apply to planned instants.
//
//   - Recurrence with a calendar (a Timing from [Job.TimingUnder]): the
//     calendar judges each of those instants (the planned one, with a
//     window) and onExcluded skips an excluded one or moves it to the same
//     wall time on the next or previous day the calendar does not exclude
//     (see [recurrence.Placement.Next] for the order they keep and
//     how two moved onto one instant run once). Every instant a Timing
//     returns is one at which an occurrence runs: a moved one where it was
//     moved to.
//
// count counts occurrences from the first one; endTime is inclusive; when
// both are given, whichever ends the job first wins. An endTime before the
// first occurrence leaves no occurrence at all. With a calendar, endTime
// bounds the scheduled instants, and count the occurrences that run.
// Instants are in UTC, whatever the recurrence's timeZone, as stores keep
// them.
type Timing struct {
	rule  *recurrence.Rule // nil without recurrence
	first time.Time
	count int
	cal   *timingCalendar // nil without a calendar
}

// timingCalendar is the exclusion calendar a Timing follows.
type timingCalendar struct {
	name string
	on   recurrence.OnExcluded
	p    *recurrence.Placement
	excl *recurrence.Exclusions
}

// Timing returns the timing of j, the job named name in collection
// collection, created (or last put) at created. The names decide the
// offsets of a recurrence's window (see [recurrence.CompileJob]); a job
// without one runs at the same instants whatever its names. Timing fails
// only when the recurrence does not compile; a job that passed
// [ParseJob] or [Job.Validate] always has a timing.
func (j *Job) Timing(collection, name string, created time.Time) (*Timing, error) {
	return j.TimingUnder(collection, name, created, nil)
}

// TimingUnder is [Job.Timing] with the exclusion calendar that the job's
// recurrence names (recurrence.calendar) compiled as cal: the occurrences
// it excludes are skipped or moved as recurrence.onExcluded says. A nil
// cal, or a job that names no calendar, gives the timing Timing gives.
func (j *Job) TimingUnder(collection, name string, created time.Time, cal *recurrence.Exclusions) (*Timing, error) {
	created = created.Round(0) // drop the monotonic reading
	start := created
	if j.StartTime != nil {
		start = *j.StartTime
	}
	from := start
	if created.After(from) {
		from = created
	}
	if j.Recurrence == nil {
		t := j.oneTimeTiming(created)
		return &t, nil
	}
	rule, err := recurrence.CompileJob(j.Recurrence, start, collection, name)
	if err != nil {
		return nil, fmt.Errorf("scheduler: job timing: %w", err)
	}
	t := &Timing{rule: rule, count: int(j.Recurrence.Count)}
	if x := j.Recurrence.Ext(); cal != nil && x.Calendar != "" {
		t.cal = &timingCalendar{name: x.Calendar, on: x.OnExcluded, p: cal.Apply(rule, x.OnExcluded), excl: cal}
	}
	t.first = t.next(from.Add(-time.Nanosecond))
	if c := t.cal; c != nil {
		// The first occurrence is one the rule gives at or after from: one
		// given before it (before the job existed) and moved past it by
		// NextIncluded does not run.
		for after := from.Add(-time.Nanosecond); ; {
			s, at := c.p.Next(after)
			if at.IsZero() || !s.Before(from) {
				t.first = at.UTC()
				break
			}
			after = at
		}
	}
	return t, nil
}

// next is the recurrence's next occurrence after after, under the
// calendar when there is one, in UTC.
func (t *Timing) next(after time.Time) time.Time {
	if c := t.cal; c != nil {
		_, at := c.p.Next(after)
		return at.UTC()
	}
	return t.rule.Next(after).UTC()
}

// Calendar returns the name of the exclusion calendar t follows; empty
// when it follows none.
func (t *Timing) Calendar() string {
	if t.cal == nil {
		return ""
	}
	return t.cal.name
}

// OnExcluded returns what becomes of the occurrences t's calendar
// excludes (empty means Skip, as without a calendar).
func (t *Timing) OnExcluded() recurrence.OnExcluded {
	if t.cal == nil {
		return ""
	}
	return t.cal.on
}

// Skipped counts the occurrences of the recurrence scheduled strictly
// between after and before (zero: without end) that do not run because
// t's calendar excludes them (see [recurrence.Placement.Skipped]), at
// most limit of them; it returns how many, the first and the last. It is
// 0 without a calendar.
func (t *Timing) Skipped(after, before time.Time, limit int) (n int, first, last time.Time) {
	if t.cal == nil || t.rule == nil {
		return 0, time.Time{}, time.Time{}
	}
	n, first, last = t.cal.p.Skipped(after, before, limit)
	return n, first.UTC(), last.UTC()
}

// Dropped yields, in order, the instants the recurrence schedules
// strictly between two consecutive occurrences prev and at (instants
// [Timing.Next] returned; prev may also be the instant before the
// first) at which no occurrence runs because t's calendar excludes them,
// with merged set when the occurrence runs as a neighbouring one (moved
// onto or past it) rather than not at all. It yields nothing without a
// calendar.
func (t *Timing) Dropped(prev, at time.Time) iter.Seq2[time.Time, bool] {
	return func(yield func(time.Time, bool) bool) {
		c := t.cal
		if c == nil || t.rule == nil {
			return
		}
		from, to := prev, at
		if s, moved := t.Moved(prev); moved {
			from = s
		}
		if s, moved := t.Moved(at); moved {
			to = s
		}
		for s := t.rule.Next(from); !s.IsZero() && s.Before(to); s = t.rule.Next(s) {
			if n, _, _ := c.p.Skipped(s.Add(-time.Nanosecond), s.Add(time.Nanosecond), 1); n == 1 {
				if !yield(s.UTC(), false) {
					return
				}
			} else if !yield(s.UTC(), true) {
				return
			}
		}
	}
}

// Moved reports whether t's calendar moved the occurrence that runs at
// at (an instant [Timing.Next] returned), and from where: the instant
// the recurrence gave for it. It is false without a calendar.
func (t *Timing) Moved(at time.Time) (from time.Time, moved bool) {
	if t.cal == nil || t.rule == nil {
		return time.Time{}, false
	}
	s, p := t.cal.p.Next(at.Add(-time.Nanosecond))
	if !p.Equal(at) || s.Equal(p) {
		return time.Time{}, false
	}
	return s.UTC(), true
}

// Replan returns the instant at which the occurrence planned at planned
// runs under t, when planned was placed by another Timing of the same job
// that differs from t only in its calendar (another version of it, or
// none): the first occurrence of t whose scheduled instant (the one the
// recurrence gives, before any move) is at or after the one planned was
// scheduled at, and which runs after the occurrence scheduled before that
// one. scheduled is that instant of planned: planned itself, or the
// instant the recurrence gave before onExcluded moved it (the one before
// planned for NextIncluded, the one after it for PreviousIncluded; a
// moved occurrence lies strictly between its scheduled instant and the
// neighbouring one). So an occurrence the new calendar excludes is skipped
// or moved again, one moved by the old calendar goes back to its instant
// when the new one no longer excludes it, and an occurrence is never
// planned at or before one that ran already.
//
// at is zero when no occurrence is left (endTime, or the calendar
// excludes every one within [recurrence.CalendarHorizon]); at is planned
// when t places it there already, so Replan is the identity on the
// instants t itself returns. Replan returns planned as it is when t
// follows no calendar, or planned is zero.
func (t *Timing) Replan(planned time.Time) (at, scheduled time.Time) {
	c := t.cal
	if c == nil || t.rule == nil || planned.IsZero() {
		return planned, planned
	}
	r := t.rule
	planned = planned.UTC()
	scheduled = planned
	s := r.Next(planned.Add(-time.Nanosecond))
	if s.Equal(planned) && !c.excl.Excludes(planned) {
		// An instant of the rule that the calendar does not exclude: the
		// occurrence runs there (one moved onto it runs as it).
		return planned, planned
	}
	if !s.Equal(planned) {
		switch c.on {
		case recurrence.OnExcludedNextIncluded:
			if s := ruleBefore(r, planned); !s.IsZero() {
				scheduled = s
			}
		case recurrence.OnExcludedPreviousIncluded:
			if !s.IsZero() {
				scheduled = s
			}
		}
	}
	after := ruleBefore(r, scheduled)
	if after.IsZero() {
		// None that close: from where a move of scheduled may go.
		after = scheduled.Add(-(recurrence.MaxMoveDays + 1) * 24 * time.Hour)
	}
	for {
		s, p := c.p.Next(after)
		if p.IsZero() {
			return time.Time{}, scheduled.UTC()
		}
		if !s.Before(scheduled) {
			at = p.UTC()
			if at.Before(t.first) {
				at = t.first
			}
			return at, scheduled.UTC()
		}
		after = p
	}
}

// lookBack is how far ruleBefore looks for an instant of a rule: twice as
// far as an occurrence may be moved, so that the instant before a moved
// occurrence's scheduled one is found.
const lookBack = 2 * (recurrence.MaxMoveDays + 1) * 24 * time.Hour

// ruleBefore returns the last instant r gives strictly before t, looking
// back at most lookBack; zero when there is none that close.
func ruleBefore(r *recurrence.Rule, t time.Time) time.Time {
	for g := time.Second; ; g *= 2 {
		g = min(g, lookBack)
		if s := r.Next(t.Add(-g - time.Nanosecond)); !s.IsZero() && s.Before(t) {
			for {
				n := r.Next(s)
				if n.IsZero() || !n.Before(t) {
					return s
				}
				s = n
			}
		}
		if g == lookBack {
			return time.Time{}
		}
	}
}

// Rule returns the job's compiled recurrence, whose [recurrence.Rule.Shifted]
// and [recurrence.Rule.Repeated] tell which occurrences a daylight saving
// change moved or repeated; nil for a job without recurrence.
func (t *Timing) Rule() *recurrence.Rule { return t.rule }

// TimingIn is [Job.TimingUnder] writing the timing in *t rather than in a
// new Timing, for a caller that keeps it only for a while and makes many:
// the engine, once per occurrence of a job without recurrence (whose timing
// costs less to make than to look up). On error *t is left as it was.
func (j *Job) TimingIn(t *Timing, collection, name string, created time.Time, cal *recurrence.Exclusions) error {
	if j.Recurrence == nil {
		*t = j.oneTimeTiming(created)
		return nil
	}
	n, err := j.TimingUnder(collection, name, created, cal)
	if err != nil {
		return err
	}
	*t = *n
	return nil
}

// oneTimeTiming is Timing for a job without recurrence, as a value.
func (j *Job) oneTimeTiming(created time.Time) Timing {
	from := created.Round(0)
	if j.StartTime != nil && j.StartTime.After(from) {
		from = *j.StartTime
	}
	return Timing{first: from.UTC(), count: 1}
}

// First returns the first occurrence, or the zero Time when the job has
// none (its endTime lies before it).
func (t *Timing) First() time.Time { return t.first }

// Next returns the first occurrence strictly after after: First when after
// is before it, else the next one of the recurrence. It returns the zero
// Time when there is none (no recurrence, or past endTime). Next does not
// apply count, which counts occurrences that ran; the caller keeps that
// tally and compares it with [Timing.Count].
func (t *Timing) Next(after time.Time) time.Time {
	switch {
	case t.first.IsZero():
		return time.Time{}
	case after.Before(t.first):
		return t.first
	case t.rule == nil:
		return time.Time{}
	}
	return t.next(after)
}

// Count returns the most occurrences the job runs: 1 without a
// recurrence, else the recurrence's count, where 0 means no limit.
func (t *Timing) Count() int { return t.count }

// Occurrences yields the job's occurrences in order: First, then each
// Next, stopping after Count occurrences (when Count > 0) or past endTime.
func (t *Timing) Occurrences() iter.Seq[time.Time] {
	return t.from(t.first, t.count)
}

// From yields first, which must be an occurrence of t (or zero: nothing),
// and the occurrences after it, without the limit of count: the walk of
// occurrences that a scheduler passes over, which do not count.
func (t *Timing) From(first time.Time) iter.Seq[time.Time] { return t.from(first, 0) }

// from yields first and the occurrences after it, at most limit of them
// (0: no limit).
func (t *Timing) from(first time.Time, limit int) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		n := 0
		for at := first; !at.IsZero(); {
			if !yield(at) {
				return
			}
			n++
			if limit > 0 && n >= limit {
				return
			}
			next := t.Next(at)
			if !next.After(at) {
				return
			}
			at = next
		}
	}
}

// Location returns the time zone in which the job's schedule is read: the
// recurrence's timeZone, or UTC without one (or when it names no zone this
// host knows).
func (j *Job) Location() *time.Location {
	if j.Recurrence == nil {
		return time.UTC
	}
	loc, err := recurrence.LoadTimeZone(j.Recurrence.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Describe says in words when a job created (or last put) at created runs:
// its recurrence as [recurrence.Recurrence.Describe] says it, counted from
// startTime or else from created ("every week on Monday at 10:00 (UTC)"),
// followed, when it names an exclusion calendar, by what the calendar
// does (", except on the days calendar “holidays” excludes (moved to the
// next day it does not exclude)"); without a recurrence, "once at 4 Aug
// 2012 00:00 (UTC)", or "once, when created" without startTime. A zero
// created is an unknown creation time.
func (j *Job) Describe(created time.Time) string {
	start := created
	if j.StartTime != nil {
		start = *j.StartTime
	}
	if j.Recurrence != nil {
		return j.Recurrence.Describe(start) + calendarWords(j.Recurrence.Ext())
	}
	if j.StartTime == nil || !created.IsZero() && !j.StartTime.After(created) {
		return "once, when created"
	}
	return "once at " + j.StartTime.UTC().Format("2 Jan 2006 15:04") + " (UTC)"
}

// calendarWords says what the exclusion calendar x names does to the
// occurrences, to follow the recurrence in words; empty without one.
func calendarWords(x recurrence.Extensions) string {
	if x.Calendar == "" {
		return ""
	}
	what := "skipped"
	switch {
	case strings.EqualFold(string(x.OnExcluded), string(recurrence.OnExcludedNextIncluded)):
		what = "moved to the next day it does not exclude"
	case strings.EqualFold(string(x.OnExcluded), string(recurrence.OnExcludedPreviousIncluded)):
		what = "moved to the previous day it does not exclude"
	}
	return ", except on the days calendar “" + x.Calendar + "” excludes (" + what + ")"
}
