package recurrence

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teambition/rrule-go"
)

// Next computes between minWindow and maxWindow occurrences at once (more
// when the caller walks from one occurrence to the next); later calls whose
// answer lies within the computed window are answered from it.
const (
	minWindow = 4
	maxWindow = 64
)

// searchHorizon is how far Compile looks for a first occurrence of a
// monthly or yearly rule before it reports that the schedule never matches.
const searchHorizon = 400 // years

// Rule is a recurrence compiled against the instant its periods count from
// (the job's startTime, or its creation time when it has none). Its methods
// are pure functions of their arguments: a Rule reads no clock. It is safe
// for concurrent use.
type Rule struct {
	loc    *time.Location
	zone   *zoneInfo
	start  time.Time // first instant an occurrence may have
	end    time.Time // last instant an occurrence may have, when hasEnd
	hasEnd bool
	count  int

	// step > 0: Second, Minute or Hour without a schedule; occurrences
	// are start + k*step in elapsed time.
	step time.Duration

	// free: the schedule does not fix the hour (see hourFree), so a
	// reading runs at every instant the clocks show it: at none in a gap,
	// at both when it occurs twice.
	free bool

	// Otherwise occurrences are expanded by rrule-go in "wall" space: wall
	// clock readings of loc written as UTC times, so that the expansion
	// never meets a DST transition. opts holds one rule per day set whose
	// union is wanted (monthDays, ordinal and plain monthlyOccurrences).
	freq      Frequency
	interval  int64
	opts      []rrule.ROption
	rules     atomic.Pointer[[]*rrule.RRule] // opts built, with DTSTART wallStart, on first use; copied, never changed
	wallStart time.Time                      // start's wall clock, whole seconds
	nanos     time.Duration                  // start's sub-second part, kept without a schedule
	wallUntil time.Time                      // zero when there is no end
	// startRepeated: the recurrence has no schedule and its start is the
	// second pass of a repeated wall clock time. The start is its first
	// occurrence, although that time of day runs at its first pass on
	// every other day: expand and nextTemplate return it for an instant
	// before the start.
	startRepeated bool

	// spread > 0: occurrences are spread over that window after their
	// scheduled instants, by offsets hashed from seed (see spread.go).
	// Consecutive scheduled instants lie at least minGap apart.
	spread time.Duration
	seed   uint64
	minGap time.Duration
	last   lastPlanned // the occurrence Next returned last, for a caller walking them

	win  atomic.Pointer[window]
	tpl  atomic.Pointer[template]  // expanded once a window no longer answers; see template
	conv atomic.Pointer[converter] // the zone period met last, for nextTemplate
}

// window is a run of consecutive occurrences: list holds every occurrence
// in (lo, list[len(list)-1]], in order; done says there are none after it.
type window struct {
	lo   time.Time
	list []time.Time
	done bool
}

// Compile validates r (see [Recurrence.Validate]) and returns the Rule whose
// first period holds start: the job's startTime, or its creation time when it
// has none. No occurrence is earlier than start. A nil r or a zero start is
// an error, and so is a schedule that can never match a date that exists
// (day 31 in a month that is always short; a [*FieldError] for "schedule").
//
// Compile is [CompileJob] for a recurrence of no particular job: its
// collection and job names are empty, which decide the offsets of a
// Window and the values of H in a cron spec. A job's timing compiles with
// CompileJob.
func Compile(r *Recurrence, start time.Time) (*Rule, error) {
	return CompileJob(r, start, "", "")
}

// CompileJob is [Compile] for the job named job in collection collection:
// a recurrence with a Window spreads its occurrences by offsets derived
// from the two names and each scheduled instant (see the package
// documentation, "Spreading"), and H in its cron spec takes the job's
// values ("Cron specs"), so that every scheduler instance, every preview
// and every test computes the same instants for the job.
func CompileJob(r *Recurrence, start time.Time, collection, job string) (*Rule, error) {
	if r == nil {
		return nil, errors.New("recurrence: nil recurrence")
	}
	if start.IsZero() {
		return nil, errors.New("recurrence: zero start time")
	}
	seed := jobSeed(collection, job)
	r, err := r.resolve(seed)
	if err != nil {
		return nil, err
	}
	loc, err := LoadTimeZone(r.TimeZone)
	if err != nil {
		return nil, err
	}
	start = start.Round(0).In(loc)
	rl := &Rule{
		loc:      loc,
		zone:     zoneOf(loc),
		start:    start,
		count:    int(r.Count),
		freq:     r.Frequency,
		interval: int64(max(r.Interval, 1)),
		spread:   time.Duration(r.Ext().Window),
	}
	if rl.spread > 0 {
		rl.seed = seed
	}
	if r.EndTime != nil {
		rl.end, rl.hasEnd = r.EndTime.Round(0), true
	}
	sched := r.Schedule
	if sched != nil && sched.empty() {
		sched = nil
	}
	if unit := r.Frequency.fine(); sched == nil && unit > 0 {
		rl.step = time.Duration(rl.interval) * unit
		rl.minGap = rl.step
		return rl, nil
	}

	wall := rl.zone.wall(start)
	rl.wallStart = wall.Truncate(time.Second)
	if sched == nil {
		rl.nanos = wall.Sub(rl.wallStart)
		if !rl.zone.fixed {
			_, second, n := rl.zone.instants(rl.wallStart.Unix())
			rl.startRepeated = n == 2 && second == start.Unix() && !(rl.hasEnd && start.After(rl.end))
		}
	}
	if rl.hasEnd {
		rl.wallUntil = rl.zone.wall(rl.end).Add(rl.zone.maxJump + time.Second)
		if !rl.wallUntil.After(rl.wallStart) {
			// Ends before it starts: no occurrences. Keep an Until that
			// rrule-go can tell from "no end".
			rl.wallUntil = rl.wallStart.Add(-time.Second)
		}
	}
	rl.opts = buildOptions(r.Frequency, int(rl.interval), sched, rl.wallStart)
	rl.free = hourFree(r, rl.opts[0].Byhour)
	if rl.spread > 0 {
		rl.minGap = rl.gapBound()
	}
	if rl.interval == 1 {
		for i := range rl.opts {
			rl.opts[i] = daily(rl.opts[i])
		}
	}
	// Past this point only Second, Minute, Hour, Month and Year rules can fail:
	// the scheduler's validation relies on it to check Day and Week rules
	// without building them (its TestCompileErrIsCompile).
	if err := rl.checkGrid(); err != nil {
		return nil, err
	}

	if !rl.zone.fixed {
		rl.wallStart = rl.floorNearChange(start)
	}

	if r.Frequency == Month || r.Frequency == Year {
		if !rl.matchesWithin(rl.wallStart.AddDate(searchHorizon, 0, 0)) {
			if reason := rl.unreachedMonths(sched); reason != "" {
				return nil, &FieldError{Path: "schedule.months", Reason: reason}
			}
			return nil, &FieldError{Path: "schedule", Reason: "never matches a date that exists (for example day 31 in months that have 30 days or fewer), counting from the start " + start.Format(time.RFC3339)}
		}
	}
	return rl, nil
}

// fine returns the length of f when it is a frequency finer than a day
// (Second, Minute or Hour), whose rules without a schedule step in elapsed
// time, and 0 otherwise.
func (f Frequency) fine() time.Duration {
	switch f {
	case Second:
		return time.Second
	case Minute:
		return time.Minute
	case Hour:
		return time.Hour
	}
	return 0
}

// Resolution returns the unit that the rule's occurrences lie apart in
// whole multiples of: a second when the recurrence has seconds (frequency
// Second, or a schedule that lists seconds), else a minute.
func (r *Rule) Resolution() time.Duration {
	if r.freq == Second || len(r.opts) > 0 && len(r.opts[0].Bysecond) != 1 {
		return time.Second
	}
	return time.Minute
}

// hourFree reports whether a recurrence that runs in the given hours
// (empty: every hour) leaves the hour free, so that its times keep their
// cadence through a change of the clocks rather than name a time of day:
// no hours at frequency Minute or Hour, minutes without hours (every hour
// of the day), hours listing all 24, or a cron spec with "*" or a step in
// its hour field.
func hourFree(r *Recurrence, hours []int) bool {
	var seen uint32
	for _, h := range hours {
		seen |= 1 << h
	}
	if len(hours) == 0 || seen == 1<<24-1 {
		return true
	}
	if r.Cron == "" {
		return false
	}
	c, err := parseCron(r.Cron, noJob)
	return err == nil && c.hour.stepped
}

// floorNearChange returns the earliest wall clock reading the rule expands
// from: the start's, unless the clocks change within the zone's largest
// jump of the start, when readings earlier than the start's may run at or
// after it: in a repeated hour just after the start, the readings just
// before the start's occur again (a rule whose hours are free runs them
// then), and in a gap just before it a time the schedule fixes runs
// shifted past the start's reading (02:30 runs at 03:30, after a start at
// 03:10). It then returns an earlier reading on the rule's period grid, by
// whole intervals, at least the change's size back; instants before the
// start are never occurrences.
func (r *Rule) floorNearChange(start time.Time) time.Time {
	jump := r.zone.maxJump
	_, before := start.Add(-jump).Zone()
	_, at := start.Zone()
	_, after := start.Add(jump).Zone()
	if before == at && at == after {
		return r.wallStart
	}
	unit := r.freq.fine()
	if unit == 0 {
		return r.periodStart(-r.interval)
	}
	step := time.Duration(r.interval) * unit
	return r.wallStart.Add(-(jump + step - 1) / step * step)
}

// unreachedMonths explains a Month rule whose interval, counted from the
// start's month, never reaches a month the schedule lists; empty when that
// is not why it never matches.
func (r *Rule) unreachedMonths(s *Schedule) string {
	if r.freq != Month || r.interval == 1 || s == nil || len(s.Months) == 0 {
		return ""
	}
	first := int(r.zone.wall(r.start).Month()) - 1 // the start's own month: wallStart may lie earlier
	var reached []string
	for m := first; ; {
		if slices.Contains(s.Months, m+1) {
			return ""
		}
		reached = append(reached, time.Month(m+1).String())
		if m = (m + int(r.interval)) % 12; m == first {
			break
		}
	}
	list := strings.Join(reached[:len(reached)-1], ", ") + " and " + reached[len(reached)-1]
	if len(reached) == 1 {
		list = reached[0] + " only"
	}
	return fmt.Sprintf("never matches: every %d months counted from the start %s are %s, none of them a listed month",
		r.interval, r.start.Format(time.RFC3339), list)
}

// checkGrid rejects Second, Minute and Hour rules whose interval never
// lands on a scheduled second, minute or hour (every 30 minutes from minute
// 10 never reaches minute 15): their expansion would search forever.
func (r *Rule) checkGrid() error {
	o := r.opts[0]
	var cycle, phase int64
	switch r.freq {
	case Second:
		cycle = 86400
		phase = int64(r.wallStart.Hour()*3600 + r.wallStart.Minute()*60 + r.wallStart.Second())
	case Minute:
		cycle = 1440
		phase = int64(r.wallStart.Hour()*60 + r.wallStart.Minute())
	case Hour:
		cycle = 24
		phase = int64(r.wallStart.Hour())
	default:
		return nil
	}
	g := gcd(r.interval, cycle)
	in := func(list []int, v int) bool { return len(list) == 0 || slices.Contains(list, v) }
	for x := phase % g; x < cycle; x += g {
		var ok bool
		switch r.freq {
		case Hour:
			ok = in(o.Byhour, int(x))
		case Minute:
			ok = in(o.Byhour, int(x/60)) && in(o.Byminute, int(x%60))
		default: // Second
			ok = in(o.Byhour, int(x/3600)) && in(o.Byminute, int(x/60%60)) && in(o.Bysecond, int(x%60))
		}
		if ok {
			return nil
		}
	}
	return &FieldError{Path: "schedule", Reason: fmt.Sprintf("never matches: every %d %ss counted from the start %s never lands on a scheduled %s",
		r.interval, strings.ToLower(string(r.freq)), r.start.Format(time.RFC3339), map[Frequency]string{Second: "hour, minute and second", Minute: "hour and minute", Hour: "hour"}[r.freq])}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// empty reports whether s has no entries at all (then it is treated as
// absent).
func (s *Schedule) empty() bool {
	return len(s.Seconds) == 0 && len(s.Minutes) == 0 && len(s.Hours) == 0 && len(s.WeekDays) == 0 &&
		len(s.MonthDays) == 0 && len(s.MonthlyOccurrences) == 0 && len(s.Months) == 0
}

var rruleFreq = map[Frequency]rrule.Frequency{
	Second: rrule.SECONDLY,
	Minute: rrule.MINUTELY,
	Hour:   rrule.HOURLY,
	Day:    rrule.DAILY,
	Week:   rrule.WEEKLY,
	Month:  rrule.MONTHLY,
	Year:   rrule.YEARLY,
}

var rruleDay = map[Weekday]rrule.Weekday{
	Monday: rrule.MO, Tuesday: rrule.TU, Wednesday: rrule.WE, Thursday: rrule.TH,
	Friday: rrule.FR, Saturday: rrule.SA, Sunday: rrule.SU,
}

// buildOptions returns the rrule options whose union is the recurrence.
// Every BY* part that RRULE would default from DTSTART is filled in
// explicitly from the original start, so that a rule re-anchored at a later
// DTSTART keeps the same defaults.
func buildOptions(f Frequency, interval int, s *Schedule, ws time.Time) []rrule.ROption {
	base := rrule.ROption{Freq: rruleFreq[f], Interval: interval, Wkst: rrule.MO}
	coarse := f.fine() == 0 // Day or coarser
	if s == nil {
		base.Bysecond = []int{ws.Second()}
		base.Byminute = []int{ws.Minute()}
		base.Byhour = []int{ws.Hour()}
		switch f {
		case Week:
			base.Byweekday = []rrule.Weekday{rruleDay[weekdays[ws.Weekday()]]}
		case Month:
			base.Bymonthday = []int{ws.Day()}
		case Year:
			base.Bymonth = []int{int(ws.Month())}
			base.Bymonthday = []int{ws.Day()}
		}
		return []rrule.ROption{base}
	}

	// A field finer than the frequency that the schedule leaves out takes
	// every value (at frequency Second the seconds, at Second and Minute
	// the minutes), except the seconds, which are 0 below frequency Second
	// unless listed; seconds without minutes run in every minute, as
	// minutes without hours run in every hour.
	switch {
	case len(s.Seconds) > 0:
		base.Bysecond = slices.Clone(s.Seconds)
	case f != Second:
		base.Bysecond = []int{0}
	}
	switch {
	case len(s.Minutes) > 0:
		base.Byminute = slices.Clone(s.Minutes)
	case f == Minute || f == Second:
	case len(s.Seconds) > 0:
		// Given, not left to rrule-go, which would take DTSTART's.
		base.Byminute = seq(0, 60)
	default:
		base.Byminute = []int{ws.Minute()}
	}
	switch {
	case len(s.Hours) > 0:
		base.Byhour = slices.Clone(s.Hours)
	case coarse && (len(s.Minutes) > 0 || len(s.Seconds) > 0):
		base.Byhour = make([]int, 24)
		for h := range base.Byhour {
			base.Byhour[h] = h
		}
	case coarse:
		base.Byhour = []int{ws.Hour()}
	}
	if len(s.Months) > 0 {
		base.Bymonth = slices.Clone(s.Months)
	}
	switch f {
	case Week:
		if len(s.WeekDays) > 0 {
			for _, d := range s.WeekDays {
				base.Byweekday = append(base.Byweekday, rruleDay[d])
			}
		} else {
			base.Byweekday = []rrule.Weekday{rruleDay[weekdays[ws.Weekday()]]}
		}
	case Month:
		var out []rrule.ROption
		if len(s.MonthDays) > 0 {
			o := base
			o.Bymonthday = slices.Clone(s.MonthDays)
			out = append(out, o)
		}
		var nth, every []rrule.Weekday
		for _, m := range s.MonthlyOccurrences {
			d := rruleDay[m.Day]
			if m.Occurrence == 0 {
				every = append(every, d)
			} else {
				nth = append(nth, d.Nth(m.Occurrence))
			}
		}
		for _, days := range [][]rrule.Weekday{nth, every} {
			if len(days) > 0 {
				o := base
				o.Byweekday = days
				out = append(out, o)
			}
		}
		if len(out) == 0 {
			base.Bymonthday = []int{ws.Day()}
			out = append(out, base)
		}
		return out
	case Year:
		if len(base.Bymonth) == 0 {
			base.Bymonth = []int{int(ws.Month())}
		}
		base.Bymonthday = []int{ws.Day()}
	}
	return []rrule.ROption{base}
}

// daily returns a DAILY rule equivalent to o when o is a weekly, monthly or
// yearly rule with interval 1 whose days are chosen by filters alone (no
// ordinal weekdays, which need the month around them). rrule-go produces a
// whole period before it yields the first occurrence of it; day by day, a
// call that needs the next few occurrences does a day's work, not a
// month's.
func daily(o rrule.ROption) rrule.ROption {
	if o.Interval != 1 || o.Freq != rrule.WEEKLY && o.Freq != rrule.MONTHLY && o.Freq != rrule.YEARLY {
		return o
	}
	for _, d := range o.Byweekday {
		if d.N() != 0 {
			return o
		}
	}
	o.Freq = rrule.DAILY
	return o
}

// Location returns the time zone in which the rule's schedule is evaluated
// (UTC when the recurrence names none). Occurrences are returned in it.
func (r *Rule) Location() *time.Location { return r.loc }

// Next returns the first occurrence strictly after after, or the zero Time
// when there is none (the recurrence's endTime, which is inclusive, has
// passed). Occurrences are never earlier than the start the rule was
// compiled with. With a Window, occurrences are the planned instants
// (scheduled instant plus offset: see [Rule.Scheduled]), and endTime
// applies to them.
//
// Next does not apply Count: Count counts occurrences that ran, which only
// the caller knows; see [Rule.Occurrences]. The cost of a call does not
// depend on how long ago the start was. The first calls expand a few
// occurrences at a time and later ones are answered from them; once a rule
// is used beyond those, it expands its wall clock pattern once (one period,
// or each kind of month for Month and Year rules) and answers every later
// call from it by arithmetic, wherever the instant asked about lies.
func (r *Rule) Next(after time.Time) time.Time {
	if r.spread > 0 {
		_, p := r.nextPlanned(after)
		return p
	}
	return r.next(after)
}

// next returns the first scheduled instant strictly after after: Next
// without the Window's offsets.
func (r *Rule) next(after time.Time) time.Time {
	after = after.Round(0)
	if r.hasEnd && !after.Before(r.end) {
		return time.Time{}
	}
	if r.step > 0 {
		return r.nextStep(after)
	}
	tp := r.tpl.Load()
	if tp != nil && tp.ok {
		return r.nextTemplate(tp, after)
	}
	limit := minWindow
	w := r.win.Load()
	if w != nil && !after.Before(w.lo) {
		list := w.list
		i := sort.Search(len(list), func(i int) bool { return list[i].After(after) })
		if i < len(list) {
			return list[i]
		}
		if w.done {
			return time.Time{}
		}
		if len(list) > 0 && after.Equal(list[len(list)-1]) {
			// The caller is walking occurrence by occurrence: compute
			// more at once.
			limit = min(2*len(list), maxWindow)
		}
	}
	if w != nil && tp == nil {
		// The rule is in use beyond its first few occurrences: expand one
		// period of it once, if its pattern allows, and answer from that.
		tp = r.buildTemplate()
		r.tpl.Store(tp)
		if tp.ok {
			return r.nextTemplate(tp, after)
		}
	}
	w = r.expand(after, limit)
	r.win.Store(w)
	if len(w.list) == 0 {
		return time.Time{}
	}
	return w.list[0]
}

// nextStep is Next for rules that step in elapsed time.
func (r *Rule) nextStep(after time.Time) time.Time {
	t := r.start
	if !after.Before(r.start) {
		d := after.Sub(r.start)
		if d > time.Duration(1<<63-1)-r.step {
			return time.Time{}
		}
		t = r.start.Add((d/r.step + 1) * r.step)
	}
	if r.hasEnd && t.After(r.end) {
		return time.Time{}
	}
	return t
}

// Occurrences yields, in increasing order, the occurrences at or after
// from, stopping after Count of them (counted from the first yielded, since
// Count counts occurrences that actually run) or at EndTime, whichever comes
// first. Without either it never ends on its own.
func (r *Rule) Occurrences(from time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		n := 0
		for t := r.Next(from.Round(0).Add(-1)); !t.IsZero(); t = r.Next(t) {
			if !yield(t) {
				return
			}
			n++
			if r.count > 0 && n >= r.count {
				return
			}
		}
	}
}

// expand computes the window of occurrences after after: at least limit of
// them unless the recurrence ends first.
func (r *Rule) expand(after time.Time, limit int) *window {
	w := &window{lo: after}
	a := after
	startRuns := false // the start runs, a second pass (see startRepeated)
	if a.Before(r.start) {
		a = r.start.Add(-1)
		startRuns = r.startRepeated
	}
	jump := r.zone.maxJump
	// A wall clock reading earlier than ws cannot map to an instant after a.
	ws := r.zone.wall(a).Add(-jump).Truncate(time.Second)
	if ws.Before(r.wallStart) {
		ws = r.wallStart
	}
	next := r.walls(r.anchor(ws))
	conv := converter{z: r.zone}
	out := make([]time.Time, 0, limit+limit/2)
	if startRuns {
		out = append(out, r.start)
	}
	var h time.Time // the limit-th occurrence, once known
	for {
		wt, ok := next()
		if !ok {
			w.done = true
			break
		}
		if wt.Before(ws) {
			continue
		}
		x, y, n := r.instants(&conv, wt.Unix())
		if n == 0 {
			continue
		}
		t := time.Unix(x, int64(r.nanos))
		if !h.IsZero() && t.Add(-jump).After(h) {
			// Later wall readings map to instants after t-jump: done.
			break
		}
		for k := range n {
			if k == 1 {
				t = time.Unix(y, int64(r.nanos)) // the reading's second pass
			}
			if t.After(a) && !(r.hasEnd && t.After(r.end)) {
				out = append(out, t)
			}
		}
		if h.IsZero() && len(out) >= limit {
			slices.SortFunc(out, time.Time.Compare)
			h = out[len(out)-1]
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	out = slices.CompactFunc(out, time.Time.Equal)
	if !h.IsZero() {
		i := sort.Search(len(out), func(i int) bool { return out[i].After(h) })
		if i < len(out) {
			// Occurrences after h were met and dropped: the window is
			// not the last one even when the expansion ended.
			w.done = false
		}
		out = out[:i]
	}
	for i := range out {
		out[i] = out[i].In(r.loc)
	}
	w.list = out
	return w
}

// matchesWithin reports whether the rule has an occurrence with a wall
// clock reading before limit.
func (r *Rule) matchesWithin(limit time.Time) bool {
	next := r.wallsOf(r.opts, r.wallStart, limit)
	_, ok := next()
	return ok
}

// walls returns an iterator over the rule's wall clock readings at or after
// dtstart (which anchor must have placed on the rule's period grid), in
// increasing order without repeats.
func (r *Rule) walls(dtstart time.Time) func() (time.Time, bool) {
	rules := r.builtRules()
	its := make([]func() (time.Time, bool), 0, len(rules))
	for _, tmpl := range rules {
		// Re-anchor a copy of the rule built by Compile: DTStart rebuilds
		// it without validating the options again.
		c := *tmpl
		c.DTStart(dtstart)
		its = append(its, c.Iterator())
	}
	return merge(its)
}

// builtRules returns the rrule-go rules of r.opts, building them on first
// use: a Rule compiled only to validate a recurrence never needs them.
func (r *Rule) builtRules() []*rrule.RRule {
	if p := r.rules.Load(); p != nil {
		return *p
	}
	rules := make([]*rrule.RRule, 0, len(r.opts))
	for _, o := range r.opts {
		o.Dtstart, o.Until = r.wallStart, r.wallUntil
		rules = append(rules, mustRRule(o))
	}
	if r.rules.CompareAndSwap(nil, &rules) {
		return rules
	}
	return *r.rules.Load()
}

// wallsOf is walls for the given options, ending after until.
func (r *Rule) wallsOf(opts []rrule.ROption, dtstart, until time.Time) func() (time.Time, bool) {
	its := make([]func() (time.Time, bool), 0, len(opts))
	for _, o := range opts {
		o.Dtstart, o.Until = dtstart, until
		its = append(its, mustRRule(o).Iterator())
	}
	return merge(its)
}

// merge returns the union of increasing iterators, in increasing order
// without repeats.
func merge(its []func() (time.Time, bool)) func() (time.Time, bool) {
	if len(its) == 1 {
		return its[0]
	}
	heads := make([]time.Time, len(its))
	live := make([]bool, len(its))
	for i, it := range its {
		heads[i], live[i] = it()
	}
	return func() (time.Time, bool) {
		best := -1
		for i := range its {
			if live[i] && (best < 0 || heads[i].Before(heads[best])) {
				best = i
			}
		}
		if best < 0 {
			return time.Time{}, false
		}
		t := heads[best]
		for i := range its {
			for live[i] && !heads[i].After(t) {
				heads[i], live[i] = its[i]()
			}
		}
		return t, true
	}
}

// mustRRule builds a rrule-go rule from options that Validate has checked
// (it checks every bound rrule-go checks).
func mustRRule(o rrule.ROption) *rrule.RRule {
	rr, err := rrule.NewRRule(o)
	if err != nil {
		panic(fmt.Sprintf("recurrence: rrule rejected validated options: %v", err))
	}
	return rr
}

// anchor returns a DTSTART for a rule that yields exactly the wall clock
// readings at or after ws that the rule compiled from wallStart yields:
// ws itself when its period is one the interval selects (periods count
// from the one holding the start; weeks start on Monday), else the start of
// the next selected period.
func (r *Rule) anchor(ws time.Time) time.Time {
	if !ws.After(r.wallStart) {
		return r.wallStart
	}
	q := r.periodIndex(ws)
	if q%r.interval == 0 {
		return ws
	}
	return r.periodStart((q/r.interval + 1) * r.interval)
}

// periodIndex returns how many frequency units (not intervals) lie between
// the period holding wallStart and the one holding w (w >= wallStart).
func (r *Rule) periodIndex(w time.Time) int64 {
	s := r.wallStart
	switch r.freq {
	case Second, Minute, Hour:
		u := r.freq.fine()
		return int64(w.Sub(s.Truncate(u)) / u)
	case Day:
		return civilDay(w) - civilDay(s)
	case Week:
		return (civilDay(w) - mondayOf(s)) / 7
	case Month:
		return int64(w.Year()*12+int(w.Month())) - int64(s.Year()*12+int(s.Month()))
	default: // Year
		return int64(w.Year() - s.Year())
	}
}

// periodStart returns the first wall clock reading of period q.
func (r *Rule) periodStart(q int64) time.Time {
	s := r.wallStart
	switch r.freq {
	case Second, Minute, Hour:
		u := r.freq.fine()
		return s.Truncate(u).Add(time.Duration(q) * u)
	case Day:
		return time.Unix((civilDay(s)+q)*86400, 0).UTC()
	case Week:
		return time.Unix((mondayOf(s)+7*q)*86400, 0).UTC()
	case Month:
		return time.Date(s.Year(), s.Month()+time.Month(q), 1, 0, 0, 0, 0, time.UTC)
	default: // Year
		return time.Date(s.Year()+int(q), 1, 1, 0, 0, 0, 0, time.UTC)
	}
}

// civilDay returns the day number of a wall time (days since 1970-01-01).
func civilDay(w time.Time) int64 {
	u := w.Unix()
	d := u / 86400
	if u%86400 < 0 {
		d--
	}
	return d
}

// mondayOf returns the day number of the Monday that begins w's week.
func mondayOf(w time.Time) int64 {
	return civilDay(w) - int64((w.Weekday()+6)%7)
}

// zoneInfo describes a location for converting wall clock readings to
// instants.
type zoneInfo struct {
	loc     *time.Location
	fixed   bool  // never changes offset
	offset  int64 // seconds east of UTC, when fixed
	maxJump time.Duration
	minJump time.Duration // the smallest change of offset, when not fixed
}

var zoneInfos sync.Map // *time.Location -> *zoneInfo

// zoneOf returns the zoneInfo of loc, computing it once: whether it has any
// offset change between 1900 and 2200, and the largest such change.
func zoneOf(loc *time.Location) *zoneInfo {
	if z, ok := zoneInfos.Load(loc); ok {
		return z.(*zoneInfo)
	}
	z := &zoneInfo{loc: loc, fixed: true}
	t := time.Date(1900, 1, 1, 0, 0, 0, 0, loc)
	limit := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	_, off := t.Zone()
	z.offset = int64(off)
	for i := 0; t.Before(limit) && i < 10000; i++ {
		_, end := t.ZoneBounds()
		if end.IsZero() {
			break
		}
		if !end.After(t) {
			// Beyond its table a zone's periods are computed per year, and
			// ZoneBounds can report the year's end as a period's end even
			// at that instant; step over it.
			end = t.Add(24 * time.Hour)
		}
		_, o1 := t.Zone()
		_, o2 := end.Zone()
		if o1 != o2 {
			z.fixed = false
			jump := time.Duration(abs(o2-o1)) * time.Second
			z.maxJump = max(z.maxJump, jump)
			if z.minJump == 0 || jump < z.minJump {
				z.minJump = jump
			}
		}
		t = end
	}
	if !z.fixed {
		z.offset = 0
	}
	zoneInfos.Store(loc, z)
	return z
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// wall returns the wall clock reading of t in the zone, written as UTC.
func (z *zoneInfo) wall(t time.Time) time.Time {
	if z.fixed {
		return t.Add(time.Duration(z.offset) * time.Second).UTC()
	}
	_, off := t.In(z.loc).Zone()
	return t.Add(time.Duration(off) * time.Second).UTC()
}

// converter maps wall clock readings to instants, remembering the zone
// period of the last answer so that most lookups are one subtraction.
type converter struct {
	z      *zoneInfo
	off    int64
	lo, hi int64 // instants (Unix seconds) for which off alone decides
	ok     bool
}

// instant returns the instant at which the zone's clocks read w (written as
// UTC). A reading that does not exist (in a spring-forward gap) is moved
// forward by the gap, as if the clocks had not changed yet (02:30 becomes
// 03:30); a reading that exists twice (fall-back) is the first of the two.
func (c *converter) instant(w time.Time) time.Time {
	return time.Unix(c.instantSec(w.Unix()), int64(w.Nanosecond()))
}

// instants returns the instants at which reading u (the zone's wall clock
// in whole seconds written as UTC, as Unix seconds) runs, earliest first:
// for a rule that fixes its hours one, as [converter.instant] says; for one
// whose hours are free, every instant at which the clocks read u: none in
// a spring-forward gap (n == 0), both when u occurs twice (n == 2).
func (r *Rule) instants(c *converter, u int64) (first, second int64, n int) {
	if x, ok := c.hit(u); ok {
		return x, 0, 1
	}
	return r.instantsNear(c, u)
}

// hit returns the one instant at which the clocks read u when the zone
// period the converter remembers decides it. It is small enough to inline:
// the loops that convert many readings call it and, when it misses,
// [Rule.instantsNear].
func (c *converter) hit(u int64) (int64, bool) {
	x := u - c.off
	return x, c.ok && x >= c.lo && x < c.hi
}

// instantsNear is instants for a reading near a change of the zone's
// offset, or in a zone period the converter has not met yet.
func (r *Rule) instantsNear(c *converter, u int64) (first, second int64, n int) {
	if c.z.fixed {
		c.remember(0)
		return u - c.z.offset, 0, 1
	}
	if !r.free {
		first = c.z.instant(u)
		c.remember(first)
		return first, 0, 1
	}
	first, second, n = c.z.instants(u)
	if n > 0 {
		c.remember(first)
	}
	return first, second, n
}

// instantSec is instant on whole seconds: u is the reading written as UTC
// (Unix seconds), the result Unix seconds.
func (c *converter) instantSec(u int64) int64 {
	if x, ok := c.known(u); ok {
		return x
	}
	x := c.z.instant(u)
	c.remember(x)
	return x
}

// known returns the one instant at which the clocks read u when the zone
// has a fixed offset or the remembered zone period decides it.
func (c *converter) known(u int64) (int64, bool) {
	if c.z.fixed {
		return u - c.z.offset, true
	}
	if c.ok {
		if x := u - c.off; x >= c.lo && x < c.hi {
			return x, true
		}
	}
	return 0, false
}

// remember keeps the zone period that holds instant x.
func (c *converter) remember(x int64) {
	c.meet(c.z.period(x))
}

// noEnd stands for no bound in Unix seconds, far enough from the ends of
// int64 that an offset can be added.
const noEnd = 1 << 62

// zonePeriod is a span of instants [start, end) (Unix seconds) over which
// a zone keeps one offset.
type zonePeriod struct {
	start, end int64 // -noEnd, noEnd: unbounded
	off        int64 // seconds east of UTC
}

// period returns the zone period that holds instant x.
func (z *zoneInfo) period(x int64) zonePeriod {
	if z.fixed {
		return zonePeriod{start: -noEnd, end: noEnd, off: z.offset}
	}
	t := time.Unix(x, 0).In(z.loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	p := zonePeriod{start: -noEnd, end: noEnd, off: int64(off)}
	if !s.IsZero() {
		p.start = min(s.Unix(), x)
	}
	if !e.IsZero() {
		// Beyond its table a zone's periods are computed per year, and
		// ZoneBounds can report the year's end as a period's end even at
		// that instant (see zoneOf): the period then ends after x.
		p.end = max(e.Unix(), x+1)
	}
	return p
}

// meet remembers the zone period p, shrunk at each end by the zone's
// largest jump: a reading that off maps into [lo, hi) runs at that instant
// alone, whether the rule's hours are free or not.
func (c *converter) meet(p zonePeriod) {
	jump := int64(c.z.maxJump / time.Second)
	c.off, c.ok = p.off, true
	c.lo, c.hi = -noEnd, noEnd
	if p.start > -noEnd {
		c.lo = p.start + jump
	}
	if p.end < noEnd {
		c.hi = p.end - jump
	}
}

// offsetAt returns the zone's offset in seconds at Unix time u.
func (z *zoneInfo) offsetAt(u int64) int64 {
	_, off := time.Unix(u, 0).In(z.loc).Zone()
	return int64(off)
}

// instant is converter.instant without the memory, on Unix seconds: u is the
// wall reading's seconds as if it were UTC.
func (z *zoneInfo) instant(u int64) int64 {
	const span = 2 * 86400
	o1, o2 := z.offsetAt(u-span), z.offsetAt(u+span)
	c1, c2 := u-o1, u-o2
	v1, v2 := z.offsetAt(c1) == o1, z.offsetAt(c2) == o2
	switch {
	case v1 && v2:
		return min(c1, c2)
	case v1:
		return c1
	case v2:
		return c2
	}
	// Neither the earlier nor the later offset gives this reading: either a
	// gap (take the offset before it, which moves the reading forward), or
	// more than one change within the span.
	if o3 := z.offsetAt(c1); z.offsetAt(u-o3) == o3 {
		return u - o3
	}
	return c1
}

// instants returns every instant at which the zone's clocks read u (Unix
// seconds of the reading written as UTC), earliest first: n is 0 for a
// reading in a gap, 2 for one that occurs twice.
func (z *zoneInfo) instants(u int64) (first, second int64, n int) {
	if z.fixed {
		return u - z.offset, 0, 1
	}
	const span = 2 * 86400
	o1, o2 := z.offsetAt(u-span), z.offsetAt(u+span)
	offs := [4]int64{o1, o2, z.offsetAt(u - o1), z.offsetAt(u - o2)}
	var found [4]int64
	k := 0
	for _, o := range offs {
		if x := u - o; z.offsetAt(x) == o && !slices.Contains(found[:k], x) {
			found[k] = x
			k++
		}
	}
	slices.Sort(found[:k])
	switch k {
	case 0:
		return 0, 0, 0
	case 1:
		return found[0], 0, 1
	}
	return found[0], found[k-1], 2
}
