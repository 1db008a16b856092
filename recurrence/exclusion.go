package recurrence

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
)

// Exclusions is a compiled exclusion calendar: the local dates, spans of
// local time and recurring dates on which a job that names the calendar
// does not run. Build one with [CompileExclusions]. It is immutable and
// safe for concurrent use.
type Exclusions struct {
	loc    *time.Location
	zone   *zoneInfo
	dates  []int64    // excluded local dates as days since 1970-01-01, sorted
	ranges [][2]int64 // [start, end) local wall times as seconds of a UTC clock, sorted by start
	reach  []int64    // reach[i]: the latest end among ranges[:i+1]
	rules  []*Rule
	// chunks caches the excluded dates of the span from RulesStart's
	// date, chunkDays days a chunk, expanded when first asked about: bit
	// i of a chunk is its day i. Days outside the span are asked of the
	// dates and rules each time.
	chunks [spanChunks]atomic.Pointer[[chunkDays / 64]uint64]
	// period is the zone period that Excludes met last (never nil; at
	// first an empty one): the next instant in it needs no zone lookup.
	period atomic.Pointer[zonePeriod]
}

// periodOf returns the period of e's zone that holds instant u (Unix
// seconds).
func (e *Exclusions) periodOf(u int64) *zonePeriod {
	p := e.period.Load()
	if u < p.start || u >= p.end {
		p = e.meetPeriod(u)
	}
	return p
}

// meetPeriod is periodOf of an instant outside the period met last; it
// remembers the period it returns.
func (e *Exclusions) meetPeriod(u int64) *zonePeriod {
	p := e.zone.period(u)
	e.period.Store(&p)
	return &p
}

// The span of days whose exclusion is cached: about 200 years from
// RulesStart.
const (
	chunkDays  = 512
	spanChunks = 143
	day0       = 10957 // RulesStart as days since 1970-01-01
)

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
	e := &Exclusions{loc: loc, zone: zoneOf(loc)}
	e.period.Store(&zonePeriod{})
	for _, d := range dates {
		e.dates = append(e.dates, dayNumber(d.Year(), d.Month(), d.Day()))
	}
	slices.Sort(e.dates)
	e.dates = slices.Compact(e.dates)
	for _, r := range ranges {
		e.ranges = append(e.ranges, [2]int64{wallSeconds(r.Start), wallSeconds(r.End)})
	}
	slices.SortFunc(e.ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	for i, r := range e.ranges {
		e.reach = append(e.reach, r[1])
		if i > 0 {
			e.reach[i] = max(r[1], e.reach[i-1])
		}
	}
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
// take those members. Count, endTime, window, calendar and onExcluded
// are dropped.
func CalendarRule(r *Recurrence) *Recurrence {
	c := r.Clone()
	c.Count, c.EndTime, c.Extensions = 0, nil, nil
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
func (e *Exclusions) Excludes(t time.Time) bool { return e.excludes(t.Unix()) }

// excludes is Excludes of the instant u, in Unix seconds.
func (e *Exclusions) excludes(u int64) bool {
	p := e.period.Load() // periodOf, written out: this is the hot path
	if u < p.start || u >= p.end {
		p = e.meetPeriod(u)
	}
	w := u + p.off // the local wall time as seconds of a UTC clock
	if len(e.ranges) > 0 {
		// The ranges that start at or before w are ranges[:i]; one of
		// them holds w when the latest end among them is after it.
		i, _ := slices.BinarySearchFunc(e.ranges, w+1, func(r [2]int64, t int64) int { return cmp.Compare(r[0], t) })
		if i > 0 && e.reach[i-1] > w {
			return true
		}
	}
	return e.dayExcluded(floorDiv(w, 86400))
}

// dayExcluded reports whether e excludes the local date dn (days since
// 1970-01-01) as a whole, from the cached chunks within their span.
func (e *Exclusions) dayExcluded(dn int64) bool {
	if i := uint64(dn - day0); i < spanChunks*chunkDays { // unsigned: a day before day0 is out too
		if bits := e.chunks[i/chunkDays].Load(); bits != nil {
			return bits[i%chunkDays/64]>>(i%64)&1 != 0
		}
	}
	return e.dayExcludedFirst(dn)
}

// dayExcludedFirst is dayExcluded of a day whose chunk has not been
// expanded yet, or that lies outside the span of chunks.
func (e *Exclusions) dayExcludedFirst(dn int64) bool {
	if len(e.dates) == 0 && len(e.rules) == 0 {
		return false
	}
	if i := uint64(dn - day0); i < spanChunks*chunkDays {
		c := &e.chunks[i/chunkDays]
		bits := c.Load()
		if bits == nil {
			bits = e.chunk(day0 + int64(i/chunkDays*chunkDays))
			c.Store(bits)
		}
		k := i % chunkDays
		return bits[k/64]&(1<<(k%64)) != 0
	}
	return e.excludesDay(dn)
}

// excludedUntil returns an instant after t, which e excludes, before
// which every instant from t on is excluded too: the first at which the
// zone's clocks read the end of the excluded span of wall time that holds
// t's reading (looked for up to CalendarHorizon after it), or an earlier
// one at which the clocks go back to a reading before t's.
func (e *Exclusions) excludedUntil(t time.Time) time.Time {
	x := t.Unix()
	p := *e.periodOf(x)
	w := x + p.off
	end := w
	for {
		next := end
		if len(e.ranges) > 0 {
			i, _ := slices.BinarySearchFunc(e.ranges, end+1, func(r [2]int64, t int64) int { return cmp.Compare(r[0], t) })
			if i > 0 && e.reach[i-1] > end {
				next = e.reach[i-1] // the range that reaches furthest holds [end, reach)
			}
		}
		if dn := floorDiv(end, 86400); e.dayExcluded(dn) {
			next = max(next, (dn+1)*86400)
		}
		if next == end {
			break
		}
		if end = next; end-w > int64(CalendarHorizon/time.Second) {
			break
		}
	}
	end = max(end, w+1) // t's second is excluded, as t is
	// Walk the zone's periods from t's: in period p, the instants from x
	// on read from x+p.off up to p.end+p.off.
	for {
		if u := end - p.off; u < p.end {
			return time.Unix(max(u, x), 0)
		}
		x = p.end
		p = e.zone.period(x)
		if x+p.off < w {
			return time.Unix(x, 0)
		}
	}
}

// dayStart returns the first instant of the local date dn (days since
// 1970-01-01): its midnight, or the end of a gap that holds midnight.
func (e *Exclusions) dayStart(dn int64) time.Time {
	return time.Unix(e.zone.instant(dn*86400), 0)
}

// excludesDay reports whether e excludes the local date dn (days since
// 1970-01-01) as a whole: it is one of the dates, or a rule has an
// occurrence on it.
func (e *Exclusions) excludesDay(dn int64) bool {
	if _, ok := slices.BinarySearch(e.dates, dn); ok {
		return true
	}
	day, end := e.dayStart(dn), e.dayStart(dn+1)
	for _, r := range e.rules {
		if n := r.Next(day.Add(-time.Nanosecond)); !n.IsZero() && n.Before(end) {
			return true
		}
	}
	return false
}

// chunk returns the excluded dates among the chunkDays local dates from
// first (days since 1970-01-01), as bits: bit i for the day first+i. It
// asks each rule for at most one occurrence a day.
func (e *Exclusions) chunk(first int64) *[chunkDays / 64]uint64 {
	var bits [chunkDays / 64]uint64
	set := func(dn int64) {
		if i := dn - first; i >= 0 && i < chunkDays {
			bits[i/64] |= 1 << (i % 64)
		}
	}
	for _, dn := range e.dates {
		set(dn)
	}
	end := e.dayStart(first + chunkDays)
	for _, r := range e.rules {
		after := e.dayStart(first).Add(-time.Nanosecond)
		for {
			n := r.Next(after)
			if n.IsZero() || !n.Before(end) {
				break
			}
			ly, lm, ld := n.In(e.loc).Date()
			set(dayNumber(ly, lm, ld))
			after = e.dayStart(dayNumber(ly, lm, ld) + 1).Add(-time.Nanosecond)
		}
	}
	return &bits
}

// OnExcluded says what becomes of an occurrence that an exclusion calendar
// excludes. Unknown values survive unmarshalling so that validation can
// report them; use [OnExcluded.Valid] to check.
type OnExcluded string

// The ways of handling an excluded occurrence, in their canonical spelling.
const (
	// OnExcludedSkip drops the occurrence.
	OnExcludedSkip OnExcluded = "Skip"
	// OnExcludedNextIncluded moves it to the same wall time on the next
	// day that the calendar does not exclude.
	OnExcludedNextIncluded OnExcluded = "NextIncluded"
	// OnExcludedPreviousIncluded moves it to the same wall time on the
	// previous day that the calendar does not exclude ("the last
	// business day of the month": monthDays [-1] with a calendar of
	// weekends and holidays).
	OnExcludedPreviousIncluded OnExcluded = "PreviousIncluded"
)

var onExcludedValues = []OnExcluded{OnExcludedSkip, OnExcludedNextIncluded, OnExcludedPreviousIncluded}

// Valid reports whether o is a known value in canonical spelling.
func (o OnExcluded) Valid() bool { return slices.Contains(onExcludedValues, o) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (o *OnExcluded) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, o, onExcludedValues) }

// MaxMoveDays is how many days [Exclusions.Place] looks for a day the
// calendar does not exclude before it gives up on an occurrence.
const MaxMoveDays = 366

// Place returns the instant at which an occurrence scheduled at t runs
// under e and on: t itself when e does not exclude t; with
// OnExcludedNextIncluded (OnExcludedPreviousIncluded), the same wall
// time in e's zone on the first later (earlier) day, within MaxMoveDays,
// at which e does not exclude it. ok is false when the occurrence does not
// run: on is OnExcludedSkip (or empty, which means Skip), or no such day
// was found. On the day it moves to, a wall time that a daylight saving
// change skips runs shifted by the gap (02:30 on a spring-forward day
// becomes 03:30) and one that occurs twice runs at the first of the two
// instants, as the times a rule fixes do (see the package documentation).
func (e *Exclusions) Place(t time.Time, on OnExcluded) (at time.Time, ok bool) {
	return e.place(t, on.step(), time.Time{})
}

// step returns the days by which o moves an excluded occurrence: 1 for
// OnExcludedNextIncluded, -1 for OnExcludedPreviousIncluded, 0 when it
// does not move it.
func (o OnExcluded) step() int {
	switch o {
	case OnExcludedNextIncluded:
		return 1
	case OnExcludedPreviousIncluded:
		return -1
	}
	return 0
}

// place is Place, moving by step days at a time, looking no further
// than bound (zero: MaxMoveDays): a day whose instant is at or past bound
// is not looked at.
func (e *Exclusions) place(t time.Time, step int, bound time.Time) (at time.Time, ok bool) {
	if !e.Excludes(t) {
		return t, true
	}
	return e.move(t, step, bound)
}

// move is place of an instant t that e excludes.
func (e *Exclusions) move(t time.Time, step int, bound time.Time) (at time.Time, ok bool) {
	if step == 0 {
		return time.Time{}, false
	}
	// Instants as Unix seconds, and the nanoseconds of t (every candidate
	// keeps them) and of bound.
	u, ns := t.Unix(), int64(t.Nanosecond())
	bounded, bu, bns := !bound.IsZero(), bound.Unix(), int64(bound.Nanosecond())
	p := e.periodOf(u)
	w := u + p.off // the wall clock in e's zone, as seconds of a UTC clock
	jump := int64(e.zone.maxJump / time.Second)
	for k := 1; k <= MaxMoveDays; k++ {
		cw := w + int64(k*step)*86400
		x := cw - p.off
		if x < p.start+jump || x >= p.end-jump {
			// Near a change of the zone's offset, or past the period
			// that the previous day's candidate lay in (within it, a jump
			// away from its ends, the clocks read cw at x alone). A
			// reading in a gap runs shifted by it, one that occurs twice
			// at its first instant, as a rule's fixed times do.
			x = e.zone.instant(cw)
			p = e.periodOf(x)
		}
		if bounded && (step > 0 && (x > bu || x == bu && ns >= bns) || step < 0 && (x < bu || x == bu && ns <= bns)) {
			return time.Time{}, false
		}
		if !e.excludes(x) {
			return time.Unix(x, ns).In(t.Location()), true
		}
	}
	return time.Time{}, false
}

// CalendarHorizon bounds the search for an occurrence that runs under an
// exclusion calendar: [Placement.Next] looks at the scheduled
// instants up to this long after the instant it is given, and reports
// none when the calendar excludes (or merges) all of them. Validation
// refuses a calendar that leaves a job no occurrence within it.
const CalendarHorizon = 2 * 366 * 24 * time.Hour

// Placement is a rule's occurrences under an exclusion calendar, the
// excluded ones skipped or moved as an [OnExcluded] says. Make one with
// [Exclusions.Apply]. It is safe for concurrent use.
type Placement struct {
	rule *Rule
	excl *Exclusions
	step int // OnExcluded.step of its onExcluded
	// last is an instant Next returned under NextIncluded (Unix
	// nanoseconds; 0: none): Next of it needs no look back for an earlier
	// occurrence moved past it.
	last atomic.Int64
}

// Apply returns the occurrences of r under e, the excluded ones handled as
// on says (empty: Skip).
func (e *Exclusions) Apply(r *Rule, on OnExcluded) *Placement {
	return &Placement{rule: r, excl: e, step: on.step()}
}

// Next returns the first occurrence that runs strictly after after: at
// is the instant it runs at, s the instant the rule gives for it (they
// differ when the occurrence was moved). Both are zero when there is none
// among the instants the rule gives within CalendarHorizon after after.
//
// Moved occurrences keep their order: one moved by OnExcludedNextIncluded
// must run before the next instant the rule gives, and one moved by
// OnExcludedPreviousIncluded after the previous one; moved onto or past
// it, the occurrence runs as that one (two occurrences moved onto one
// instant run once). Skip drops every excluded occurrence, and so does a
// move that finds no day within MaxMoveDays.
func (p *Placement) Next(after time.Time) (s, at time.Time) {
	s, at = p.next(after)
	if p.step > 0 && !at.IsZero() && inNanos(at) {
		p.last.Store(at.UnixNano())
	}
	return s, at
}

// jumpAfter is how many excluded instants in a row [Placement.Next]
// looks at one by one before it asks where the excluded span that holds
// them ends and jumps there: a weekend costs no more than its instants,
// and a span of weeks no more than a few hours of it.
const jumpAfter = 3

func (p *Placement) next(after time.Time) (s, at time.Time) {
	r, e := p.rule, p.excl
	// The last instant looked at, in Unix seconds (the rest of its second
	// is looked at too).
	horizon := after.Unix() + int64(CalendarHorizon/time.Second)
	dropped := 0 // excluded instants in a row that do not run after after
	switch p.step {
	case 1:
		// An occurrence at or before after may have moved past it: the
		// last one can (the ones before it would have to pass it), unless
		// after is an instant at which an occurrence runs.
		var n time.Time // the instant after s, when known
		if inNanos(after) && p.last.Load() == after.UnixNano() {
			s = r.Next(after)
		} else if s, n = lastAtOrBefore(r, after, time.Second); s.IsZero() {
			s, n = r.Next(after), time.Time{}
		}
		for !s.IsZero() && s.Unix() <= horizon {
			if !e.excludes(s.Unix()) {
				if s.After(after) {
					return s, s
				}
				dropped = 0
			} else {
				if n.IsZero() {
					n = r.Next(s)
				}
				if m, ok := e.move(s, 1, n); ok && m.After(after) {
					return s, m
				}
				if dropped++; dropped >= jumpAfter && !n.IsZero() {
					// Every instant from s to u is excluded and moves
					// to u or later: each but the last of them before u
					// moves onto or past the next and runs as it.
					if u := e.excludedUntil(s); n.Before(u) {
						if l, ln := lastAtOrBefore(r, u.Add(-time.Nanosecond), n.Sub(s)); !l.IsZero() {
							s, n, dropped = l, ln, 0
							continue
						}
					}
				}
			}
			if n.IsZero() {
				n = r.Next(s)
			}
			s, n = n, time.Time{}
		}
	case -1:
		// The previous instant the rule gives is at or before after, so
		// a moved occurrence after after is after it too.
		low := after
		for s = r.Next(after); !s.IsZero() && s.Unix() <= horizon; {
			if m, ok := e.place(s, -1, low); ok {
				return s, m
			}
			// s is excluded and moves to no day after low. Neither does
			// a later instant up to u, which excludedUntil says are
			// excluded too: each would move to a day after s, which is
			// excluded, or no later than the instant before it.
			low = s
			if dropped++; dropped >= jumpAfter {
				s = r.Next(e.excludedUntil(s).Add(-time.Nanosecond))
				continue
			}
			s = r.Next(s)
		}
	default:
		for s = r.Next(after); !s.IsZero() && s.Unix() <= horizon; {
			if !e.excludes(s.Unix()) {
				return s, s
			}
			if dropped++; dropped < jumpAfter {
				s = r.Next(s)
				continue
			}
			// Every instant up to u is excluded: none of them runs.
			s = r.Next(e.excludedUntil(s).Add(-time.Nanosecond))
		}
	}
	return time.Time{}, time.Time{}
}

// lastAtOrBefore returns the last instant r gives at or before t, and
// the one after it (zero when there is none), looking back from t by g,
// then twice as far, and so on, at most twice MaxMoveDays days; zeros
// when there is none that close. g is best a little more than the time
// between r's instants near t.
func lastAtOrBefore(r *Rule, t time.Time, g time.Duration) (s, next time.Time) {
	for ; g <= 2*(MaxMoveDays+1)*24*time.Hour; g *= 2 {
		s = r.Next(t.Add(-g))
		if s.IsZero() || s.After(t) {
			continue
		}
		for {
			n := r.Next(s)
			if n.IsZero() || n.After(t) {
				return s, n
			}
			s = n
		}
	}
	return time.Time{}, time.Time{}
}

// Skipped counts the instants the rule gives strictly between after and
// before (zero: without end) at which no occurrence runs because the
// calendar excludes them: all of them under Skip, and those whose move
// finds no day within MaxMoveDays otherwise (one merged into another
// runs). It counts at most limit of them and returns how many, the first
// and the last.
func (p *Placement) Skipped(after, before time.Time, limit int) (n int, first, last time.Time) {
	r, e := p.rule, p.excl
	horizon := after.Add(CalendarHorizon)
	for s := r.Next(after); !s.IsZero() && !s.After(horizon) && (before.IsZero() || s.Before(before)) && n < limit; s = r.Next(s) {
		if !e.Excludes(s) {
			continue
		}
		if p.step != 0 {
			if _, ok := e.move(s, p.step, time.Time{}); ok {
				continue
			}
		}
		if n == 0 {
			first = s
		}
		n, last = n+1, s
	}
	return n, first, last
}
