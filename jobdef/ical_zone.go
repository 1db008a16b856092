package jobdef

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/jobclock/scheduler/recurrence"
)

// icalZones are the time zones of an iCalendar text's TZIDs.
type icalZones struct {
	defined map[string]*icalComponent // VTIMEZONEs by TZID
	read    map[string]icalZone
}

// icalZone is a VTIMEZONE evaluated, or the problem with it.
type icalZone struct {
	loc  *time.Location
	fail icalFail
}

// zone returns the zone of a TZID of line l: the zone
// [recurrence.LoadTimeZone] knows by that name (IANA or Windows), else
// the one the text's VTIMEZONE of that TZID describes; a TZID that is
// neither is a problem, never read as UTC.
func (r *icalReader) zone(l *icalLine, tzid string) (*time.Location, icalFail) {
	if z, ok := r.zones.read[tzid]; ok { // a name LoadTimeZone does not know
		return z.loc, z.fail
	}
	z, err := recurrence.LoadTimeZone(tzid)
	if err == nil {
		return z, nil
	}
	c := r.zones.defined[tzid]
	if c == nil {
		return nil, failAt(l.n, "%s TZID %q is not a known time zone (an IANA or Windows name), and the text has no VTIMEZONE with that TZID%s", l.name, tzid, didYouMeanZone(err))
	}
	loc, fail := r.vtimezone(c, tzid)
	if r.zones.read == nil {
		r.zones.read = map[string]icalZone{}
	}
	r.zones.read[tzid] = icalZone{loc, fail}
	return loc, fail
}

// icalOnset is an instant from which a VTIMEZONE's observance applies.
type icalOnset struct {
	at       int64 // Unix seconds
	from, to int   // offsets east of UTC, in seconds
	dst      bool
}

// vtimezone evaluates c, a VTIMEZONE: the onsets of its STANDARD and
// DAYLIGHT observances (DTSTART, its RRULEs up to 2100 and RDATEs, read
// as local times at TZOFFSETFROM; see fromEpoch) make the transitions of
// a [time.Location] named tzid.
func (r *icalReader) vtimezone(c *icalComponent, tzid string) (*time.Location, icalFail) {
	var onsets []icalOnset
	for _, o := range c.subs {
		if o.name != "STANDARD" && o.name != "DAYLIGHT" {
			continue
		}
		dt, from, to := o.prop("DTSTART"), o.prop("TZOFFSETFROM"), o.prop("TZOFFSETTO")
		for i, l := range []*icalLine{dt, from, to} {
			if l == nil {
				return nil, failAt(o.begin, "the %s of VTIMEZONE %q has no %s", o.name, tzid, []string{"DTSTART", "TZOFFSETFROM", "TZOFFSETTO"}[i])
			}
		}
		on := icalOnset{dst: o.name == "DAYLIGHT"}
		var fail icalFail
		if on.from, fail = utcOffset(from); fail != nil {
			return nil, fail
		}
		if on.to, fail = utcOffset(to); fail != nil {
			return nil, fail
		}
		at := time.FixedZone("", on.from)
		start, err := time.ParseInLocation("20060102T150405", dt.value, at)
		if err != nil {
			return nil, failAt(dt.n, "DTSTART %q of a time zone's %s is not a local date-time written YYYYMMDDThhmmss", dt.value, o.name)
		}
		if fail := r.made1(dt); fail != nil {
			return nil, fail
		}
		starts := []time.Time{start}
		for _, l := range o.props {
			switch l.name {
			case "RRULE":
				more, fail := r.expand(l, fromEpoch(l, start), maxICalOccurrences)
				if fail != nil {
					return nil, fail
				}
				starts = append(starts, more...)
			case "RDATE":
				for v := range strings.SplitSeq(l.value, ",") {
					t, err := time.ParseInLocation("20060102T150405", v, at)
					if fail := r.made1(l); fail != nil {
						return nil, fail
					}
					if err != nil {
						return nil, failAt(l.n, "RDATE %q of a time zone's %s is not a local date-time written YYYYMMDDThhmmss", v, o.name)
					}
					starts = append(starts, t)
				}
			}
		}
		for _, t := range starts {
			on.at = t.Unix()
			onsets = append(onsets, on)
		}
	}
	if len(onsets) == 0 {
		return nil, failAt(c.begin, "VTIMEZONE %q has no STANDARD or DAYLIGHT", tzid)
	}
	slices.SortStableFunc(onsets, func(a, b icalOnset) int { return cmp.Compare(a.at, b.at) })
	onsets = slices.CompactFunc(onsets, func(a, b icalOnset) bool { return a.at == b.at })
	loc, err := time.LoadLocationFromTZData(tzid, tzif(onsets))
	if err != nil {
		return nil, failAt(c.begin, "VTIMEZONE %q has more different offsets than a zone may have", tzid)
	}
	return loc, nil
}

// fromEpoch returns the start from which to expand rule l of a time
// zone's observance that starts at start: Outlook writes observances that
// start in 1601, and rrule-go does a year's work for every year of four
// centuries. A yearly rule without COUNT or INTERVAL has the same onsets
// from 1970 on when it starts in 1970 on start's day, which it does (but
// for 29 February); the onsets before 1970 are not made.
func fromEpoch(l *icalLine, start time.Time) time.Time {
	if start.Year() >= 1970 || (start.Month() == time.February && start.Day() == 29) {
		return start
	}
	opt, err := rrule.StrToROption(l.value)
	if err != nil || opt.Freq != rrule.YEARLY || opt.Count != 0 || opt.Interval > 1 {
		return start
	}
	return time.Date(1970, start.Month(), start.Day(), start.Hour(), start.Minute(), start.Second(), 0, start.Location())
}

// utcOffset reads l, a TZOFFSETFROM or TZOFFSETTO (+hhmm, -hhmm,
// +hhmmss), as seconds east of UTC.
func utcOffset(l *icalLine) (int, icalFail) {
	v := l.value
	bad := failAt(l.n, "%s %q is not a UTC offset such as +0100 or -0430", l.name, v)
	if (len(v) != 5 && len(v) != 7) || (v[0] != '+' && v[0] != '-') {
		return 0, bad
	}
	secs := 0
	for i, unit := range []int{3600, 60, 1}[:(len(v)-1)/2] {
		n, err := strconv.Atoi(v[1+2*i : 3+2*i])
		if err != nil || n < 0 || n > 59 || (i == 0 && n > 23) {
			return 0, bad
		}
		secs += n * unit
	}
	if v[0] == '-' {
		secs = -secs
	}
	return secs, nil
}

// tzif writes onsets (sorted, at least one) as a zone in the form of RFC
// 8536 (version 2, the 32-bit part empty), for
// [time.LoadLocationFromTZData]: before the first onset its TZOFFSETFROM
// applies. Zones are named by their offsets ("+0100"). It holds at most
// 255 different offsets; with more the data is not a zone.
func tzif(onsets []icalOnset) []byte {
	type kind struct {
		offset int
		dst    bool
	}
	var kinds []kind
	var names []byte
	index, nameAt := map[kind]int{}, map[int]int{}
	newKind := func(k kind) int {
		if _, ok := nameAt[k.offset]; !ok {
			nameAt[k.offset] = len(names)
			names = append(append(names, offsetName(k.offset)...), 0)
		}
		kinds = append(kinds, k)
		return len(kinds) - 1
	}
	newKind(kind{onsets[0].from, false}) // before the first onset: no transition is to it
	var times, which []byte
	for _, o := range onsets {
		k := kind{o.to, o.dst}
		i, ok := index[k]
		if !ok {
			i = newKind(k)
			index[k] = i
		}
		times = binary.BigEndian.AppendUint64(times, uint64(o.at))
		which = append(which, byte(i))
	}
	if len(kinds) > 255 || len(names) > 255 {
		return nil
	}
	header := func(b []byte, times, types, chars int) []byte {
		b = append(b, "TZif2"...)
		b = append(b, make([]byte, 15)...)
		for _, n := range []int{0, 0, 0, times, types, chars} { // isut, isstd, leap, time, type, char
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return b
	}
	b := header(nil, 0, 0, 0)
	b = header(b, len(onsets), len(kinds), len(names))
	b = append(append(b, times...), which...)
	for _, k := range kinds {
		b = binary.BigEndian.AppendUint32(b, uint32(int32(k.offset)))
		dst := byte(0)
		if k.dst {
			dst = 1
		}
		b = append(b, dst, byte(nameAt[k.offset]))
	}
	return append(append(b, names...), "\n\n"...)
}

// offsetName names a zone by its offset: "+0100", "-0930", "+053045".
func offsetName(secs int) string {
	sign := '+'
	if secs < 0 {
		sign, secs = '-', -secs
	}
	s := fmt.Sprintf("%c%02d%02d", sign, secs/3600, secs/60%60)
	if secs%60 != 0 {
		s += fmt.Sprintf("%02d", secs%60)
	}
	return s
}
