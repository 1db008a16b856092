package jobdef

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// Bounds of what an iCalendar text of a calendar may expand to: an
// event's recurrence set (DTSTART, its RRULEs' occurrences up to
// icalUntil, its RDATEs) holds at most maxICalOccurrences instances, and
// an all-day event spans at most maxICalDays days; all events of a text
// together expand to at most maxICalExclusions excluded days and spans
// (every day from 2000 to 2100 is fewer); and the instants the text's
// rules and lists make on the way (RRULE, RDATE, EXRULE, EXDATE,
// RECURRENCE-ID, the onsets of a VTIMEZONE) are at most maxICalInstants,
// so that a short text cannot make a calendar that takes gigabytes to
// build. A rule (RRULE or EXRULE) without an occurrence before 2100 is
// refused (see never and probe); once maxICalEmptyRules have been found
// by probing, the text's further rules are refused unread, so that a text
// costs at most a few of those probes. A text read as stored (see
// icalReader.stored) is not refused such rules, nor counted.
const (
	maxICalOccurrences = 10_000
	maxICalDays        = 3660
	maxICalExclusions  = 50_000
	maxICalInstants    = 100_000
	maxICalEmptyRules  = 5
)

var icalUntil = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// icalProblem is a problem with an iCalendar text at a line (counted
// from 1 in the text as given, before unfolding).
type icalProblem struct {
	line   int
	reason string
}

// icalFail is a problem that ends the reading of one event.
type icalFail = *icalProblem

func failAt(line int, format string, args ...any) icalFail {
	return &icalProblem{line, fmt.Sprintf(format, args...)}
}

// icalReader holds what the events of a text are read with.
type icalReader struct {
	loc   *time.Location // the calendar's zone, of floating times
	zones icalZones
	made  int // instants made so far, of maxICalInstants
	empty int // rules probed without an occurrence so far, of maxICalEmptyRules
	// stored is set when the text is read as stored rather than for a
	// write: a rule without an occurrence before 2100 then adds nothing
	// (its event keeps its DTSTART instance), as versions that did not
	// refuse such rules read it, found by the same cheap checks (never,
	// probe) and not counted against maxICalEmptyRules.
	stored bool
}

// readICal returns the exclusions of the VEVENTs of text read in loc (the
// calendar's zone): each instance of an event's recurrence set, all-day
// ones (DTSTART;VALUE=DATE or a date alone) as the local dates they span
// (DTEND excluded; one day without it), the others as spans of loc's wall
// time from their start to DTEND (or plus DURATION). A date-time with a
// Z is UTC, with TZID in that zone, else in loc. A VEVENT with the UID of
// another and a RECURRENCE-ID replaces that instance of the other's set
// (with RANGE=THISANDFUTURE, the later ones too); a cancelled one
// (STATUS:CANCELLED) excludes nothing. Other components,
// and the members of an event besides those, are ignored. With stored,
// the text is read as stored (see icalReader.stored).
func readICal(text string, loc *time.Location, stored bool) (dates []time.Time, ranges []recurrence.ExclusionRange, problems []icalProblem) {
	lines := unfoldICal(text)
	if len(lines) == 0 || lines[0].name != "BEGIN" || !strings.EqualFold(lines[0].value, "VCALENDAR") {
		return nil, nil, []icalProblem{{1, "is not an iCalendar text: it must begin with BEGIN:VCALENDAR"}}
	}
	top, problems := readICalComponents(lines)
	var events []*icalEvent
	r := &icalReader{loc: loc, zones: icalZones{defined: map[string]*icalComponent{}}, stored: stored}
	for _, cal := range top {
		if cal.name != "VCALENDAR" {
			continue
		}
		for _, c := range cal.subs {
			switch c.name {
			case "VEVENT":
				events = append(events, newICalEvent(c))
			case "VTIMEZONE":
				if id := c.prop("TZID"); id != nil {
					r.zones.defined[id.value] = c
				}
			}
		}
	}
	// An event with a RECURRENCE-ID belongs to the event of its UID
	// without one; when the text has none, it stands alone. Of several
	// for the same instance, the one of the highest SEQUENCE (the last
	// of equal ones) applies.
	series := map[string]*icalEvent{}
	for _, ev := range events {
		if ev.recurrenceID == nil && ev.uid != "" && series[ev.uid] == nil {
			series[ev.uid] = ev
		}
	}
	at := map[string]int{} // of an override in its series', by UID and RECURRENCE-ID
	for _, ev := range events {
		m := series[ev.uid]
		if ev.recurrenceID == nil || m == nil {
			continue
		}
		l := ev.recurrenceID
		key := strings.Join([]string{ev.uid, l.params["TZID"], l.params["VALUE"], strings.ToUpper(l.params["RANGE"]), l.value}, "\x00")
		if i, ok := at[key]; ok {
			if ev.sequence >= m.overrides[i].sequence {
				m.overrides[i] = ev
			}
			continue
		}
		at[key] = len(m.overrides)
		m.overrides = append(m.overrides, ev)
	}
	for _, ev := range events {
		if ev.recurrenceID != nil && series[ev.uid] != nil {
			continue
		}
		insts, fail := r.instances(ev)
		if fail != nil {
			problems = append(problems, *fail)
			continue
		}
		budget, n := maxICalExclusions-len(dates)-len(ranges), 0
		for _, in := range insts {
			n += in.days
		}
		if n > budget {
			problems = append(problems, icalProblem{ev.c.begin, fmt.Sprintf("the VEVENT expands to %d excluded days or spans, more than the %d left of the %d a calendar's iCalendar text may make",
				n, max(budget, 0), maxICalExclusions)})
			continue
		}
		for _, in := range insts {
			if in.allDay {
				for k := range in.days {
					dates = append(dates, in.start.AddDate(0, 0, k))
				}
				continue
			}
			ranges = append(ranges, recurrence.ExclusionRange{Start: in.start.In(loc), End: in.end().In(loc)})
		}
	}
	slices.SortFunc(problems, func(a, b icalProblem) int {
		return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.reason, b.reason))
	})
	return dates, ranges, slices.Compact(problems)
}

// icalEvent is what a VEVENT says of when it is.
type icalEvent struct {
	c               *icalComponent
	uid, status     string
	sequence        int
	recurrenceID    *icalLine
	start, end, dur *icalLine
	rrules, exrules []*icalLine
	rdates, exdates []*icalLine
	overrides       []*icalEvent // events of its UID with a RECURRENCE-ID
}

func newICalEvent(c *icalComponent) *icalEvent {
	ev := &icalEvent{c: c}
	for _, l := range c.props {
		switch l.name {
		case "UID":
			ev.uid = l.value
		case "STATUS":
			ev.status = strings.ToUpper(l.value)
		case "SEQUENCE":
			ev.sequence, _ = strconv.Atoi(l.value)
		case "RECURRENCE-ID":
			ev.recurrenceID = l
		case "DTSTART":
			ev.start = l
		case "DTEND":
			ev.end = l
		case "DURATION":
			ev.dur = l
		case "RRULE":
			ev.rrules = append(ev.rrules, l)
		case "EXRULE":
			ev.exrules = append(ev.exrules, l)
		case "RDATE":
			ev.rdates = append(ev.rdates, l)
		case "EXDATE":
			ev.exdates = append(ev.exdates, l)
		}
	}
	return ev
}

// icalInstance is an instance of an event's recurrence set: days dates
// from start (a date at 00:00 UTC) when allDay, else from start to end.
type icalInstance struct {
	start  time.Time
	allDay bool
	days   int
	// Of another: nominal days of the wall clock in start's zone (a
	// DURATION's weeks and days), then length.
	nominal int
	length  time.Duration
}

// end returns the end of in, not all-day.
func (in icalInstance) end() time.Time {
	return in.start.AddDate(0, 0, in.nominal).Add(in.length)
}

// icalDuration reads v, a DURATION or a period's, as RFC 5545 has it:
// its weeks and days are nominal days (of the wall clock, 23 or 25 hours
// when the clocks change), its hours, minutes and seconds exact.
func icalDuration(v string) (days int, exact time.Duration, ok bool) {
	date, clock, timed := strings.Cut(v, "T")
	if date != "P" {
		d, err := retry.ParseDuration(date)
		if err != nil {
			return 0, 0, false
		}
		days = int(time.Duration(d) / (24 * time.Hour))
	}
	if timed {
		d, err := retry.ParseDuration("PT" + clock)
		if err != nil {
			return 0, 0, false
		}
		exact = time.Duration(d)
	}
	return days, exact, days > 0 || exact > 0
}

// instances returns the recurrence set of ev and of the events that
// override its instances, with those instances replaced, or the problem
// that ends the reading of ev.
func (r *icalReader) instances(ev *icalEvent) ([]icalInstance, icalFail) {
	if ev.status == "CANCELLED" {
		return nil, nil
	}
	first, fail := r.first(ev)
	if fail != nil {
		return nil, fail
	}
	insts := []icalInstance{first}
	count := func(l *icalLine) icalFail {
		if len(insts) > maxICalOccurrences {
			return failAt(l.n, "the event has more than %d occurrences before 2100 (DTSTART, RRULEs and RDATEs together)", maxICalOccurrences)
		}
		return nil
	}
	for _, l := range ev.rrules {
		starts, fail := r.expand(l, first.start, maxICalOccurrences+1-len(insts))
		if fail != nil {
			return nil, fail
		}
		for _, s := range starts {
			if !s.Equal(first.start) {
				in := first
				in.start = s
				insts = append(insts, in)
			}
		}
		if fail := count(l); fail != nil {
			return nil, fail
		}
	}
	for _, l := range ev.rdates {
		added, fail := r.rdates(l, first)
		if fail != nil {
			return nil, fail
		}
		insts = append(insts, added...)
		if fail := count(l); fail != nil {
			return nil, fail
		}
	}
	out := icalExcept{allDay: first.allDay}
	for _, l := range ev.exdates {
		if fail := r.times(l, l.value, func(t time.Time, allDay bool, v string) icalFail { out.add(t, allDay); return nil }); fail != nil {
			return nil, fail
		}
	}
	for _, l := range ev.exrules {
		starts, fail := r.expand(l, first.start, maxICalOccurrences)
		if fail != nil {
			return nil, fail
		}
		for _, s := range starts {
			out.add(s, first.allDay)
		}
	}
	var moved []icalInstance
	var future []icalFuture
	for _, o := range ev.overrides {
		l := o.recurrenceID
		var rid time.Time
		if fail := r.times(l, l.value, func(t time.Time, allDay bool, v string) icalFail {
			if allDay != first.allDay {
				return failAt(l.n, "RECURRENCE-ID %q is not of the DTSTART of its series' kind (a date, or a date-time)", v)
			}
			rid = t
			return nil
		}); fail != nil {
			return nil, fail
		}
		f := icalFuture{from: rid, cancel: o.status == "CANCELLED"}
		if !f.cancel {
			var fail icalFail
			if f.to, fail = r.first(o); fail != nil {
				return nil, fail
			}
		}
		if strings.EqualFold(l.params["RANGE"], "THISANDFUTURE") {
			future = append(future, f)
			continue
		}
		out.add(rid, first.allDay)
		if !f.cancel {
			moved = append(moved, f.to)
		}
	}
	slices.SortStableFunc(insts, func(a, b icalInstance) int { return a.start.Compare(b.start) })
	insts = slices.CompactFunc(insts, func(a, b icalInstance) bool { return a.start.Equal(b.start) })
	insts = slices.DeleteFunc(insts, out.removes)
	insts = changeFuture(insts, future)
	return append(insts, moved...), nil
}

// icalFuture is an override of RECURRENCE-ID;RANGE=THISANDFUTURE (or a
// single one): from the instance that starts at from on, the instances
// are cancelled, or moved by as much wall time as from is to to's start,
// with to's length.
type icalFuture struct {
	from   time.Time
	cancel bool
	to     icalInstance
}

// changeFuture applies future, overrides of RANGE=THISANDFUTURE, to
// insts (sorted by start): each instance takes the change of the last
// one whose RECURRENCE-ID is not after its start.
func changeFuture(insts []icalInstance, future []icalFuture) []icalInstance {
	if len(future) == 0 {
		return insts
	}
	slices.SortStableFunc(future, func(a, b icalFuture) int { return a.from.Compare(b.from) })
	out := insts[:0]
	for _, in := range insts {
		i := len(future) - 1
		for i >= 0 && future[i].from.After(in.start) {
			i--
		}
		if i < 0 {
			out = append(out, in)
			continue
		}
		f := future[i]
		if f.cancel {
			continue
		}
		zone := in.start.Location()
		shift := wallOf(f.to.start.In(zone)).Sub(wallOf(f.from.In(zone)))
		moved := f.to
		w := wallOf(in.start).Add(shift)
		moved.start = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), zone)
		out = append(out, moved)
	}
	return out
}

// wallOf returns t's wall clock reading in its zone as a time in UTC.
func wallOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// first returns the instance ev's DTSTART, DTEND and DURATION say.
func (r *icalReader) first(ev *icalEvent) (icalInstance, icalFail) {
	if ev.start == nil {
		return icalInstance{}, failAt(ev.c.begin, "VEVENT has no DTSTART")
	}
	start, allDay, fail := r.time(ev.start, ev.start.value)
	if fail != nil {
		return icalInstance{}, fail
	}
	in := icalInstance{start: start, allDay: allDay, days: 1}
	switch {
	case ev.end != nil:
		end, endAllDay, fail := r.time(ev.end, ev.end.value)
		switch {
		case fail != nil:
			return in, fail
		case endAllDay != allDay:
			return in, failAt(ev.end.n, "DTEND is not of DTSTART's kind (a date, or a date-time)")
		case !end.After(start):
			return in, failAt(ev.end.n, "DTEND is not after DTSTART")
		case allDay:
			in.days = int(end.Sub(start).Hours()/24 + 0.5)
		default:
			in.length = end.Sub(start)
		}
	case ev.dur != nil:
		days, exact, ok := icalDuration(ev.dur.value)
		if !ok {
			return in, failAt(ev.dur.n, "DURATION %q is not a positive duration such as P1D or PT2H", ev.dur.value)
		}
		if allDay {
			in.days = max(1, days)
		} else {
			in.nominal, in.length = days, exact
		}
	case !allDay:
		return in, failAt(ev.start.n, "a VEVENT with a date-time DTSTART needs DTEND or DURATION")
	}
	if in.days > maxICalDays {
		return in, failAt(ev.start.n, "the event spans more than %d days", maxICalDays)
	}
	return in, nil
}

// expand returns the occurrences before icalUntil of l, an RRULE or
// EXRULE of an event (or a time zone's observance) that starts at start,
// or a problem when they are more than limit or when there are none (but
// for a start from 2100 on, or when r reads a text as stored: none).
func (r *icalReader) expand(l *icalLine, start time.Time, limit int) ([]time.Time, icalFail) {
	opt, err := rrule.StrToROptionInLocation(l.value, start.Location())
	if err != nil {
		return nil, failAt(l.n, "%s %q is not a recurrence rule: %v", l.name, l.value, err)
	}
	opt.Dtstart = start
	if opt.Until.IsZero() {
		// rrule-go's own default ends 290 years after the start.
		opt.Until = icalUntil
	}
	rule, err := rrule.NewRRule(*opt)
	if err != nil {
		return nil, failAt(l.n, "%s %q is not a recurrence rule: %v", l.name, l.value, err)
	}
	if why := cmp.Or(never(opt), pastSet(&rule.Options)); why != "" {
		return nil, r.none(l, "never occurs: "+why)
	}
	if !start.Before(icalUntil) {
		return nil, nil
	}
	if !r.stored && r.empty >= maxICalEmptyRules {
		return nil, failAt(l.n, "%s %q is not read: the text already has %d rules without an occurrence before 2100", l.name, l.value, maxICalEmptyRules)
	}
	if !probe(opt) {
		r.empty++
		return nil, r.none(l, "has no occurrence before 2100 (or its UNTIL)")
	}
	var out []time.Time
	it := rule.Iterator()
	for {
		t, ok := it()
		if !ok || !t.Before(icalUntil) {
			return out, nil
		}
		if len(out) == limit {
			with := ""
			if limit < maxICalOccurrences {
				with = " (with the event's other ones)"
			}
			return nil, failAt(l.n, "%s %q has more than %d occurrences before 2100%s", l.name, l.value, maxICalOccurrences, with)
		}
		if fail := r.made1(l); fail != nil {
			return nil, fail
		}
		out = append(out, t)
	}
}

// never returns why opt, a rule, can have no occurrence whatever its
// start, found without expanding it: its BYMONTHDAY names no day of the
// months its BYMONTH allows (30 February, 31 April), or, of a sub-daily
// rule, its steps never meet the times of day its BYHOUR, BYMINUTE and
// BYSECOND allow (see reachable). It returns "" when the rule may occur.
func never(opt *rrule.ROption) string {
	if len(opt.Bymonthday) > 0 {
		months := opt.Bymonth
		if len(months) == 0 {
			months = orAll(nil, 13)[1:]
		}
		longest := 0
		for _, m := range months {
			// February has 29 days in a leap year.
			longest = max(longest, time.Date(2000, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day())
		}
		if !slices.ContainsFunc(opt.Bymonthday, func(d int) bool { return d != 0 && abs(d) <= longest }) {
			return fmt.Sprintf("no month of BYMONTH=%s has a day of BYMONTHDAY=%s", joinInts(months), joinInts(opt.Bymonthday))
		}
	}
	if !reachable(opt) {
		return "its steps from DTSTART never meet its BYHOUR, BYMINUTE and BYSECOND"
	}
	return ""
}

// pastSet returns why o, the options of a rule with rrule-go's defaults
// (RRule.Options: the month day, month or weekday a rule without them
// takes from DTSTART), selects nothing with its BYSETPOS: every position
// is past the most instants a period of the rule can hold, which rrule-go
// would otherwise search for period by period to the year 9999 (the probe
// still steps through the periods of 373 years: seconds for a minutely
// rule). A period holds at most as many days as it has (one for DAILY
// and finer frequencies, 7, 31 or 366), or as BYMONTHDAY, BYYEARDAY or a
// weekly BYDAY let through, times the times of day each day has (BYHOUR,
// BYMINUTE and BYSECOND, those the frequency does not step through, one
// each when not given). It returns "" when a position may select an
// instant.
func pastSet(o *rrule.ROption) string {
	if len(o.Bysetpos) == 0 {
		return ""
	}
	days, times := 1, len1(o.Byhour)*len1(o.Byminute)*len1(o.Bysecond)
	switch o.Freq {
	case rrule.YEARLY:
		days = 366
		if len(o.Bymonthday) > 0 {
			months := len(o.Bymonth)
			if months == 0 {
				months = 12
			}
			days = min(days, months*len(o.Bymonthday))
		}
	case rrule.MONTHLY:
		days = 31
		if len(o.Bymonthday) > 0 {
			days = min(days, len(o.Bymonthday))
		}
	case rrule.WEEKLY:
		days = 7
		if len(o.Byweekday) > 0 {
			days = min(days, len(o.Byweekday))
		}
	case rrule.HOURLY:
		times = len1(o.Byminute) * len1(o.Bysecond)
	case rrule.MINUTELY:
		times = len1(o.Bysecond)
	case rrule.SECONDLY:
		times = 1
	}
	if (o.Freq == rrule.YEARLY || o.Freq == rrule.MONTHLY) && len(o.Byyearday) > 0 {
		days = min(days, len(o.Byyearday))
	}
	most := days * times
	for _, p := range o.Bysetpos {
		if abs(p) <= most {
			return ""
		}
	}
	return fmt.Sprintf("BYSETPOS=%s selects past the most instants one of its periods holds (%d)", joinInts(o.Bysetpos), most)
}

// len1 is len(by), or 1 when by is empty: the one value rrule-go takes
// from DTSTART.
func len1(by []int) int { return max(len(by), 1) }

// none is the problem of l, a rule without an occurrence before 2100
// (why says so): nil when r reads a text as stored, where the rule adds
// nothing.
func (r *icalReader) none(l *icalLine, why string) icalFail {
	if r.stored {
		return nil
	}
	return failAt(l.n, "%s %q %s", l.name, l.value, why)
}

// probe reports whether opt, a rule (DTSTART and UNTIL set), has an
// occurrence before 2100 (and before its UNTIL). rrule-go
// looks for a rule's first occurrence in every period up to the year
// 9999, whatever UNTIL says: up to a second of work from today. The probe
// asks it instead for the first occurrence of the rule moved by 19 whole
// 400-year cycles of the Gregorian calendar (which repeat weekdays, leap
// years and week numbers, so that the moved rule occurs at the moved
// instants), where the search ends in 9999 after at most 300 years more
// than from DTSTART to the moved 2100 (a few milliseconds to 25ms). A
// rule the probe passes has an occurrence before 2100, and its expansion
// stops at the first one after 2100, which is at most a cycle later.
func probe(opt *rrule.ROption) bool {
	years := 400 * ((rrule.MAXYEAR - icalUntil.Year()) / 400)
	moved := *opt
	moved.Dtstart = opt.Dtstart.AddDate(years, 0, 0)
	moved.Until = opt.Until.AddDate(years, 0, 0)
	if rule, err := rrule.NewRRule(moved); err == nil {
		if t, ok := rule.Iterator()(); ok && t.Before(icalUntil.AddDate(years, 0, 0)) {
			return true
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// joinInts writes ns as a BYxxx value writes them: 4,6,9.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// reachable reports whether a sub-daily rule (HOURLY, MINUTELY, SECONDLY)
// steps through a time of day that its BYHOUR, BYMINUTE and BYSECOND
// allow: rrule-go steps on for ever when it does not (SECONDLY;INTERVAL=2;
// BYSECOND=1 from an even second). Stepping by INTERVAL units from the
// start reaches the times of day at multiples of the greatest common
// divisor of the step and a day, and keeps the minute and second of the
// start (HOURLY) or its second (MINUTELY).
func reachable(opt *rrule.ROption) bool {
	unit := map[rrule.Frequency]int{rrule.HOURLY: 3600, rrule.MINUTELY: 60, rrule.SECONDLY: 1}[opt.Freq]
	if unit == 0 {
		return true
	}
	const day = 86400
	step := gcd(max(opt.Interval, 1)*unit, day)
	h, m, s := opt.Dtstart.Clock()
	at := (3600*h + 60*m + s) % step
	hours, minutes, seconds := orAll(opt.Byhour, 24), orAll(opt.Byminute, 60), orAll(opt.Bysecond, 60)
	switch opt.Freq {
	case rrule.HOURLY:
		minutes, seconds = []int{m}, []int{s}
	case rrule.MINUTELY:
		seconds = []int{s}
	}
	for _, h := range hours {
		for _, m := range minutes {
			for _, s := range seconds {
				if (3600*h+60*m+s)%step == at {
					return true
				}
			}
		}
	}
	return false
}

// orAll returns by, or 0 to n-1 when it is empty.
func orAll(by []int, n int) []int {
	if len(by) > 0 {
		return by
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// made1 counts an instant made at l against maxICalInstants.
func (r *icalReader) made1(l *icalLine) icalFail {
	if r.made++; r.made > maxICalInstants {
		return failAt(l.n, "the text makes more than %d instants of events, rules and zones", maxICalInstants)
	}
	return nil
}

// rdates returns the instances an RDATE adds to an event whose DTSTART
// makes first: dates to an all-day event, date-times (of first's length)
// or periods (start/end, start/duration) to another.
func (r *icalReader) rdates(l *icalLine, first icalInstance) (out []icalInstance, fail icalFail) {
	fail = r.times(l, l.value, func(t time.Time, allDay bool, v string) icalFail {
		in := first
		in.start = t
		switch {
		case allDay != first.allDay:
			return failAt(l.n, "RDATE %q is not of DTSTART's kind (a date, or a date-time)", v)
		case strings.Contains(v, "/"):
			_, rest, _ := strings.Cut(v, "/")
			if days, exact, ok := icalDuration(rest); ok {
				in.nominal, in.length = days, exact
				break
			}
			end, _, fail := r.time(l, rest)
			if fail != nil || !end.After(t) {
				return failAt(l.n, "RDATE period %q does not end after it starts (start/end, or start/duration such as PT2H)", v)
			}
			in.nominal, in.length = 0, end.Sub(t)
		}
		out = append(out, in)
		return nil
	})
	return out, fail
}

// times calls f with each of the comma-separated times of value, a value
// of l (an EXDATE, RDATE or RECURRENCE-ID), read in l's zone; a period's
// start is read, and v is the whole item.
func (r *icalReader) times(l *icalLine, value string, f func(t time.Time, allDay bool, v string) icalFail) icalFail {
	for v := range strings.SplitSeq(value, ",") {
		if fail := r.made1(l); fail != nil {
			return fail
		}
		start, _, _ := strings.Cut(v, "/")
		t, allDay, fail := r.time(l, start)
		if fail == nil {
			fail = f(t, allDay, v)
		}
		if fail != nil {
			return fail
		}
	}
	return nil
}

// time reads v, a value of l (DTSTART, DTEND, an item of an EXDATE...):
// allDay for a date, which is returned at 00:00 UTC.
func (r *icalReader) time(l *icalLine, v string) (t time.Time, allDay bool, fail icalFail) {
	if strings.EqualFold(l.params["VALUE"], "DATE") || len(v) == 8 {
		d, err := time.Parse("20060102", v)
		if err != nil {
			return time.Time{}, false, failAt(l.n, "%s %q is not a date written YYYYMMDD", l.name, v)
		}
		return d, true, nil
	}
	in := r.loc
	if tz := l.params["TZID"]; tz != "" && !strings.HasSuffix(v, "Z") {
		z, fail := r.zone(l, tz)
		if fail != nil {
			return time.Time{}, false, fail
		}
		in = z
	}
	if strings.HasSuffix(v, "Z") {
		v, in = strings.TrimSuffix(v, "Z"), time.UTC
	}
	t, err := time.ParseInLocation("20060102T150405", v, in)
	if err != nil {
		return time.Time{}, false, failAt(l.n, "%s %q is not a date (YYYYMMDD) or a date-time (YYYYMMDDThhmmss, Z for UTC)", l.name, v)
	}
	return t, false, nil
}

// icalExcept is what an event's EXDATEs, EXRULEs and overridden
// instances take out of its recurrence set: instants of a date-time
// event, and dates (of an all-day event, or written as dates).
type icalExcept struct {
	allDay   bool // the event is all-day: its instances go by their dates
	instants map[int64]bool
	dates    map[time.Time]bool
}

// add takes out t, a date when allDay: of an all-day event, t's local
// date in its zone.
func (x *icalExcept) add(t time.Time, allDay bool) {
	if allDay || x.allDay {
		if x.dates == nil {
			x.dates = map[time.Time]bool{}
		}
		x.dates[dateOf(t)] = true
		return
	}
	if x.instants == nil {
		x.instants = map[int64]bool{}
	}
	x.instants[t.UnixNano()] = true
}

// removes reports whether x takes in out: by its instant, or by its local
// date.
func (x *icalExcept) removes(in icalInstance) bool {
	return x.instants[in.start.UnixNano()] || x.dates[dateOf(in.start)]
}

// dateOf returns the local date of t at 00:00 UTC.
func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
