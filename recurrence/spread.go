package recurrence

import "time"

// Spreading: an occurrence scheduled at s runs at s + offset(s), where
// offset(s) is fmix64(FNV-1a(
//
//	collection, 0x00, job, 0x00, s as whole seconds since 1970 UTC (8 bytes, big-endian)
//
// )) taken modulo the number of whole seconds in span(s), in seconds:
// FNV-1a with 64 bits, then MurmurHash3's 64-bit finalizer, which mixes
// the last bytes (the instant's) into every bit of the result; span(s)
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
	h := r.seed
	u := uint64(s.Unix())
	for shift := 56; shift >= 0; shift -= 8 {
		h = (h ^ (u >> shift & 0xff)) * fnvPrime
	}
	return time.Duration(fmix64(h)%secs) * time.Second
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
	for s = r.next(after.Add(-r.spread)); !s.IsZero(); {
		n := r.next(s)
		p = s.Add(r.offset(s, n))
		if p.After(after) {
			if r.hasEnd && p.After(r.end) {
				break
			}
			return s, p
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
	if r.Window != 0 {
		return true
	}
	if r.Cron == "" {
		return false
	}
	c, err := parseCron(r.Cron, noJob)
	return err == nil && c.hashed()
}
