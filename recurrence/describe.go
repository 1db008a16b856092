package recurrence

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Describe returns the recurrence in plain English, the way a person would
// say it: "every week on Monday, Wednesday and Friday at 10:00 and 22:00
// (UTC), 10 times, until 4 Nov 2012", "every 15 minutes", "on the last
// Friday of every month at 05:15 (Europe/Berlin)".
//
// start is the instant the recurrence's periods count from: the job's
// startTime, or its creation time when it has none. What the schedule
// leaves to the start (the hour and minute, the weekday of a weekly rule,
// the day of a monthly one, the month of a yearly one) is read from it in
// the recurrence's time zone. A zero start describes those parts as "the
// start time's" hour, weekday and so on.
//
// Times of day are wall clock times in the recurrence's time zone, which
// the description names in parentheses (UTC without one) whenever it
// mentions a time or a day; Minute and Hour frequencies without a schedule,
// which step in elapsed time, name none. When a time the schedule names
// falls into a daylight saving change of the zone in the start's year, the
// parentheses say what happens to it: "02:30 runs at 03:30 when clocks go
// forward" and "01:30 runs once when clocks go back" for a time whose hour
// the schedule fixes, "02:00 is skipped when clocks go forward" and "01:30
// runs twice when clocks go back" for one whose hour it leaves free, which
// keeps its cadence ("every 30 minutes" stays true). A window follows
// ("every hour, spread over 15 minutes"); count and endTime end the
// sentence. A nil
// recurrence is "once".
//
// A recurrence with a Cron spec is described as the spec stands for (see
// [Recurrence.ExpandCron]), whether or not it has been expanded.
//
// Describe expects a valid recurrence (see [Recurrence.Validate]); for an
// invalid one it returns a description of what it can read.
func (r *Recurrence) Describe(start time.Time) string {
	if r == nil {
		return "once"
	}
	if r.Cron != "" && r.Frequency == "" {
		// A spec not expanded yet ([Cron]): describe what it stands for.
		if x, err := r.ExpandCron(); err == nil {
			r = x
		}
	}
	hashed, given := r.hashedFields()
	d := newDescriber(r, start)
	var b strings.Builder
	if len(hashed) > 0 && !given {
		// The members H decides are not known: no job was named.
		b.WriteString("as the cron spec " + strconv.Quote(r.Cron) + " says, with the " + joinAnd(hashed) +
			" that its H fields give each job by its collection and name")
	} else {
		b.WriteString(d.core())
		if note := d.zoneNote(); note != "" {
			b.WriteString(" (" + note + ")")
		}
		if len(hashed) > 0 {
			b.WriteString(", by H for this job: " + joinAnd(r.hashedValues()))
		}
	}
	if w := r.Ext().Window; w > 0 {
		b.WriteString(", spread over " + spanWords(time.Duration(w)))
	}
	switch {
	case r.Count == 1:
		b.WriteString(", once")
	case r.Count > 1:
		fmt.Fprintf(&b, ", %d times", r.Count)
	}
	if r.EndTime != nil {
		end := r.EndTime.In(d.loc)
		layout := "2 Jan 2006"
		if h, m, s := end.Clock(); h != 0 || m != 0 || s != 0 || end.Nanosecond() != 0 {
			layout = "2 Jan 2006 15:04"
			if s != 0 {
				layout = "2 Jan 2006 15:04:05"
			}
		}
		b.WriteString(", until " + end.Format(layout))
	}
	return b.String()
}

// describer holds what Describe reads from a recurrence and its start.
type describer struct {
	r        *Recurrence
	loc      *time.Location
	start    time.Time // in loc; zero when unknown
	known    bool
	interval int
	sched    *Schedule // nil when absent or empty
	elapsed  bool      // Minute or Hour without a schedule: steps in elapsed time

	hours, minutes field
	seconds        field // no values and not all: second 0
	second         int   // the second clock shows
	clocked        bool  // clock was called
	wall           bool  // the description names a time of day or a day
	times          []int // the fixed times of day named (minutes since midnight), for the DST note
}

// field is the set of values of one schedule field that a rule uses.
type field struct {
	vals      []int // sorted
	all       bool  // every value
	fromStart bool  // the start's value, which is unknown
}

func newDescriber(r *Recurrence, start time.Time) *describer {
	loc, err := LoadTimeZone(r.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	d := &describer{r: r, loc: loc, interval: int(max(r.Interval, 1)), sched: r.Schedule}
	if d.sched != nil && d.sched.empty() {
		d.sched = nil
	}
	if !start.IsZero() {
		d.start, d.known = start.In(loc), true
	}
	coarse := r.Frequency.fine() == 0
	d.elapsed = d.sched == nil && !coarse
	fromStart := func(v func(time.Time) int) field {
		if !d.known {
			return field{fromStart: true}
		}
		return field{vals: []int{v(d.start)}}
	}
	s := d.sched
	if s == nil {
		s = &Schedule{}
		if d.known && coarse {
			d.second = d.start.Second()
		}
	}
	switch {
	case len(s.Seconds) > 0:
		d.seconds = field{vals: sortedInts(s.Seconds)}
		if len(d.seconds.vals) == 1 {
			d.second = d.seconds.vals[0]
		}
	case r.Frequency == Second:
		d.seconds = field{all: true}
	}
	if len(d.seconds.vals) == 60 {
		d.seconds = field{all: true}
	}
	switch {
	case len(s.Minutes) > 0:
		d.minutes = field{vals: sortedInts(s.Minutes)}
	case r.Frequency == Minute, r.Frequency == Second, len(s.Seconds) > 0:
		d.minutes = field{all: true}
	default:
		d.minutes = fromStart(time.Time.Minute)
	}
	switch {
	case len(s.Hours) > 0:
		d.hours = field{vals: sortedInts(s.Hours)}
	case !coarse:
		d.hours = field{all: true}
	case d.sched != nil && (len(s.Minutes) > 0 || len(s.Seconds) > 0):
		d.hours = field{all: true}
	default:
		d.hours = fromStart(time.Time.Hour)
	}
	if len(d.hours.vals) == 24 {
		d.hours = field{all: true}
	}
	if len(d.minutes.vals) == 60 {
		d.minutes = field{all: true}
	}
	return d
}

// core describes the recurrence without its zone, count and end.
func (d *describer) core() string {
	r := d.r
	n := d.interval
	switch {
	case d.elapsed && r.Frequency == Second:
		return every(n, "second")
	case d.elapsed && r.Frequency == Minute:
		return every(n, "minute")
	case d.elapsed:
		s := every(n, "hour")
		if d.known {
			s += " at minute " + strconv.Itoa(d.start.Minute())
			d.wall = d.loc != time.UTC
			if sec := d.start.Second(); sec != 0 {
				s = "at second " + strconv.Itoa(sec) + " of " + s
			}
		}
		return s
	case r.Frequency.fine() > 0 && n > 1:
		return d.stepWithFilters()
	}
	tod, repeating := d.withSeconds(d.timeOfDay())
	switch r.Frequency {
	case Second, Minute, Hour, Day:
		if repeating {
			if r.Frequency == Day && n > 1 {
				return tod + ", " + every(n, "day")
			}
			return tod
		}
		unit := "day"
		if r.Frequency != Day {
			n = 1 // interval 1 with a schedule: the daily pattern
		}
		return every(n, unit) + " " + tod
	case Week:
		d.wall = true
		days := "on " + d.weekDays()
		if repeating {
			if n > 1 {
				return tod + " " + days + ", " + every(n, "week")
			}
			return tod + " " + days
		}
		return every(n, "week") + " " + days + " " + tod
	case Month:
		d.wall = true
		s := "on " + d.monthDays() + " of " + d.months()
		if repeating {
			return tod + " " + s
		}
		return s + " " + tod
	case Year:
		d.wall = true
		s := "on " + d.yearDate() + " " + every(n, "year")
		if repeating {
			return tod + " " + s
		}
		return every(n, "year") + " on " + d.yearDate() + " " + tod
	}
	return string(r.Frequency)
}

// stepWithFilters describes a Second, Minute or Hour rule with an
// interval above 1 and a schedule: the steps count on the wall clock from
// the start, and the schedule keeps only some of them.
func (d *describer) stepWithFilters() string {
	d.wall = true
	unit := strings.ToLower(string(d.r.Frequency))
	s := every(d.interval, unit)
	if sec := d.seconds; len(sec.vals) > 0 {
		if unit == "second" {
			s += ", only"
		}
		s += " at " + plural(len(sec.vals), "second") + " " + joinInts(sec.vals)
	}
	switch m := d.minutes; {
	case m.fromStart:
		s += " at the start time's minute"
	case unit == "hour":
		s += " at " + plural(len(m.vals), "minute") + " " + joinInts(m.vals)
	case unit == "second" && !m.all:
		s += " in " + plural(len(m.vals), "minute") + " " + joinInts(m.vals)
	case !m.all:
		s += ", only at " + plural(len(m.vals), "minute") + " " + joinInts(m.vals)
	}
	if !d.hours.all {
		s += " in " + plural(len(d.hours.vals), "hour") + " " + ranges(d.hours.vals, " to ")
	}
	return s
}

// timeOfDay describes the times of day at which the rule runs; repeating
// is true for phrases that start with "every" ("every 15 minutes from
// 09:00 to 16:45"), false for fixed times ("at 10:00 and 22:00").
func (d *describer) timeOfDay() (phrase string, repeating bool) {
	h, m := d.hours, d.minutes
	switch {
	case h.fromStart:
		d.wall = true
		return "at the start time", false
	case m.fromStart && h.all:
		return "every hour at the start time's minute", true
	case m.fromStart:
		d.wall = true
		list := make([]string, len(h.vals))
		for i, v := range h.vals {
			list[i] = fmt.Sprintf("%02d:MM", v)
		}
		return "at " + joinAnd(list) + ", MM being the start time's minute", false
	}
	hours, mins := h.vals, m.vals
	if h.all {
		hours = seq(0, 24)
	}
	if m.all {
		mins = seq(0, 60)
	}
	step, offset, regular := regularMinutes(mins)
	if h.all {
		d.wall = d.wall || d.loc != time.UTC
		switch {
		case regular && offset == 0 && step == 1:
			return "every minute", true
		case regular && offset == 0 && step == 60:
			return "every hour on the hour", true
		case regular && offset == 0:
			return every(step, "minute"), true
		}
		return "every hour at " + plural(len(mins), "minute") + " " + joinInts(mins), true
	}
	d.wall = true
	if len(hours)*len(mins) <= 12 {
		var list []string
		for _, hh := range hours {
			for _, mm := range mins {
				d.times = append(d.times, hh*60+mm)
				list = append(list, d.clock(hh, mm))
			}
		}
		return "at " + joinAnd(list), false
	}
	if regular {
		var parts []string
		for _, run := range runs(hours) {
			parts = append(parts, fmt.Sprintf("from %s to %s", d.clock(run[0], offset), d.clock(run[1], mins[len(mins)-1])))
		}
		return every(step, "minute") + " " + strings.Join(parts, " and "), true
	}
	return "at " + plural(len(mins), "minute") + " " + joinInts(mins) + " of " + plural(len(hours), "hour") + " " + ranges(hours, " to "), false
}

// withSeconds adds to a description of the times of day, from timeOfDay,
// the seconds a schedule lists: "every 10 seconds", "every minute at
// seconds 15 and 45", "at second 30 of every hour at minute 5". A single
// second that the times of day already show (09:00:30) adds nothing.
func (d *describer) withSeconds(tod string, repeating bool) (string, bool) {
	sec := d.seconds
	if !sec.all && (len(sec.vals) == 0 || len(sec.vals) == 1 && d.clocked) {
		return tod, repeating
	}
	var part string
	step, offset, regular := 0, 0, false
	if !sec.all {
		step, offset, regular = regularMinutes(sec.vals)
	}
	switch {
	case sec.all:
		part = "every second"
	case regular && offset == 0 && step < 60:
		part = every(step, "second")
	default:
		part = "at " + plural(len(sec.vals), "second") + " " + joinInts(sec.vals)
	}
	switch {
	case strings.HasPrefix(tod, "every minute") && strings.HasPrefix(part, "every"):
		return part + strings.TrimPrefix(tod, "every minute"), true
	case tod == "every minute":
		return tod + " " + part, true
	case len(d.times) > 0:
		return part + " in the " + plural(len(d.times), "minute") + " " + strings.TrimPrefix(tod, "at "), true
	case strings.HasPrefix(tod, "at "):
		return part + " " + tod, true
	}
	return part + " of " + tod, true
}

// clock formats a time of day, with the start's seconds when a rule
// without a schedule keeps them, or the one second a schedule lists.
func (d *describer) clock(h, m int) string {
	d.clocked = true
	if d.second != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, d.second)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// weekDays lists the days of a Week rule, Monday first.
func (d *describer) weekDays() string {
	var days []time.Weekday
	if d.sched != nil && len(d.sched.WeekDays) > 0 {
		for _, w := range d.sched.WeekDays {
			if wd, ok := w.Time(); ok {
				days = append(days, wd)
			}
		}
	} else if d.known {
		days = []time.Weekday{d.start.Weekday()}
	} else {
		return "the start time's weekday"
	}
	monday := func(w time.Weekday) int { return (int(w) + 6) % 7 }
	slices.SortFunc(days, func(a, b time.Weekday) int { return monday(a) - monday(b) })
	var idx []int
	for _, w := range days {
		idx = append(idx, monday(w))
	}
	var parts []string
	for _, run := range runs(idx) {
		a, b := time.Weekday((run[0]+1)%7), time.Weekday((run[1]+1)%7)
		switch {
		case run[1]-run[0] >= 2:
			parts = append(parts, a.String()+" to "+b.String())
		case run[1] > run[0]:
			parts = append(parts, a.String(), b.String())
		default:
			parts = append(parts, a.String())
		}
	}
	return joinAnd(parts)
}

// monthDays lists the days of a Month rule: days of the month, then
// weekdays of the month.
func (d *describer) monthDays() string {
	s := d.sched
	if s == nil || len(s.MonthDays) == 0 && len(s.MonthlyOccurrences) == 0 {
		if !d.known {
			return "the start time's day"
		}
		return "the " + ordinalSuffix(d.start.Day())
	}
	var items []string
	var pos, neg []int
	for _, v := range s.MonthDays {
		if v > 0 {
			pos = append(pos, v)
		} else {
			neg = append(neg, v)
		}
	}
	slices.Sort(pos)
	slices.Sort(neg)
	if len(pos) > 0 {
		list := make([]string, len(pos))
		for i, v := range pos {
			list[i] = ordinalSuffix(v)
		}
		if len(neg) == 0 && len(s.MonthlyOccurrences) == 0 {
			return "the " + joinAnd(list)
		}
		for _, v := range list {
			items = append(items, "the "+v)
		}
	}
	for _, v := range neg {
		if v == -1 {
			items = append(items, "the last day")
		} else {
			items = append(items, "the "+ordinalWord(-v)+"-to-last day")
		}
	}
	// Weekdays of the month, grouped by day, Monday first.
	byDay := map[time.Weekday][]int{}
	var order []time.Weekday
	for _, o := range s.MonthlyOccurrences {
		wd, ok := o.Day.Time()
		if !ok {
			continue
		}
		if _, seen := byDay[wd]; !seen {
			order = append(order, wd)
		}
		byDay[wd] = append(byDay[wd], o.Occurrence)
	}
	slices.SortFunc(order, func(a, b time.Weekday) int { return (int(a)+6)%7 - (int(b)+6)%7 })
	for _, wd := range order {
		occ := byDay[wd]
		if slices.Contains(occ, 0) {
			items = append(items, "every "+wd.String())
			continue
		}
		// First, second, ..., then from the end: third-to-last, ..., last.
		slices.SortFunc(occ, func(a, b int) int {
			ka, kb := a, b
			if a < 0 {
				ka = 100 + a
			}
			if b < 0 {
				kb = 100 + b
			}
			return ka - kb
		})
		words := make([]string, len(occ))
		for i, n := range occ {
			switch {
			case n == -1:
				words[i] = "last"
			case n < 0:
				words[i] = ordinalWord(-n) + "-to-last"
			default:
				words[i] = ordinalWord(n)
			}
		}
		items = append(items, "the "+joinAnd(words)+" "+wd.String())
	}
	return joinAnd(items)
}

// months says which months a Month rule runs in.
func (d *describer) months() string {
	var names []string
	if d.sched != nil {
		for _, m := range sortedInts(d.sched.Months) {
			names = append(names, time.Month(m).String())
		}
	}
	n := d.interval
	switch {
	case len(names) == 0:
		if n == 1 {
			return "every month"
		}
		return "every " + ordinalInterval(n) + " month"
	case n == 1:
		return joinAnd(names)
	}
	return "every " + ordinalInterval(n) + " month that is " + joinOr(names)
}

// yearDate says on which day of which months a Year rule runs.
func (d *describer) yearDate() string {
	var months []int
	if d.sched != nil {
		months = sortedInts(d.sched.Months)
	}
	if len(months) == 0 {
		if !d.known {
			return "the start time's date"
		}
		months = []int{int(d.start.Month())}
	}
	names := make([]string, len(months))
	for i, m := range months {
		names[i] = time.Month(m).String()
	}
	if !d.known {
		return "the start time's day of " + joinAnd(names)
	}
	day := d.start.Day()
	if len(names) == 1 {
		return strconv.Itoa(day) + " " + names[0]
	}
	return "the " + ordinalSuffix(day) + " of " + joinAnd(names)
}

// zoneNote returns what the parentheses after the core say: the zone and
// what daylight saving changes do to the fixed times named; empty when the
// description names no wall time.
func (d *describer) zoneNote() string {
	if !d.wall {
		return ""
	}
	zone := d.r.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	notes := []string{zone}
	if !d.known || d.loc == time.UTC {
		return zone
	}
	times := d.times
	if len(times) == 0 && len(d.hours.vals) == 1 && len(d.minutes.vals) == 1 {
		times = []int{d.hours.vals[0]*60 + d.minutes.vals[0]}
	}
	if len(times) == 0 {
		return zone
	}
	// A schedule that leaves the hour free keeps its cadence: its times
	// are skipped in a gap and run in both passes of a repeated hour.
	free := d.hours.all || hourFree(d.r, d.hours.vals)
	gaps, overlaps := dstChanges(d.loc, d.start.Year())
	var shifted, skipped, once []string
	for _, t := range times {
		for _, g := range gaps {
			if t >= g.from && t < g.to {
				if free {
					skipped = append(skipped, d.clock(t/60, t%60))
				} else {
					shifted = append(shifted, fmt.Sprintf("%s runs at %s", d.clock(t/60, t%60), d.clock((t+g.to-g.from)/60%24, (t+g.to-g.from)%60)))
				}
				break
			}
		}
		for _, o := range overlaps {
			if t >= o.from && t < o.to {
				once = append(once, d.clock(t/60, t%60))
				break
			}
		}
	}
	plural := func(list []string, one, many string) string {
		if len(list) > 1 {
			return joinAnd(list) + " " + many
		}
		return joinAnd(list) + " " + one
	}
	if len(shifted) > 0 {
		notes = append(notes, joinAnd(shifted)+" when clocks go forward")
	}
	if len(skipped) > 0 {
		notes = append(notes, plural(skipped, "is", "are")+" skipped when clocks go forward")
	}
	switch {
	case len(once) > 0 && free:
		notes = append(notes, plural(once, "runs", "run")+" twice when clocks go back")
	case len(once) > 0:
		notes = append(notes, plural(once, "runs", "run")+" once when clocks go back")
	}
	return strings.Join(notes, "; ")
}

// regularMinutes reports whether mins (sorted) are every step minutes of
// the hour from offset: a single minute is step 60.
func regularMinutes(mins []int) (step, offset int, ok bool) {
	if len(mins) == 1 {
		return 60, mins[0], true
	}
	step = mins[1] - mins[0]
	if 60%step != 0 || len(mins) != 60/step || mins[0] >= step {
		return 0, 0, false
	}
	for i := 1; i < len(mins); i++ {
		if mins[i]-mins[i-1] != step {
			return 0, 0, false
		}
	}
	return step, mins[0], true
}

// runs groups sorted values into runs of consecutive ones, [first, last].
func runs(vals []int) [][2]int {
	var out [][2]int
	for _, v := range vals {
		if n := len(out); n > 0 && out[n-1][1] == v-1 {
			out[n-1][1] = v
			continue
		}
		out = append(out, [2]int{v, v})
	}
	return out
}

// ranges writes sorted values with runs of three or more as "A to B".
func ranges(vals []int, to string) string {
	var parts []string
	for _, r := range runs(vals) {
		switch {
		case r[1]-r[0] >= 2:
			parts = append(parts, strconv.Itoa(r[0])+to+strconv.Itoa(r[1]))
		case r[1] > r[0]:
			parts = append(parts, strconv.Itoa(r[0]), strconv.Itoa(r[1]))
		default:
			parts = append(parts, strconv.Itoa(r[0]))
		}
	}
	return joinAnd(parts)
}

func every(n int, unit string) string {
	if n == 1 {
		return "every " + unit
	}
	return fmt.Sprintf("every %d %ss", n, unit)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func joinInts(vals []int) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.Itoa(v)
	}
	return joinAnd(s)
}

func joinAnd(items []string) string { return joinWith(items, "and") }

func joinOr(items []string) string { return joinWith(items, "or") }

func joinWith(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// ordinalSuffix writes 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinalSuffix(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// ordinalWord writes first to fifth in words, larger numbers with a suffix.
func ordinalWord(n int) string {
	words := []string{"", "first", "second", "third", "fourth", "fifth"}
	if n > 0 && n < len(words) {
		return words[n]
	}
	return ordinalSuffix(n)
}

// ordinalInterval writes "other" for 2 and "3rd", "4th" for larger ones,
// as in "every other month".
func ordinalInterval(n int) string {
	if n == 2 {
		return "other"
	}
	return ordinalSuffix(n)
}

func sortedInts(vals []int) []int {
	out := slices.Clone(vals)
	slices.Sort(out)
	return slices.Compact(out)
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// hashedFields names the fields of r's cron spec that are H forms
// ("minute", "hour"), and reports whether r's schedule gives their values
// (it does once expanded for a job: see [Recurrence.ExpandCronJob]).
func (r *Recurrence) hashedFields() (names []string, given bool) {
	if r.Cron == "" {
		return nil, false
	}
	c, err := parseCron(r.Cron, noJob)
	if err != nil || !c.hashed() {
		return nil, false
	}
	s := r.Schedule
	if s == nil {
		s = &Schedule{}
	}
	given = true
	for _, f := range []struct {
		hashed bool
		name   string
		n      int
	}{
		{c.sec.hashed, "second", len(s.Seconds)}, {c.min.hashed, "minute", len(s.Minutes)}, {c.hour.hashed, "hour", len(s.Hours)},
		{c.dom.hashed, "day of the month", len(s.MonthDays)}, {c.month.hashed, "month", len(s.Months)},
		{c.dow.hashed, "day of the week", len(s.WeekDays) + len(s.MonthlyOccurrences)},
	} {
		if f.hashed {
			names = append(names, f.name)
			given = given && f.n > 0
		}
	}
	return names, given
}

// hashedValues says the values r's schedule gives the H fields of its
// cron spec: "minute 23", "minutes 7, 22, 37 and 52".
func (r *Recurrence) hashedValues() []string {
	c, _ := parseCron(r.Cron, noJob)
	s := r.Schedule
	var out []string
	ints := func(hashed bool, one, many string, vals []int) {
		if !hashed {
			return
		}
		words := make([]string, len(vals))
		for i, v := range vals {
			words[i] = strconv.Itoa(v)
		}
		name := one
		if len(vals) > 1 {
			name = many
		}
		out = append(out, name+" "+joinAnd(words))
	}
	ints(c.sec.hashed, "second", "seconds", s.Seconds)
	ints(c.min.hashed, "minute", "minutes", s.Minutes)
	ints(c.hour.hashed, "hour", "hours", s.Hours)
	ints(c.dom.hashed, "day", "days", s.MonthDays)
	ints(c.month.hashed, "month", "months", s.Months)
	if c.dow.hashed {
		days := make([]string, len(s.WeekDays))
		for i, d := range s.WeekDays {
			days[i] = string(d)
		}
		for _, o := range s.MonthlyOccurrences {
			days = append(days, string(o.Day))
		}
		out = append(out, joinAnd(days))
	}
	return out
}

// spanWords says d, a whole number of seconds, in days, hours, minutes
// and seconds: "15 minutes", "1 hour and 30 minutes".
func spanWords(d time.Duration) string {
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		word string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if n := d / u.d; n > 0 {
			parts = append(parts, strconv.Itoa(int(n))+" "+plural(int(n), u.word))
			d -= n * u.d
		}
	}
	if len(parts) == 0 {
		return "0 seconds"
	}
	return joinAnd(parts)
}
