package recurrence

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// calendar holds the readings of a Month or Year rule month by month.
// Within a month the interval selects, they depend only on the month of the
// year, its length and the weekday it begins on, so each such shape of
// month is expanded by rrule-go once, when first met.
type calendar struct {
	rule    *Rule
	months  int64  // the start's month, counted from year 0
	allowed uint16 // bit m-1 set: month m may hold readings
	shapes  [12][2][7]atomic.Pointer[[]int32]
}

// buildCalendar returns the template of a Month or Year rule.
func (r *Rule) buildCalendar() *template {
	for _, o := range r.opts {
		if len(o.Byyearday) > 0 || len(o.Byweekno) > 0 || len(o.Bysetpos) > 0 || len(o.Byeaster) > 0 {
			return noTemplate
		}
	}
	y, m, _ := r.wallStart.Date()
	if y < 1 {
		return noTemplate // month numbers below are counted from year 0
	}
	cal := &calendar{rule: r, months: int64(y)*12 + int64(m) - 1}
	for _, o := range r.opts {
		if len(o.Bymonth) == 0 {
			cal.allowed = 1<<12 - 1
		}
		for _, m := range o.Bymonth {
			cal.allowed |= 1 << (m - 1)
		}
	}
	tp := &template{ok: true, start: r.wallStart.Unix(), until: math.MaxInt64, cal: cal}
	if r.hasEnd {
		tp.until = r.wallUntil.Unix()
	}
	return tp
}

// daysFromCivil returns the day number (days since 1970-01-01) of the
// given date of the proleptic Gregorian calendar, m in 1..12.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// monthDays returns the length of month m (1..12) of year y.
func monthDays(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// readings returns the offsets from the month's first reading of the
// rule's readings in month n (counted from year 0), which begins on day
// number day and has length days.
func (r *Rule) readings(cal *calendar, n, day, length int64) []int32 {
	m := n % 12 // 0..11
	if cal.allowed&(1<<m) == 0 {
		return nil
	}
	q := n - cal.months
	if r.freq == Year {
		q = n/12 - cal.months/12
	}
	if q < 0 || q%r.interval != 0 {
		return nil
	}
	leap := 0
	if length == 29 {
		leap = 1
	}
	p := &cal.shapes[m][leap][floorMod(day+4, 7)] // 1970-01-01 was a Thursday
	if offs := p.Load(); offs != nil {
		return *offs
	}
	// A selected period's first reading anchors the rule as well as the
	// start does.
	ms := day * 86400
	it := r.wallsOf(r.opts, time.Unix(ms, 0).UTC(), time.Unix(ms+length*86400-1, 0).UTC())
	offs := []int32{}
	for {
		w, ok := it()
		if !ok {
			break
		}
		offs = append(offs, int32(w.Unix()-ms))
	}
	p.Store(&offs)
	return offs
}

// floorMod returns a modulo b in [0, b) (b > 0).
func floorMod(a, b int64) int64 {
	return a - floorDiv(a, b)*b
}

// next returns the calendar's first reading at or after w, which is not
// before the start's, if the rule has one no later than until: it looks
// month by month, at most as many months as Compile searches for a first
// reading.
func (cal *calendar) next(w, until int64) (int64, bool) {
	y, m, _ := time.Unix(w, 0).UTC().Date()
	n := int64(y)*12 + int64(m) - 1
	day := daysFromCivil(int64(y), int64(m), 1)
	for range 12 * searchHorizon {
		ms := day * 86400
		if ms > until {
			break
		}
		length := monthDays(n/12, n%12+1)
		offs := cal.rule.readings(cal, n, day, length)
		i := 0
		if w > ms {
			i, _ = slices.BinarySearch(offs, int32(w-ms))
		}
		if i < len(offs) {
			v := ms + int64(offs[i])
			return v, v <= until
		}
		n, day = n+1, day+length
	}
	return 0, false
}
