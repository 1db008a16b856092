package recurrence

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CronError is a problem with a cron spec. It prints as
// "cron: field 2 (hours): 24 is out of range 0-23".
type CronError struct {
	// Field is the position of the field at fault, counting from 1 as
	// the spec is written (the seconds field, when there is one, is
	// field 1); 0 when the problem is not in one field.
	Field int
	// Name is the field's name ("minutes", "hours", "day of month",
	// "month", "day of week", "seconds"), or, when Field is 0, what the
	// problem concerns ("CRON_TZ", "@every"); it may be empty.
	Name string
	// Reason says what is wrong.
	Reason string
}

func (e *CronError) Error() string { return "cron: " + e.detail() }

// detail is the message without the "cron: " prefix.
func (e *CronError) detail() string {
	switch {
	case e.Field > 0:
		return fmt.Sprintf("field %d (%s): %s", e.Field, e.Name, e.Reason)
	case e.Name != "":
		return e.Name + ": " + e.Reason
	}
	return e.Reason
}

// cronField describes one field of a cron spec.
type cronField struct {
	name     string
	min, max int      // the values "*" stands for
	top      int      // the largest value accepted (7 for Sunday in day of week)
	names    []string // lower-case names of min, min+1, ...
	what     string   // how a value is described in errors
	hmax     int      // the largest value a bare H takes (28 in day of month, which every month has; else max)
}

var (
	secondsField = &cronField{name: "seconds", min: 0, max: 59, top: 59, what: "a number"}
	minutesField = &cronField{name: "minutes", min: 0, max: 59, top: 59, what: "a number"}
	hoursField   = &cronField{name: "hours", min: 0, max: 23, top: 23, what: "a number"}
	domField     = &cronField{name: "day of month", min: 1, max: 31, top: 31, what: "a number", hmax: 28}
	monthField   = &cronField{name: "month", min: 1, max: 12, top: 12, what: "a month (1-12 or JAN-DEC)",
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	dowField = &cronField{name: "day of week", min: 0, max: 6, top: 7, what: "a day of the week (0-7 or SUN-SAT)",
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

// cronSet is the parsed value of one field: bit v set means value v.
type cronSet struct {
	bits uint64
	// star is set when the field holds "*" or "?" without a step (or with
	// step 1): day of month and day of week are then not restricted, which
	// decides whether the two are OR-ed or AND-ed, as in robfig/cron.
	star bool
	// stepped is set when an item has a step other than 1 ("*/2", "1-9/4").
	stepped bool
	// hashed is set when an item is an H form ("H", "H(0-29)", "H/15"),
	// whose values the job's identity decides.
	hashed bool
	last   []int               // day of month: days counted from the end (L is -1)
	nth    []MonthlyOccurrence // day of week: nth weekdays (5#2, 5L)
}

// bitRange is the set of the values lo to hi.
func bitRange(lo, hi int) uint64 { return (1<<(hi-lo+1) - 1) << lo }

// parse reads one field's text; seed is the job's identity (see jobSeed),
// from which H forms take their values. It returns the reason when the
// text is not a valid field.
func (f *cronField) parse(text string, seed uint64) (cronSet, string) {
	var s cronSet
	for item := range strings.SplitSeq(text, ",") {
		if item == "" {
			return s, fmt.Sprintf("%q has an empty list element", text)
		}
		if reason := f.parseItem(&s, item, seed); reason != "" {
			return s, reason
		}
	}
	if f == dowField && s.bits&(1<<7) != 0 {
		s.bits = s.bits&^(1<<7) | 1 // 7 is Sunday
	}
	return s, ""
}

func (f *cronField) parseItem(s *cronSet, item string, seed uint64) string {
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, ok := atoi(stepText)
		switch {
		case strings.Contains(stepText, "/"):
			return fmt.Sprintf("%q has more than one /", item)
		case !ok:
			return fmt.Sprintf("the step %q in %q is not a number", stepText, item)
		case n < 1:
			return fmt.Sprintf("the step in %q must be at least 1", item)
		}
		step = n
		s.stepped = s.stepped || n > 1
	}
	if done, reason := f.parseExtension(s, rng, item, hasStep); done {
		return reason
	}
	var lo, hi int
	if rng != "" && (rng[0] == 'H' || rng[0] == 'h') {
		return f.parseHash(s, rng, item, step, seed)
	}
	if rng == "*" || rng == "?" {
		lo, hi = f.min, f.max
		if step == 1 {
			s.star = true
		}
	} else {
		a, b, isRange := strings.Cut(rng, "-")
		var reason string
		if lo, reason = f.value(a, item); reason != "" {
			return reason
		}
		switch {
		case isRange:
			if hi, reason = f.value(b, item); reason != "" {
				return reason
			}
		case hasStep:
			hi = max(f.max, lo) // "N/step" means "N-max/step"
		default:
			hi = lo
		}
		if lo > hi {
			return fmt.Sprintf("%s runs backwards (its start is after its end); list the parts instead, such as %d-%d,%d-%d", rng, lo, f.max, f.min, hi)
		}
	}
	for v := lo; v <= hi; v += step {
		s.bits |= 1 << v
	}
	return ""
}

// parseHash reads an H form, Jenkins' hash syntax: "H" is one value of
// the field (day of month: 1 to 28), "H(lo-hi)" one value of that range,
// and with a step ("H/15", "H(0-29)/10") every step-th value of the range
// from an offset below the step. The value (or the offset) is the field's
// hash of the job's identity (see fieldHash) modulo the number of values
// (or the step, or the range's length when that is shorter).
func (f *cronField) parseHash(s *cronSet, rng, item string, step int, seed uint64) string {
	lo, hi := f.min, f.hmax
	if hi == 0 {
		hi = f.max
	}
	if step > 1 {
		hi = f.max // a step runs through the whole field, as "*/step" does
	}
	if rng != "H" && rng != "h" {
		inner, open := strings.CutPrefix(rng[1:], "(")
		inner, closed := strings.CutSuffix(inner, ")")
		if !open || !closed {
			return fmt.Sprintf("%q is not H, H(lo-hi), H/step or H(lo-hi)/step", item)
		}
		a, b, isRange := strings.Cut(inner, "-")
		if !isRange {
			return fmt.Sprintf("%q: H takes a range in parentheses, such as H(0-29)", item)
		}
		var reason string
		if lo, reason = f.value(a, item); reason != "" {
			return reason
		}
		if hi, reason = f.value(b, item); reason != "" {
			return reason
		}
		if lo > hi {
			return fmt.Sprintf("%s runs backwards (its start is after its end)", rng)
		}
	}
	n := hi - lo + 1
	if step > 1 {
		n = min(step, n)
	}
	first := lo + int(fieldHash(seed, f.name)%uint64(n))
	if step == 1 {
		step = hi + 1 // one value
	}
	for v := first; v <= hi; v += step {
		s.bits |= 1 << v
	}
	s.hashed = true
	return ""
}

// value reads one number or name of the field.
func (f *cronField) value(text, item string) (int, string) {
	if n, ok := atoi(text); ok {
		if n < f.min || n > f.top {
			return 0, fmt.Sprintf("%d is out of range %d-%d", n, f.min, f.top)
		}
		return n, ""
	}
	if text == "" {
		return 0, fmt.Sprintf("%q: a range needs a start and an end", item)
	}
	if strings.Trim(text, "0123456789") == "" {
		return 0, fmt.Sprintf("%s is out of range %d-%d", text, f.min, f.top)
	}
	for i, name := range f.names {
		if strings.EqualFold(text, name) {
			return f.min + i, ""
		}
	}
	if text == item {
		return 0, fmt.Sprintf("%q is not %s", text, f.what)
	}
	return 0, fmt.Sprintf("%q in %q is not %s", text, item, f.what)
}

// parseExtension handles the L, W and # forms of the day fields. done
// reports whether rng was one of them (then reason says what is wrong with
// it, if anything).
func (f *cronField) parseExtension(s *cronSet, rng, item string, hasStep bool) (done bool, reason string) {
	up := strings.ToUpper(rng)
	switch f {
	case domField:
		switch {
		case up == "LW":
			return true, "LW (the last weekday of the month) cannot be expressed exactly as a recurrence"
		case strings.HasSuffix(up, "W") && len(up) > 1:
			return true, fmt.Sprintf("%s (the weekday nearest a day) cannot be expressed exactly as a recurrence", rng)
		case up == "L" || strings.HasPrefix(up, "L-"):
			if hasStep {
				return true, fmt.Sprintf("%q: a step does not apply to L", item)
			}
			back := 0
			if up != "L" {
				n, ok := atoi(up[2:])
				if !ok || n > 30 {
					return true, fmt.Sprintf("%s is not L-0 to L-30 (days before the last)", rng)
				}
				back = n
			}
			s.last = append(s.last, -1-back)
			return true, ""
		}
	case dowField:
		day, n, isNth := strings.Cut(up, "#")
		isLast := !isNth && len(up) > 1 && strings.HasSuffix(up, "L")
		switch {
		case up == "L":
			return true, "L alone has no single meaning in this field; write 6 or SAT for Saturday, or 5L for the last Friday of the month"
		case isNth, isLast:
			mark := "L"
			if isNth {
				mark = "#"
			}
			if hasStep {
				return true, fmt.Sprintf("%q: a step does not apply to %s", item, mark)
			}
			occ := -1
			if isNth {
				v, ok := atoi(n)
				if !ok || v < 1 || v > 5 {
					return true, fmt.Sprintf("%s: the occurrence after # must be 1 to 5", rng)
				}
				occ = v
			} else {
				day = up[:len(up)-1]
			}
			if strings.Contains(day, "-") {
				return true, fmt.Sprintf("%s: %s takes one day of the week, not a range (5#2 is the second Friday, 5L the last)", rng, mark)
			}
			d, reason := f.value(day, rng)
			if reason != "" {
				return true, reason
			}
			s.nth = append(s.nth, MonthlyOccurrence{Day: weekdays[d%7], Occurrence: occ})
			return true, ""
		}
	}
	return false, ""
}

// atoi parses a short string of decimal digits.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// cronSpec is a parsed cron spec.
type cronSpec struct {
	text  string // the spec with its whitespace collapsed
	zone  string // from a CRON_TZ= or TZ= prefix
	every time.Duration
	// The fields, and the position each has in the spec as written; sec
	// is 0 alone unless the spec has a seconds field.
	sec, min, hour, dom, month, dow cronSet
	domPos, monthPos                int
}

// cronDescriptors holds the descriptors, parsed from the five fields each
// stands for.
var cronDescriptors = func() map[string]*cronSpec {
	m := make(map[string]*cronSpec)
	for name, spec := range map[string]string{
		"@yearly":   "0 0 1 1 *",
		"@annually": "0 0 1 1 *",
		"@monthly":  "0 0 1 * *",
		"@weekly":   "0 0 * * 0",
		"@daily":    "0 0 * * *",
		"@midnight": "0 0 * * *",
		"@hourly":   "0 * * * *",
	} {
		c := new(cronSpec)
		if err := c.parseFields(strings.Fields(spec), 1, 0); err != nil {
			panic("recurrence: bad descriptor spec: " + err.Error())
		}
		m[name] = c
	}
	return m
}()

const fieldsReason = "expected 5 fields (minute, hour, day of month, month, day of week), or 6 with seconds first"

// ParseCron parses a cron spec and returns the recurrence that runs at
// exactly the spec's instants, whatever the start it is compiled with.
//
// The spec has five fields (minute, hour, day of month, month, day of
// week), or six with a seconds field first, as robfig/cron's WithSeconds
// parser takes. A field is "*", "?" (the same as "*"), a number, a name (JAN to
// DEC, SUN to SAT, in any case), a range ("9-17", "MON-FRI"), any of those
// with a step ("*/15", "9-17/2", "5/10", which means 5-59/10), or a comma
// list of them. Day of week runs from 0 (Sunday) to 6; 7 is Sunday too. The
// descriptors @yearly (@annually), @monthly, @weekly, @daily (@midnight)
// and @hourly stand for their usual specs, and "@every DURATION" for an
// interval in elapsed time ("@every 10s", "@every 15m", "@every 2h"). A "CRON_TZ=Zone " or "TZ=Zone " prefix sets
// the recurrence's TimeZone; without one the spec is evaluated in whatever
// zone the recurrence names (UTC when none). Day of month may hold L (the
// last day) and L-n (n days before it); day of week may hold 5L (the last
// Friday) and 5#2 (the second Friday). See the package documentation for
// the recurrence each spec becomes and for how it differs from
// robfig/cron.
//
// Problems are reported as a [*CronError] naming the field. Specs that
// the recurrence model cannot express exactly are refused, never
// approximated: W (the nearest weekday), an @every that is not a whole
// number of seconds, and a day of the month that occurs in none of the
// spec's months (30 in February).
//
// An H form (Jenkins' hash syntax: "H", "H(0-29)", "H/15", "H(0-29)/10"
// in any field) stands for values that each job's collection and name
// decide, so that jobs given the same spec run at different times: see
// the package documentation, "Cron specs". ParseCron knows no job, so the
// schedule members that H fields decide (a minute field "H" decides
// minutes) are left out of its result; [CompileJob] and
// [Recurrence.ExpandCronJob] fill them in for a job.
//
// The result has Cron set to the spec with its whitespace collapsed;
// [Recurrence.Validate] accepts it, and [Compile] runs it.
func ParseCron(spec string) (*Recurrence, error) {
	c, err := parseCron(spec, noJob)
	if err != nil {
		return nil, err
	}
	return c.recurrence(false), nil
}

// noJob is the identity of no particular job: empty collection and job
// names.
var noJob = jobSeed("", "")

// parseCron parses spec for the job whose identity is seed (see jobSeed):
// H forms take their values from it.
func parseCron(spec string, seed uint64) (*cronSpec, error) {
	fields := strings.Fields(spec)
	c := &cronSpec{text: collapse(spec, fields), sec: cronSet{bits: 1}}
	if len(fields) == 0 {
		return nil, &CronError{Reason: "the spec is empty; " + fieldsReason}
	}
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		name, ok := strings.CutPrefix(fields[0], prefix)
		if !ok {
			continue
		}
		what := strings.TrimSuffix(prefix, "=")
		switch {
		case name == "":
			return nil, &CronError{Name: what, Reason: "names no time zone"}
		case len(fields) == 1:
			return nil, &CronError{Name: what, Reason: "no schedule follows the time zone"}
		}
		if _, err := LoadTimeZone(name); err != nil {
			return nil, &CronError{Name: what, Reason: fmt.Sprintf("%q is not a known time zone (an IANA name such as Europe/Berlin)%s", name, zoneHint(err))}
		}
		c.zone = name
		fields = fields[1:]
		break
	}
	if strings.HasPrefix(fields[0], "@") {
		return c, c.parseDescriptor(fields)
	}
	seconds := len(fields) == 6
	if len(fields) != 5 && !seconds {
		return nil, &CronError{Reason: fmt.Sprintf("%s; found %d", fieldsReason, len(fields))}
	}
	if seconds {
		var reason string
		if c.sec, reason = secondsField.parse(fields[0], seed); reason != "" {
			return nil, &CronError{Field: 1, Name: secondsField.name, Reason: reason}
		}
		fields = fields[1:]
	}
	first := 1
	if seconds {
		first = 2
	}
	return c, c.parseFields(fields, first, seed)
}

// parseFields reads the five fields minute to day of week; first is the
// position of the minute field in the spec as written.
func (c *cronSpec) parseFields(fields []string, first int, seed uint64) error {
	c.domPos, c.monthPos = first+2, first+3
	for i, f := range []struct {
		def *cronField
		out *cronSet
	}{{minutesField, &c.min}, {hoursField, &c.hour}, {domField, &c.dom}, {monthField, &c.month}, {dowField, &c.dow}} {
		var reason string
		if *f.out, reason = f.def.parse(fields[i], seed); reason != "" {
			return &CronError{Field: first + i, Name: f.def.name, Reason: reason}
		}
	}
	return c.checkDays()
}

// collapse returns spec's fields joined by single spaces: spec itself when
// it is written that way already.
func collapse(spec string, fields []string) string {
	n := len(fields) - 1
	for _, f := range fields {
		n += len(f)
	}
	if n == len(spec) && !strings.ContainsAny(spec, "\t\n\v\f\r") {
		return spec
	}
	return strings.Join(fields, " ")
}

// parseDescriptor reads an @ descriptor into c.
func (c *cronSpec) parseDescriptor(fields []string) error {
	name := strings.ToLower(fields[0])
	if name == "@every" {
		if len(fields) != 2 {
			return &CronError{Name: "@every", Reason: "takes one duration, such as @every 15m"}
		}
		d, err := time.ParseDuration(fields[1])
		switch {
		case err != nil:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%q is not a duration such as 15m or 1h30m", fields[1])}
		case d < time.Second:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%s is shorter than a second, the finest step of a recurrence", d)}
		case d%time.Second != 0:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%s is not a whole number of seconds", d)}
		case d > time.Duration(MaxInterval(Second))*time.Second && d%time.Minute != 0:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%s is more than %d seconds and not a whole number of minutes", d, MaxInterval(Second))}
		case d > time.Duration(MaxInterval(Minute))*time.Minute && d%time.Hour != 0:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%s is more than %d minutes and not a whole number of hours", d, MaxInterval(Minute))}
		case d > time.Duration(MaxInterval(Hour))*time.Hour:
			return &CronError{Name: "@every", Reason: fmt.Sprintf("%s is more than %d hours, the longest interval of frequency Hour", d, MaxInterval(Hour))}
		}
		c.every = d
		return nil
	}
	if name == "@reboot" {
		return &CronError{Name: name, Reason: "has no time to run at; a job without a recurrence runs once, at its startTime"}
	}
	d, ok := cronDescriptors[name]
	if !ok {
		return &CronError{Name: fields[0], Reason: "is not a descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every DURATION)"}
	}
	if len(fields) != 1 {
		return &CronError{Name: fields[0], Reason: "takes no fields after it"}
	}
	c.min, c.hour, c.dom, c.month, c.dow = d.min, d.hour, d.dom, d.month, d.dow
	return nil
}

// checkDays refuses a day of the month that occurs in none of the spec's
// months, when the day of the week does not add days of its own.
func (c *cronSpec) checkDays() error {
	if c.dom.star || !c.dow.star {
		return nil
	}
	var months []string
	for m := 1; m <= 12; m++ {
		if c.month.bits&(1<<m) == 0 {
			continue
		}
		n := daysIn(m)
		if c.dom.bits&bitRange(1, n) != 0 || slices.ContainsFunc(c.dom.last, func(d int) bool { return -d <= n }) {
			return nil
		}
		months = append(months, time.Month(m).String())
	}
	return &CronError{Field: c.domPos, Name: domField.name, Reason: fmt.Sprintf("no day it names occurs in %s (field %d), so the spec never runs",
		orWords(months), c.monthPos)}
}

// daysIn returns the most days month m has (29 for February).
func daysIn(m int) int {
	return [...]int{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
}

func orWords(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ones lists the set bits of b from lo to hi.
func ones(b uint64, lo, hi int) []int {
	out := make([]int, 0, bits.OnesCount64(b&bitRange(lo, hi)))
	for v := lo; v <= hi; v++ {
		if b&(1<<v) != 0 {
			out = append(out, v)
		}
	}
	return out
}

// weekOrder is the order in which a recurrence lists days: Monday first.
var weekOrder = []int{1, 2, 3, 4, 5, 6, 0}

// recurrence returns the recurrence that runs at the spec's instants.
//
// The frequency is the shortest period the spec repeats in, so that every
// field of the schedule is given and none defaults from the start: Month
// when the spec names days of the month, months or nth weekdays; Week when
// it names days of the week; else Day, or Hour when it runs in every hour,
// or Minute when it runs every minute. A seconds field other than 0 gives
// the schedule's seconds. Interval is 1, so every period runs and the start
// only decides the first occurrence. "@every D" is Hour, Minute or Second
// with interval D in the largest of those units that divides D.
//
// With keepHashed false, the schedule members that H fields decide are
// left out.
func (c *cronSpec) recurrence(keepHashed bool) *Recurrence {
	r := &Recurrence{Cron: c.text, TimeZone: c.zone}
	if c.every > 0 {
		switch {
		case c.every%time.Hour == 0:
			r.Frequency, r.Interval = Hour, int32(c.every/time.Hour)
		case c.every%time.Minute == 0:
			r.Frequency, r.Interval = Minute, int32(c.every/time.Minute)
		default:
			r.Frequency, r.Interval = Second, int32(c.every/time.Second)
		}
		if r.Interval == 1 {
			r.Interval = 0
		}
		return r
	}
	s := &Schedule{Minutes: ones(c.min.bits, 0, 59)}
	if c.sec.bits != 1 {
		s.Seconds = ones(c.sec.bits, 0, 59)
	}
	r.Schedule = s
	allHours := c.hour.bits == bitRange(0, 23)
	allMonths := c.month.bits == bitRange(1, 12)

	// Which days: robfig/cron's rule. When day of month or day of week is
	// unrestricted ("*" or "?"), a day must match both; when both are
	// restricted, either.
	allDom := c.dom.bits == bitRange(1, 31)
	allDow := c.dow.bits == bitRange(0, 6)
	useDom, useDow := false, false
	switch {
	case c.dom.star && c.dow.star:
	case c.dom.star:
		useDow = !allDow
	case c.dow.star:
		useDom = !allDom
	default:
		useDom, useDow = !allDom && !allDow, !allDom && !allDow
	}

	switch {
	case !allMonths || useDom || useDow && len(c.dow.nth) > 0:
		r.Frequency = Month
		if !allMonths {
			s.Months = ones(c.month.bits, 1, 12)
		}
		if useDom {
			s.MonthDays = ones(c.dom.bits, 1, 31)
			last := slices.Clone(c.dom.last)
			slices.Sort(last)
			s.MonthDays = append(s.MonthDays, slices.Compact(last)...)
		}
		if useDow {
			s.MonthlyOccurrences = c.monthlyOccurrences()
		}
		if !useDom && !useDow {
			s.MonthDays = ones(bitRange(1, 31), 1, 31)
		}
	case useDow:
		r.Frequency = Week
		s.WeekDays = make([]Weekday, 0, bits.OnesCount64(c.dow.bits))
		for _, d := range weekOrder {
			if c.dow.bits&(1<<d) != 0 {
				s.WeekDays = append(s.WeekDays, weekdays[d])
			}
		}
	case !allHours:
		r.Frequency = Day
	case c.min.bits == bitRange(0, 59):
		r.Frequency = Minute
	default:
		r.Frequency = Hour
	}
	if !allHours {
		s.Hours = ones(c.hour.bits, 0, 23)
	}
	if !keepHashed {
		c.dropHashed(s)
	}
	return r
}

// dropHashed removes from s the members that c's H fields decide.
func (c *cronSpec) dropHashed(s *Schedule) {
	if c.sec.hashed {
		s.Seconds = nil
	}
	if c.min.hashed {
		s.Minutes = nil
	}
	if c.hour.hashed {
		s.Hours = nil
	}
	if c.dom.hashed {
		s.MonthDays = nil
	}
	if c.month.hashed {
		s.Months = nil
	}
	if c.dow.hashed {
		s.WeekDays, s.MonthlyOccurrences = nil, nil
	}
}

// hashed reports whether a field of c has an H form.
func (c *cronSpec) hashed() bool {
	return c.sec.hashed || c.min.hashed || c.hour.hashed || c.dom.hashed || c.month.hashed || c.dow.hashed
}

// monthlyOccurrences lists the day of week field as monthly occurrences:
// every such weekday, then nth weekdays not already covered, Monday first.
func (c *cronSpec) monthlyOccurrences() []MonthlyOccurrence {
	out := make([]MonthlyOccurrence, 0, bits.OnesCount64(c.dow.bits)+len(c.dow.nth))
	for _, d := range weekOrder {
		if c.dow.bits&(1<<d) != 0 {
			out = append(out, MonthlyOccurrence{Day: weekdays[d]})
		}
	}
	if len(c.dow.nth) == 0 {
		return out
	}
	nth := slices.Clone(c.dow.nth)
	order := func(o MonthlyOccurrence) int {
		wd, _ := o.Day.Time()
		occ := o.Occurrence
		if occ < 0 {
			occ += 10 // last after fifth
		}
		return int(wd+6)%7*16 + occ
	}
	slices.SortFunc(nth, func(a, b MonthlyOccurrence) int { return order(a) - order(b) })
	for _, o := range slices.Compact(nth) {
		wd, _ := o.Day.Time()
		if c.dow.bits&(1<<wd) == 0 {
			out = append(out, o)
		}
	}
	return out
}

// ExpandCron returns the recurrence r stands for: r itself when it has no
// Cron spec; otherwise a copy in which Frequency, Interval, Schedule and,
// when the spec has a CRON_TZ= prefix, TimeZone are those of
// [ParseCron]'s result. Fields r gives must agree with the spec: a
// Frequency, Interval or schedule member that differs from the spec's (as
// a set: the order of a list does not matter) is reported as a
// [*FieldError] at its path, and so is a TimeZone naming another zone
// than the spec's prefix. Without a prefix the spec runs in r's TimeZone.
// Count, EndTime and Window are r's: a spec has none. A spec that does not parse is
// a *FieldError at "cron" whose Reason is the [*CronError] without its
// "cron: " prefix. On error ExpandCron returns nil and every problem
// joined with [errors.Join].
//
// A schedule member that an H form of the spec decides is not compared:
// ExpandCron, which knows no job, leaves it out of the result, and
// [Recurrence.ExpandCronJob] gives the job's own values, whatever r
// gives.
func (r *Recurrence) ExpandCron() (*Recurrence, error) { return r.expandCron(noJob, false) }

// ExpandCronJob is [Recurrence.ExpandCron] for the job named job in
// collection collection: the members that H forms of the spec decide are
// filled in with the job's values (see [ParseCron]).
func (r *Recurrence) ExpandCronJob(collection, job string) (*Recurrence, error) {
	return r.expandCron(jobSeed(collection, job), true)
}

// expandCron expands r's spec for the job whose identity is seed; with
// keepHashed false, without the members that H forms decide.
func (r *Recurrence) expandCron(seed uint64, keepHashed bool) (*Recurrence, error) {
	if r == nil || r.Cron == "" {
		return r, nil
	}
	spec, err := parseCron(r.Cron, seed)
	if err != nil {
		var ce *CronError
		errors.As(err, &ce)
		return nil, &FieldError{Path: "cron", Reason: ce.detail()}
	}
	c := spec.recurrence(keepHashed)
	out := *c
	out.Count, out.EndTime, out.Extensions = r.Count, r.EndTime, r.Clone().Extensions
	var errs []error
	differs := func(path, value, want string) {
		errs = append(errs, &FieldError{Path: path, Value: value, Reason: "differs from the cron spec, which gives " + want})
	}
	if r.Frequency != "" && r.Frequency != c.Frequency {
		differs("frequency", jsonText(string(r.Frequency)), string(c.Frequency))
	}
	if r.Interval != 0 {
		if r.Interval != max(c.Interval, 1) {
			differs("interval", strconv.Itoa(int(r.Interval)), strconv.Itoa(int(max(c.Interval, 1))))
		}
		out.Interval = r.Interval
	}
	switch {
	case r.TimeZone == "":
	case c.TimeZone == "":
		out.TimeZone = r.TimeZone
	default:
		given, err1 := LoadTimeZone(r.TimeZone)
		spec, err2 := LoadTimeZone(c.TimeZone)
		if err1 == nil && err2 == nil && given.String() != spec.String() {
			differs("timeZone", jsonText(r.TimeZone), jsonText(c.TimeZone))
		}
		out.TimeZone = r.TimeZone
	}
	if g := r.Schedule; g != nil {
		w := c.Schedule
		if w == nil {
			w = &Schedule{}
		}
		sameInts := func(name string, given, want []int, hashed bool) {
			if len(given) > 0 && !hashed && !slices.Equal(sortedSet(given), sortedSet(want)) {
				differs("schedule."+name, listText(given), listText(want))
			}
		}
		sameInts("seconds", g.Seconds, w.Seconds, spec.sec.hashed)
		sameInts("minutes", g.Minutes, w.Minutes, spec.min.hashed)
		sameInts("hours", g.Hours, w.Hours, spec.hour.hashed)
		sameInts("monthDays", g.MonthDays, w.MonthDays, spec.dom.hashed)
		sameInts("months", g.Months, w.Months, spec.month.hashed)
		if len(g.WeekDays) > 0 && !spec.dow.hashed && !sameSet(g.WeekDays, w.WeekDays) {
			differs("schedule.weekDays", listText(g.WeekDays), listText(w.WeekDays))
		}
		if len(g.MonthlyOccurrences) > 0 && !spec.dow.hashed && !sameSet(g.MonthlyOccurrences, w.MonthlyOccurrences) {
			differs("schedule.monthlyOccurrences", listText(g.MonthlyOccurrences), listText(w.MonthlyOccurrences))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &out, nil
}

func sortedSet(v []int) []int {
	v = slices.Clone(v)
	slices.Sort(v)
	return slices.Compact(v)
}

// sameSet reports whether a and b hold the same values, in any order.
func sameSet[T comparable](a, b []T) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

func listText[T any](v []T) string {
	if len(v) == 0 {
		return "none"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
