package memory

import (
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	scheduler "github.com/jobclock/scheduler"
)

// Most records of a store are in one of two shapes. A job as the Scheduler
// creates it has not run yet: Created and Updated are one instant and
// Schedule.Anchor is that instant or that instant truncated to the whole
// second, Schedule.DueAt and Status.NextExecutionTime are empty or the
// next occurrence, and the rest of its status and schedule is empty. A job
// between occurrences has run: it has counters and more instants, but
// still no occurrence in progress nor run requested (and neither has tags:
// a job with tags is kept whole, so that the many without take no more
// memory for them). A job keeps a record
// of the first shape in compact form, in about fifty bytes of the job
// itself (a whole JobRecord takes about four hundred, which would be most
// of the memory of a store of a million jobs), adds a ran part in
// more.ran for the second, and keeps any other record whole in
// more.whole.

// compact is a record in compact form, less the members that the job
// keeps itself (its names, Version and lease).
type compact struct {
	def     *scheduler.Job
	etag    uint64 // ETag, 16 hex digits as the Scheduler writes them (see etagBits)
	updated int64  // Updated (and Created and, with anchorSecond truncated, Schedule.Anchor, without ranPart), as a timeKey
	next    int64  // Schedule.NextOccurrence, as a timeKey
	st      uint8  // State, as an index in compactStates
	flags   uint8  // dueNext, nextExec, lastFailed, ranPart
	seqHigh uint16 // the bits of the job's creation order above seq's (kept here, where they fill the padding)
	seq     uint32 // the job's creation order, its low 32 bits (kept here, where it fills the padding)
}

// etagBits returns the bits of an ETag as the Scheduler writes them: 16
// lower-case hex digits, the least significant first. Any other ETag has
// no compact form.
func etagBits(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	s = s[:16] // no bounds checks below
	var v uint64
	var bad byte
	for i := 15; i >= 0; i-- {
		d := hexDigits[s[i]]
		bad |= d
		v = v<<4 | uint64(d&15)
	}
	return v, bad < 16
}

// hexDigits gives the value of each lower-case hex digit, and 16 (not a
// digit) for every other byte.
var hexDigits = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 16
		}
	}
	return t
}()

// etagText is the ETag of bits, the inverse of etagBits, written in b,
// which must not be written again: the string shares its bytes (so that a
// record's ETag takes no allocation of its own).
func etagText(v uint64, b *[16]byte) string {
	const digits = "0123456789abcdef"
	for i := range b {
		b[i] = digits[v&15]
		v >>= 4
	}
	return unsafe.String(&b[0], len(b))
}

// ran is the rest of the compact form of the record of a job that has run:
// 56 bytes, its counters in 32 bits (a record with a counter beyond them
// has no compact form).
type ran struct {
	created, anchor              int64 // timeKeys
	last                         int64 // timeKey of *Status.LastExecutionTime; math.MinInt64 when it is nil (a record that points to the zero Time has no compact form)
	succeeded                    int64 // timeKey of Schedule.LastSucceeded
	executions, failures, faults int32 // Status.ExecutionCount, FailureCount and FaultedCount
	occurrences, counted         int32 // Schedule.Occurrences and Counted
}

// small reports whether n fits a counter of ran.
func small(n int) bool { return n >= math.MinInt32 && n <= math.MaxInt32 }

// Bits of compact.flags.
const (
	dueNext      = 1 << iota // Schedule.DueAt is NextOccurrence (else zero)
	nextExec                 // Status.NextExecutionTime points to NextOccurrence (else nil)
	lastFailed               // Schedule.LastFailed
	ranPart                  // more.ran holds the rest of the record
	anchorSecond             // Schedule.Anchor is Updated truncated to the whole second (without ranPart)
)

// compactStates are the states the compact form holds, by index.
var compactStates = [...]scheduler.JobState{"", scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}

// setRecord stores r as j's record, with its times in UTC; r's Version and
// lease are not stored (j's Version stays as it is, also when the record
// kept whole holds it, see bigVersion). keep stores r and its definition themselves,
// rather than copies. A definition that j holds already (one a claim
// handed out, given back) is kept as it is: nobody modifies it.
func (j *job) setRecord(r *scheduler.JobRecord, keep bool) {
	held := j.def()
	big := j.ver == bigVersion // the Version stays in the record kept whole
	if c, rn, ok := compactOf(r); ok && !big {
		if !keep && c.def != held {
			c.def = c.def.Clone()
		}
		c.seq, c.seqHigh = j.rec.seq, j.rec.seqHigh
		j.rec = c
		if c.flags&ranPart != 0 || j.more != nil {
			m := j.ext()
			m.whole, m.ran = nil, rn
		}
		return
	}
	w := r
	if keep {
		ownExtra(w)
	} else {
		w = cloneRecord(r, r.Job == held)
	}
	normalize(w)
	var v int64
	if big {
		v = j.version()
	}
	w.Version, w.LeaseOwner, w.LeaseUntil, w.PreviousLeaseOwner, w.PreviousLeaseUntil, w.Handle = v, "", time.Time{}, "", time.Time{}, nil
	j.rec = compact{seq: j.rec.seq, seqHigh: j.rec.seqHigh}
	m := j.ext()
	m.whole, m.ran = w, ran{}
}

// keepWhole turns j's record, when it is in compact form, into one kept
// whole, with the same definition.
func (j *job) keepWhole() {
	if j.whole() != nil {
		return
	}
	w := j.record(nil, extraSlots{}, true)
	j.rec = compact{seq: j.rec.seq, seqHigh: j.rec.seqHigh}
	m := j.ext()
	m.whole, m.ran = w, ran{}
}

// def returns the definition of j's record; nil for a job being created.
func (j *job) def() *scheduler.Job {
	if w := j.whole(); w != nil {
		return w.Job
	}
	return j.rec.def
}

// cloneRecord returns a copy of r that shares nothing with it but, with
// shareDef, its definition, which nobody modifies (see [scheduler.Store]).
func cloneRecord(r *scheduler.JobRecord, shareDef bool) *scheduler.JobRecord {
	if !shareDef {
		return r.Clone()
	}
	w := *r
	w.Job = nil
	c := w.Clone()
	c.Job = r.Job
	return c
}

// whole returns j's record when it is kept whole, nil when compact.
func (j *job) whole() *scheduler.JobRecord {
	if j.more == nil {
		return nil
	}
	return j.more.whole
}

// readInto returns a copy of j's record that the caller owns, whose
// lease is owner's (empty: none), filling in into, a zero record, unless
// it is nil or j's record is kept whole; what the record points to goes
// in x unless x is empty (see job.record). With shareDef the copy holds j's
// definition itself, as a claim hands it out (see [scheduler.Store]).
func (j *job) readInto(into *scheduler.JobRecord, x extraSlots, shareDef bool, owner string) *scheduler.JobRecord {
	var r *scheduler.JobRecord
	if w := j.whole(); w != nil {
		r = cloneRecord(w, shareDef)
	} else {
		r = j.record(into, x, shareDef)
	}
	r.Collection, r.Name, r.Version, r.Incarnation = j.coll.rec.Name, j.name, j.version(), j.incarnation()
	if r.LeaseOwner = owner; owner != "" {
		r.LeaseUntil = instant(j.more.leaseUntil)
	}
	return r
}

// tags returns the Tags of j's record, which j keeps: nil without any (a
// record with tags is kept whole).
func (j *job) tags() map[string]string {
	if w := j.whole(); w != nil {
		return w.Tags
	}
	return nil
}

// state returns the State of j's record.
func (j *job) state() scheduler.JobState {
	if w := j.whole(); w != nil {
		return w.State
	}
	return compactStates[j.rec.st]
}

// nextExecution returns the Status.NextExecutionTime of j's record, and
// false when it is nil.
func (j *job) nextExecution() (time.Time, bool) {
	if w := j.whole(); w != nil {
		if n := w.Status.NextExecutionTime; n != nil {
			return *n, true
		}
		return time.Time{}, false
	}
	return instant(j.rec.next), j.rec.flags&nextExec != 0
}

// lastExecution returns the Status.LastExecutionTime of j's record, and
// false when it is nil.
func (j *job) lastExecution() (time.Time, bool) {
	if w := j.whole(); w != nil {
		if l := w.Status.LastExecutionTime; l != nil {
			return *l, true
		}
		return time.Time{}, false
	}
	if j.rec.flags&ranPart == 0 || j.more.ran.last == math.MinInt64 {
		return time.Time{}, false
	}
	return instant(j.more.ran.last), true
}

// failures returns the Status.FailureCount of j's record.
func (j *job) failures() int {
	if w := j.whole(); w != nil {
		return w.Status.FailureCount
	}
	if j.rec.flags&ranPart == 0 {
		return 0
	}
	return int(j.more.ran.failures)
}

// dueAt returns the Schedule.DueAt of j's record.
func (j *job) dueAt() time.Time {
	if w := j.whole(); w != nil {
		return w.Schedule.DueAt
	}
	if j.rec.flags&dueNext == 0 {
		return time.Time{}
	}
	return instant(j.rec.next)
}

// updated returns the Updated of j's record.
func (j *job) updated() time.Time {
	if w := j.whole(); w != nil {
		return w.Updated
	}
	return instant(j.rec.updated)
}

// incarnation returns the Incarnation of j's record: its creation order,
// 48 bits of it (see job.rec), plus one, so never zero. Two jobs of one
// name have the same one only when 2^48 creates of the store came between
// their creates (at a million creates a second, nine years); they are then
// still told apart by Created unless the two creates came at one instant.
func (j *job) incarnation() int64 { return int64(j.rec.seqHigh)<<32 | int64(j.rec.seq) + 1 }

// created returns the Created of j's record.
func (j *job) created() time.Time {
	switch {
	case j.whole() != nil:
		return j.more.whole.Created
	case j.rec.flags&ranPart != 0:
		return instant(j.more.ran.created)
	}
	return instant(j.rec.updated)
}

// compactOf returns r in compact form, with its ran part when the form
// needs one, and false when r has no compact form.
func compactOf(r *scheduler.JobRecord) (compact, ran, bool) {
	st := slices.Index(compactStates[:], r.State)
	s, status := &r.Schedule, &r.Status
	updated, ok := exactKey(r.Updated)
	next, ok2 := exactKey(s.NextOccurrence)
	if st < 0 || !ok || !ok2 || s.Current != nil || s.Waiting != nil || !s.RunRequested.IsZero() || s.RunTrace != "" || s.RunTraceState != "" || s.RunRequestedInClaim != 0 ||
		s.Faults != 0 || s.Policy != nil || s.LastSkipped || s.LastCancelled ||
		status.Health != "" || len(r.Tags) != 0 {
		return compact{}, ran{}, false
	}
	etag, okTag := etagBits(r.ETag)
	if !okTag {
		return compact{}, ran{}, false
	}
	c := compact{def: r.Job, etag: etag, updated: updated, next: next, st: uint8(st)}
	if !s.DueAt.IsZero() {
		if !s.DueAt.Equal(s.NextOccurrence) {
			return compact{}, ran{}, false
		}
		c.flags |= dueNext
	}
	if n := status.NextExecutionTime; n != nil {
		if !n.Equal(s.NextOccurrence) {
			return compact{}, ran{}, false
		}
		c.flags |= nextExec
	}
	if s.LastFailed {
		c.flags |= lastFailed
	}
	if !small(status.ExecutionCount) || !small(status.FailureCount) || !small(status.FaultedCount) || !small(s.Occurrences) || !small(s.Counted) {
		return compact{}, ran{}, false
	}
	created, ok := exactKey(r.Created)
	anchor, ok2 := exactKey(s.Anchor)
	succeeded, ok4 := exactKey(s.LastSucceeded)
	rn := ran{created: created, anchor: anchor, last: math.MinInt64, succeeded: succeeded,
		executions: int32(status.ExecutionCount), failures: int32(status.FailureCount), faults: int32(status.FaultedCount),
		occurrences: int32(s.Occurrences), counted: int32(s.Counted)}
	ok3 := true
	if t := status.LastExecutionTime; t != nil {
		rn.last, ok3 = exactKey(*t)
		ok3 = ok3 && !t.IsZero()
	}
	if !ok3 {
		return compact{}, ran{}, false
	}
	if rn == (ran{created: updated, anchor: updated, last: math.MinInt64, succeeded: math.MinInt64}) {
		return c, ran{}, true // a job that has not run
	}
	if ok2 && s.Anchor.Equal(instant(updated).Truncate(time.Second)) && rn == (ran{created: updated, anchor: anchor, last: math.MinInt64, succeeded: math.MinInt64}) {
		c.flags |= anchorSecond
		return c, ran{}, true // a job that has not run, as the Scheduler anchors it
	}
	if !ok || !ok2 || !ok4 {
		return compact{}, ran{}, false
	}
	c.flags |= ranPart
	return c, rn, true
}

// record returns j's record, kept in compact form, as a copy that shares
// nothing with j but, with shareDef, its definition: into when it is not
// nil (a zero record), else a new one. What the record points to (its
// instants and the bytes of its ETag) goes in x, zero memory, which needs
// no last instant for a job that has not run (see freshExtra); or with an
// empty x in an allocation of its own, the same as a new record's.
// Nothing writes x again (a record RecordBatch took over is zeroed and
// filled in with another x). Its Collection, Name, Version and lease are
// left for the caller to set.
func (j *job) record(into *scheduler.JobRecord, x extraSlots, shareDef bool) *scheduler.JobRecord {
	c := &j.rec
	r := into
	switch {
	case r == nil && x.next == nil:
		b := new(struct {
			rec scheduler.JobRecord
			x   recordExtra
		})
		r, x = &b.rec, b.x.slots()
	case r == nil:
		r = new(scheduler.JobRecord)
	case x.next == nil:
		x = new(recordExtra).slots()
	}
	updated, next := instant(c.updated), instant(c.next)
	def := c.def
	if !shareDef {
		def = def.Clone()
	}
	*r = scheduler.JobRecord{Job: def, State: compactStates[c.st], ETag: etagText(c.etag, x.etag), Created: updated, Updated: updated,
		Schedule: scheduler.JobSchedule{Anchor: updated, NextOccurrence: next, LastFailed: c.flags&lastFailed != 0}}
	if c.flags&anchorSecond != 0 {
		r.Schedule.Anchor = updated.Truncate(time.Second)
	}
	if c.flags&dueNext != 0 {
		r.Schedule.DueAt = next
	}
	if c.flags&nextExec != 0 {
		*x.next = next
		r.Status.NextExecutionTime = x.next
	}
	if c.flags&ranPart != 0 {
		rn := &j.more.ran
		r.Created, r.Schedule.Anchor, r.Schedule.LastSucceeded = instant(rn.created), instant(rn.anchor), instant(rn.succeeded)
		// Only here, with ranPart, is x.last written: a caller that
		// hands in a freshExtra's slots (no x.last) chooses it by the
		// same flag.
		if rn.last != math.MinInt64 {
			*x.last = instant(rn.last)
			r.Status.LastExecutionTime = x.last
		}
		r.Status.ExecutionCount, r.Status.FailureCount, r.Status.FaultedCount = int(rn.executions), int(rn.failures), int(rn.faults)
		r.Schedule.Occurrences, r.Schedule.Counted = int(rn.occurrences), int(rn.counted)
	}
	return r
}

// recordExtra is what a record that record returns points to: the
// instants of its Status (the last execution, the next) and the bytes of
// its ETag. freshExtra is the same for a job that has not run, and so
// has no last execution: 40 bytes rather than 64.
type (
	recordExtra struct {
		times [2]time.Time
		etag  [16]byte
	}
	freshExtra struct {
		next time.Time
		etag [16]byte
	}
)

// extraSlots is where record puts what a record points to; last is nil
// for a job that has not run, and next nil when it is empty.
type extraSlots struct {
	last, next *time.Time
	etag       *[16]byte
}

func (x *recordExtra) slots() extraSlots { return extraSlots{&x.times[0], &x.times[1], &x.etag} }
func (x *freshExtra) slots() extraSlots  { return extraSlots{nil, &x.next, &x.etag} }

// extraChunk is how many claimed records share an allocation of their
// recordExtras or freshExtras (see Store.ClaimDue): 1 KiB at most.
const extraChunk = 16

// ownExtra points r's Status instants and ETag at a recordExtra of their
// own: a record that a claim handed out, kept whole, must not keep the
// other records' recordExtras of its chunk (see Store.ClaimDue) from
// being collected.
func ownExtra(r *scheduler.JobRecord) {
	x := new(recordExtra)
	st := &r.Status
	if t := st.LastExecutionTime; t != nil {
		x.times[0] = *t
		st.LastExecutionTime = &x.times[0]
	}
	if t := st.NextExecutionTime; t != nil {
		x.times[1] = *t
		st.NextExecutionTime = &x.times[1]
	}
	if len(r.ETag) == len(x.etag) {
		copy(x.etag[:], r.ETag)
		r.ETag = unsafe.String(&x.etag[0], len(x.etag))
	} else {
		r.ETag = strings.Clone(r.ETag)
	}
}

// normalize sets r's times, and those it points to, to UTC.
func normalize(r *scheduler.JobRecord) {
	r.Created, r.Updated, r.LeaseUntil = utc(r.Created), utc(r.Updated), utc(r.LeaseUntil)
	utcIn(r.Status.LastExecutionTime)
	utcIn(r.Status.NextExecutionTime)
	s := &r.Schedule
	s.DueAt, s.Anchor, s.NextOccurrence, s.RunRequested = utc(s.DueAt), utc(s.Anchor), utc(s.NextOccurrence), utc(s.RunRequested)
	s.LastSucceeded = utc(s.LastSucceeded)
	if p := s.Policy; p != nil {
		p.ResumeTime, p.Resumed, p.Buffered = utc(p.ResumeTime), utc(p.Resumed), utc(p.Buffered)
		for i, t := range p.Backfill {
			p.Backfill[i] = utc(t)
		}
		for i := range p.Running {
			o := &p.Running[i]
			o.Expected, o.At, o.Until = utc(o.Expected), utc(o.At), utc(o.Until)
		}
	}
	for _, o := range []*scheduler.Occurrence{s.Current, s.Waiting} {
		if o != nil {
			o.Expected, o.At = utc(o.Expected), utc(o.At)
			if o.Limited != nil {
				o.Limited.Since = utc(o.Limited.Since)
			}
		}
	}
}

// timeKey returns t as Unix nanoseconds, the zero Time as math.MinInt64,
// and instants beyond what those hold (before 1678, after 2262) as the
// nearest that they hold, so that keys compare as the instants do.
func timeKey(t time.Time) int64 {
	const minSec, maxSec = math.MinInt64/1_000_000_000 + 1, math.MaxInt64/1_000_000_000 - 1
	switch s := t.Unix(); {
	case t.IsZero():
		return math.MinInt64
	case s < minSec:
		return math.MinInt64 + 1
	case s > maxSec:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// exactKey returns timeKey(t) and whether instant of that key is t (in
// UTC): false for instants before 1678 or after 2262.
func exactKey(t time.Time) (int64, bool) {
	k := timeKey(t)
	return k, t.IsZero() || k != math.MinInt64+1 && k != math.MaxInt64
}

// instant returns the instant of timeKey k, in UTC.
func instant(k int64) time.Time {
	if k == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, k).UTC()
}

// utc returns t in UTC without its monotonic reading; the zero Time stays
// zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

// utcIn sets *t, if any, to UTC.
func utcIn(t *time.Time) {
	if t != nil {
		*t = utc(*t)
	}
}
