package recurrence

import (
	"math"
	"slices"
	"time"
)

// maxTemplatePeriod and maxTemplateSize bound the one period a template
// expands: the longest is a Minute rule whose interval shares no factor with
// a day's 1440 minutes (997 days), the largest a Week rule scheduled every
// minute of every day (10080 readings).
const (
	maxTemplatePeriod = 1100 * 86400 // seconds
	maxTemplateSize   = 1 << 15
)

// template is the wall clock pattern of a rule, expanded once. Without cal,
// the pattern repeats identically every period: its readings are
// origin + k*period + offs[i] for every k >= 0 and i, at or after the
// start's reading. With cal (Month and Year rules) it is kept month by
// month. Readings are whole seconds of the zone's wall clock written as UTC
// (Unix seconds).
type template struct {
	ok     bool      // false: the rule has none; Next expands it
	origin int64     // first reading of the period holding the start
	period int64     // seconds
	offs   []int32   // readings within a period, from its first, increasing
	start  int64     // the start's reading: none is earlier
	until  int64     // no reading is later (math.MaxInt64 without an end)
	cal    *calendar // Month and Year rules: readings month by month
}

// noTemplate marks a rule whose pattern is not a template's.
var noTemplate = &template{}

// buildTemplate returns the template of the rule, or noTemplate. Second,
// Minute and Hour rules with a schedule, and Day and Week rules, choose
// readings by the time of day and the weekday alone: periods of the frequency
// selected by the interval hold the same readings at the same offsets once
// the period is long enough to hold a whole number of days (of weeks when
// weekdays are selected), so one such period, expanded by rrule-go, answers
// for all of them. Month and Year rules get a calendar.
func (r *Rule) buildTemplate() *template {
	if r.freq == Month || r.freq == Year {
		return r.buildCalendar()
	}
	if r.step > 0 || len(r.opts) != 1 {
		return noTemplate
	}
	o := r.opts[0]
	if len(o.Bymonth) > 0 || len(o.Bymonthday) > 0 || len(o.Byyearday) > 0 || len(o.Byweekno) > 0 ||
		len(o.Bysetpos) > 0 || len(o.Byeaster) > 0 {
		return noTemplate
	}
	for _, d := range o.Byweekday {
		if d.N() != 0 {
			return noTemplate
		}
	}
	const day, week = 86400, 7 * 86400
	ws := r.wallStart.Unix()
	var unit, origin int64
	switch r.freq {
	case Second:
		unit = 1
	case Minute:
		unit = 60
	case Hour:
		unit = 3600
	case Day:
		unit = day
	case Week:
		unit = week
		origin = mondayOf(r.wallStart) * day
	default:
		return noTemplate
	}
	if r.freq != Week {
		origin = floorDiv(ws, unit) * unit
	}
	// The pattern of readings within a day repeats every hour when the
	// hour is not chosen, every minute when the minute is not either, and
	// every second when nothing is.
	var cycle int64
	switch {
	case len(o.Byweekday) > 0:
		cycle = week
	case len(o.Byhour) > 0:
		cycle = day
	case len(o.Byminute) > 0:
		cycle = 3600
	case len(o.Bysecond) > 0:
		cycle = 60
	default:
		cycle = 1
	}
	step := r.interval * unit
	period := step / gcd(step, cycle) * cycle
	if period > maxTemplatePeriod {
		return noTemplate
	}
	tp := &template{ok: true, origin: origin, period: period, start: ws, until: math.MaxInt64}
	if r.hasEnd {
		tp.until = r.wallUntil.Unix()
	}
	next := r.wallsOf(r.opts, time.Unix(origin, 0).UTC(), time.Unix(origin+period-1, 0).UTC())
	for {
		w, ok := next()
		if !ok {
			break
		}
		off := w.Unix() - origin
		if off < 0 || off >= period || len(tp.offs) == maxTemplateSize {
			return noTemplate
		}
		tp.offs = append(tp.offs, int32(off))
	}
	if len(tp.offs) == 0 || !slices.IsSorted(tp.offs) {
		return noTemplate
	}
	return tp
}

// nextTemplate is Next for a rule with a template: it walks the zone's
// periods from the one holding after, and in each asks the template for
// the first reading whose instant lies in it, so its cost does not depend
// on how many readings lie near a change of offset. Month and Year rules
// take their readings from the template's calendar, month by month.
func (r *Rule) nextTemplate(tp *template, after time.Time) time.Time {
	a := after
	if a.Before(r.start) {
		if r.startRepeated {
			return r.start
		}
		a = r.start.Add(-1)
	}
	// x: the first whole second whose occurrence (x plus the start's
	// sub-second part) is after a.
	x := a.Unix()
	if !time.Unix(x, int64(r.nanos)).After(a) {
		x++
	}
	c := converter{z: r.zone}
	if p := r.conv.Load(); p != nil {
		c = *p
	}
	c0 := c
	jump := int64(r.zone.maxJump / time.Second)
	var best int64
	found := false
	for {
		if c.ok && x >= c.lo && x < c.hi {
			// x is in the remembered zone period, a jump away from its
			// ends: up to hi, each instant has one reading, the instant
			// plus off, and each reading there runs at that instant alone.
			w, ok := tp.next(x + c.off)
			if !ok {
				break
			}
			if w-c.off < c.hi {
				best, found = w-c.off, true
				break
			}
			x = c.hi
			continue
		}
		p := r.zone.period(x)
		c.meet(p)
		if best, found = r.firstIn(tp, p, x); found {
			break
		}
		if p.end >= noEnd || p.end+p.off-jump > tp.until {
			// No later period holds a reading of the template.
			break
		}
		x = p.end
	}
	if c != c0 {
		p := new(converter)
		*p = c
		r.conv.Store(p)
	}
	if !found {
		return time.Time{}
	}
	t := time.Unix(best, int64(r.nanos))
	if r.hasEnd && t.After(r.end) {
		return time.Time{}
	}
	return t.In(r.loc)
}

// firstIn returns the first instant from x (Unix seconds) to the end of the
// zone period p (which holds x) at which the rule runs a reading of the
// template. A rule whose hours are free runs every instant whose reading
// the template holds: none in a gap, both passes of a repeated reading. One
// that fixes its hours runs a repeated reading at its first pass only, in
// the period before p, and a reading in the gap at p's start as many
// seconds after the change as it lies into the gap (the offset before the
// change still applies to it).
func (r *Rule) firstIn(tp *template, p zonePeriod, x int64) (int64, bool) {
	from := x + p.off
	prev := p.off // the offset before p
	if !r.free && p.start > -noEnd {
		prev = r.zone.offsetAt(p.start - 1)
		from = max(from, p.start+prev) // skip second passes
	}
	best, found := int64(0), false
	if w, ok := tp.next(from); ok && w < p.end+p.off {
		best, found = w-p.off, true
	}
	if prev < p.off {
		// Readings in the gap: [start+prev, start+off).
		if w, ok := tp.next(x + prev); ok && w < p.start+p.off && (!found || w-prev < best) {
			best, found = w-prev, true
		}
	}
	return best, found
}

// next returns the template's first reading at or after w, if the rule
// has one.
func (tp *template) next(w int64) (int64, bool) {
	w = max(w, tp.start)
	if tp.cal != nil {
		return tp.cal.next(w, tp.until)
	}
	d := w - tp.origin
	k := d / tp.period
	i, _ := slices.BinarySearch(tp.offs, int32(d-k*tp.period))
	if i == len(tp.offs) {
		i = 0
		k++
	}
	v := tp.origin + k*tp.period + int64(tp.offs[i])
	return v, v <= tp.until
}

// floorDiv returns a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
