package recurrence

import (
	"math"
	"sync/atomic"
	"time"
)

// Spreading: an occurrence scheduled at s runs at s + offset(s), where
// offset(s) is
//
//	fmix64(FNV-1a(collection, 0x00, job, 0x00) XOR s as whole seconds since 1970 UTC)
//
// taken modulo the number of whole seconds in span(s), in seconds:
// FNV-1a with 64 bits of the names, once per rule, then per occurrence
// MurmurHash3's 64-bit finalizer, which mixes every bit of the instant
// into every bit of the result; span(s)
// is the Window, or the time to the next scheduled instant when that is
// shorter (never less than a second). The planned instants are therefore
// in the order of the scheduled ones: each lies before the next scheduled
// instant, which is at or before its own planned instant.

// FNV-1a's 64-bit parameters (the same as hash/fnv's New64a).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// jobSeed returns the FNV-1a state after collection, a zero byte, job
// and a zero byte.
func jobSeed(collection, job string) uint64 {
	h := uint64(fnvOffset)
	for _, s := range [2]string{collection, job} {
		for i := range len(s) {
			h = (h ^ uint64(s[i])) * fnvPrime
		}
		h *= fnvPrime // a zero byte: h ^ 0 == h
	}
	return h
}

// fieldHash returns the hash from which an H form of the cron field
// named name ("minutes", "hours", "day of month", ...) takes its value for
// the job whose identity is seed: fmix64 of FNV-1a continued from seed
// with the field's name, so that the fields of one spec get unrelated
// values.
func fieldHash(seed uint64, name string) uint64 {
	h := seed
	for i := range len(name) {
		h = (h ^ uint64(name[i])) * fnvPrime
	}
	return fmix64(h)
}

// offset returns the offset of the occurrence scheduled at s whose next
// scheduled instant is n (zero: none).
func (r *Rule) offset(s, n time.Time) time.Duration {
	span := r.spread
	if !n.IsZero() && n.Sub(s) < span {
		span = n.Sub(s)
	}
	secs := uint64(span / time.Second)
	if secs <= 1 {
		return 0
	}
	return time.Duration(fmix64(r.seed^uint64(s.Unix()))%secs) * time.Second
}

// fmix64 is MurmurHash3's 64-bit finalizer.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// nextPlanned returns the first occurrence whose planned instant p is
// strictly after after, with its scheduled instant s; zero Times when
// there is none. A planned instant lies less than the Window after its
// scheduled one, so the search starts at the first scheduled instant
// after after - Window.
func (r *Rule) nextPlanned(after time.Time) (s, p time.Time) {
	after = after.Round(0)
	walk := r.spread <= r.minGap // the memo of the last occurrence is used, and kept, only then
	var prev time.Time
	ok := false
	if walk {
		prev, ok = r.last.scheduled(after)
	}
	if ok {
		// A walk: after is the planned instant of the occurrence
		// scheduled at prev, and the next one is planned from the next
		// scheduled instant (no offset reaches that).
		s = r.next(prev)
	} else {
		s = r.next(after.Add(-r.spread))
	}
	for !s.IsZero() {
		var n time.Time // the next scheduled instant, when it can be closer than the window
		if r.spread > r.minGap {
			n = r.next(s)
		}
		off := r.offset(s, n)
		p = s.Add(off)
		if p.After(after) {
			if r.hasEnd && p.After(r.end) {
				break
			}
			if walk {
				r.last.store(s, off)
			}
			return s, p
		}
		if n.IsZero() {
			n = r.next(s)
		}
		s = n
	}
	return time.Time{}, time.Time{}
}

// Window returns the span over which the rule spreads its occurrences:
// the recurrence's Window, or 0 when it has none.
func (r *Rule) Window() time.Duration { return r.spread }

// Scheduled returns the instant the schedule names for the occurrence p
// that [Rule.Next] returned: p less its offset, which the recurrence's
// Window decides. Without a Window it is p; so it is for an instant that
// is not an occurrence.
func (r *Rule) Scheduled(p time.Time) time.Time {
	if r.spread == 0 {
		return p
	}
	s, q := r.nextPlanned(p.Add(-time.Nanosecond))
	if !q.Equal(p) {
		return p
	}
	return s.In(p.Location())
}

// DependsOnJob reports whether r's instants depend on the collection and
// name of the job it belongs to: it has a Window, or its cron spec has H
// forms. Such a recurrence previews only for a named job (see
// [CompileJob] and [Recurrence.ExpandCronJob]).
func (r *Recurrence) DependsOnJob() bool {
	if r == nil {
		return false
	}
	if r.Ext().Window != 0 {
		return true
	}
	if r.Cron == "" {
		return false
	}
	c, err := parseCron(r.Cron, noJob)
	return err == nil && c.hashed()
}

// gapBound returns a lower bound of the time between consecutive scheduled
// instants of a rule with a schedule, from its times of day: the closest
// two seconds, minutes or hours it lists (the finest field that lists more
// than one), a day when it runs at one time of day, at least the interval
// of a Second, Minute or Hour rule that runs once a period, less the
// largest change of the zone's clocks, which can bring a time shifted out
// of a gap closer to the next, and no more than its smallest change when
// the rule runs a repeated time twice.
// It spares [Rule.Next] the search for the next scheduled instant when the
// window is no longer than the bound.
func (r *Rule) gapBound() time.Duration {
	o := r.opts[0]
	closest := func(list []int, n int) (gap int, many bool) {
		if list == nil {
			return 1, true // every value
		}
		var seen [60]bool
		for _, v := range list {
			seen[v] = true
		}
		first, prev := -1, -1
		gap = n
		for v := range n {
			if !seen[v] {
				continue
			}
			if prev >= 0 {
				gap = min(gap, v-prev)
			} else {
				first = v
			}
			prev = v
		}
		gap = min(gap, first+n-prev) // across the wrap
		return gap, first != prev
	}
	var g, finest time.Duration
	if s, many := closest(o.Bysecond, 60); many {
		g, finest = time.Duration(s)*time.Second, time.Second
	} else if m, many := closest(o.Byminute, 60); many {
		g, finest = time.Duration(m)*time.Minute, time.Minute
	} else if h, many := closest(o.Byhour, 24); many {
		g, finest = time.Duration(h)*time.Hour, time.Hour
	} else {
		g, finest = 24*time.Hour, 24*time.Hour
	}
	if unit := r.freq.fine(); unit > 0 && finest >= unit {
		// One time per period at most: periods lie whole intervals apart.
		g = max(g, time.Duration(r.interval)*unit)
	}
	if !r.zone.fixed {
		g -= r.zone.maxJump
		if r.free {
			// A reading that occurs twice runs at both instants, a
			// change of the clocks apart.
			g = min(g, r.zone.minJump)
		}
	}
	return max(g, 0)
}

// lastPlanned remembers an occurrence Next returned, so that a caller
// walking occurrences (Next of the one Next returned) needs one search for
// a scheduled instant, not two: one word that any number of goroutines
// read and write without a lock, the scheduled instant's Unix seconds
// above offsetBits bits of its offset's seconds (0: none). Occurrences
// with sub-second parts, or offsets or instants too large for it, are not
// remembered.
type lastPlanned struct{ v atomic.Uint64 }

const offsetBits = 24 // offsets up to 194 days

// inNanos reports whether t can be written in Unix nanoseconds. It
// compares whole seconds, which is quicker than comparing Times, and so
// says no for the last second at either end of that range.
func inNanos(t time.Time) bool {
	u := t.Unix()
	return u > math.MinInt64/int64(time.Second) && u < math.MaxInt64/int64(time.Second)
}

// store remembers the occurrence scheduled at s and planned off later.
func (l *lastPlanned) store(s time.Time, off time.Duration) {
	sec, o := s.Unix(), int64(off/time.Second)
	if s.Nanosecond() != 0 || sec <= 0 || sec >= 1<<(63-offsetBits) || o >= 1<<offsetBits {
		return
	}
	if v := uint64(sec)<<offsetBits | uint64(o); l.v.Load() != v {
		l.v.Store(v)
	}
}

// scheduled returns the scheduled instant of the occurrence remembered
// when it is planned within p's second (at its start: its instants are
// whole seconds). No occurrence of a walk lies between, as the next one is
// planned at or after the next scheduled instant, a second or more later.
func (l *lastPlanned) scheduled(p time.Time) (time.Time, bool) {
	v := l.v.Load()
	sec := int64(v >> offsetBits)
	if v == 0 || p.Unix() != sec+int64(v&(1<<offsetBits-1)) {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
