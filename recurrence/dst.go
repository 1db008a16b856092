package recurrence

import (
	"slices"
	"time"
)

// Shifted reports whether the occurrence t runs at a wall clock time other
// than the one its schedule names because that time did not exist on its
// day: a time in a spring-forward gap runs shifted by the gap (02:30 runs
// at 03:30), and Shifted reports those occurrences. It is false for rules
// that step in elapsed time (Minute and Hour without a schedule), whose
// occurrences name no wall time, and it is meant for instants that Next
// returned (with a Window, the scheduled instant behind it decides).
func (r *Rule) Shifted(t time.Time) bool {
	if r.step > 0 || r.zone.fixed || len(r.opts) == 0 {
		return false
	}
	t = r.Scheduled(t)
	w := r.zone.wall(t)
	o := r.opts[0]
	if len(o.Byhour) > 0 && !slices.Contains(o.Byhour, w.Hour()) {
		return true
	}
	if len(o.Byminute) > 0 && !slices.Contains(o.Byminute, w.Minute()) {
		return true
	}
	return len(o.Bysecond) > 0 && !slices.Contains(o.Bysecond, w.Second())
}

// Repeated reports whether the occurrence t is the second pass of a wall
// clock time that occurs twice because clocks went back: a schedule that
// does not fix the hour (see the package documentation) runs such a time
// at both instants, and Repeated is true for the later one. It is false
// for every occurrence of a rule that fixes its hours (those run once, at
// the first instant) but one: a recurrence without a schedule that starts
// in the second pass runs first at its start, for which it is true. It is
// false for rules that step in elapsed time, and it is meant for instants
// that Next returned (with a Window, the scheduled instant behind it
// decides).
func (r *Rule) Repeated(t time.Time) bool {
	if r.step > 0 || r.zone.fixed {
		return false
	}
	t = r.Scheduled(t)
	if !r.free {
		return r.startRepeated && t.Equal(r.start)
	}
	_, second, n := r.zone.instants(r.zone.wall(t).Unix())
	return n == 2 && second == t.Unix()
}

// span is a range of times of day [from, to) in minutes since midnight.
type span struct{ from, to int }

// dstChanges returns the times of day that a zone's clock changes in year
// skip (gaps: clocks go forward) and repeat (overlaps: clocks go back).
func dstChanges(loc *time.Location, year int) (gaps, overlaps []span) {
	t := time.Date(year, 1, 1, 0, 0, 0, 0, loc)
	end := time.Date(year+1, 1, 1, 0, 0, 0, 0, loc)
	for range 400 { // a zone changes its offset a few times a year at most
		_, next := t.ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			break
		}
		if !next.After(t) {
			// Beyond its table a zone's periods are computed per year;
			// step over such a boundary (see zoneOf).
			t = t.Add(24 * time.Hour)
			continue
		}
		_, before := next.Add(-time.Second).Zone()
		_, after := next.Zone()
		delta := (after - before) / 60
		switch {
		case delta > 0:
			from := wallMinutes(next.In(time.FixedZone("", before)))
			gaps = append(gaps, span{from, from + delta})
		case delta < 0:
			from := wallMinutes(next.In(loc))
			overlaps = append(overlaps, span{from, from - delta})
		}
		t = next
	}
	return gaps, overlaps
}

func wallMinutes(t time.Time) int { return t.Hour()*60 + t.Minute() }
