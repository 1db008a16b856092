// Package memory is the in-memory reference implementation of
// [scheduler.Store]. It keeps everything in maps guarded by one mutex and
// indexes due jobs in two queues, one for jobs that are free and one for
// jobs under lease, each a FIFO for jobs that arrive in due order (jobs
// put in the order they come due, leases taken one after another) and a
// 4-ary heap for the others. Claiming the next due job costs O(1) for a
// job in the FIFO and O(log n) in the number of jobs in the heap;
// recording its outcome, which takes it out of the queue of jobs under
// lease, costs the same. It implements [scheduler.BatchRecorder], and
// [scheduler.StatsReader] with each collection's job counts by state kept
// up to date on every write, so counting jobs costs nothing per job. Prune
// finds what it deletes through indexes of its own (final jobs by their
// last write, jobs by their oldest history entry, jobs with more history
// than the last PerJob), so its cost grows with what it deletes, not with
// the number of jobs. Jobs and history entries are kept in a compact form
// and their records built when read: a job that has not run yet takes
// about a hundred bytes besides its definition, which the store shares
// with the Scheduler, and one that has run about 350 with its first
// history entry, and 96 more per entry when it has more than one. Data is
// lost when the process exits. Several Schedulers in one process may share
// one Store.
package memory

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

var (
	_ scheduler.Store         = (*Store)(nil)
	_ scheduler.BatchRecorder = (*Store)(nil)
	_ scheduler.StatsReader   = (*Store)(nil)
	_ scheduler.Ephemeral     = (*Store)(nil)
)

// Store is an in-memory [scheduler.Store]. The zero value is not ready;
// use [New]. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	colls map[string]*coll
	due   queue  // due jobs without a lease, or whose lease ends before they are due
	held  queue  // due jobs whose lease ends after they are due
	seq   uint64 // creation order of entries, the heaps' tie-breaker
	hseq  uint64 // recording order of history entries
	// claimed maps the copy ClaimDue returned for an entry to the entry,
	// so that Record finds it without two lookups by name in large maps.
	// An entry has at most one: its latest claim, until recorded.
	claimed map[*scheduler.JobRecord]*entry
	// spare holds boxes of claimed records that RecordBatch took back
	// and did not keep, cleared, for the next claims (see recycle).
	spare []*recBox
	// randomTies breaks ties in the due order at random rather than by
	// creation order (for tests: the contract leaves ties open).
	randomTies bool

	// What Prune needs, kept up to date by every write so that it
	// visits only what it deletes.
	finals timeIndex           // jobs in a final state, by Updated (pos 0)
	aged   timeIndex           // jobs with history, by their oldest EndTime (pos 1)
	over   map[*entry]struct{} // jobs with more than perJob history entries
	perJob int                 // the PerJob of the last Prune; 0 before any
}

type coll struct {
	rec  *scheduler.CollectionRecord
	jobs map[string]*entry
	// counts counts the jobs in each of jobStates, and others those in
	// any other state (states without jobs have no key).
	counts [len(jobStates)]int
	others map[scheduler.JobState]int
	// names lists the jobs' names in order; nil after a create or delete
	// until the next ListJobs sorts them again.
	names []string
}

// histItem is a history entry with its place in the recording order of
// the whole store. It is kept in compact form, instants as Unix
// nanoseconds and names as indexes, with the Collection and Job of the job
// whose history it is; an entry that has no such form is kept whole in
// full.
type histItem struct {
	expected, start, end int64 // nanos
	retry, repeat        int
	message, tag         string
	seq                  uint64
	action, status       uint8 // indexes in actionNames and statuses
	faulted              bool
	full                 *scheduler.HistoryEntry
}

var (
	actionNames = [...]scheduler.ActionName{"", scheduler.MainAction, scheduler.ErrorAction}
	statuses    = [...]scheduler.ExecutionStatus{"", scheduler.StatusCompleted, scheduler.StatusFailed, scheduler.StatusPostponed}
)

// newHistItem returns h, an entry of e's history, as a histItem.
func newHistItem(e *entry, h *scheduler.HistoryEntry, seq uint64) histItem {
	action, status := slices.Index(actionNames[:], h.ActionName), slices.Index(statuses[:], h.Status)
	expected, ok := nanos(h.ExpectedExecutionTime)
	start, ok2 := nanos(h.StartTime)
	end, ok3 := nanos(h.EndTime)
	if action < 0 || status < 0 || !ok || !ok2 || !ok3 || h.Collection != e.coll.rec.Name || h.Job != e.name {
		full := *h
		full.ExpectedExecutionTime, full.StartTime, full.EndTime = utc(h.ExpectedExecutionTime), utc(h.StartTime), utc(h.EndTime)
		return histItem{seq: seq, full: &full}
	}
	return histItem{expected: expected, start: start, end: end, retry: h.RetryCount, repeat: h.RepeatCount,
		message: h.Message, tag: h.ExecutionTag, seq: seq, action: uint8(action), status: uint8(status), faulted: h.Faulted}
}

// entry returns the history entry of e that h holds.
func (h *histItem) entry(e *entry) scheduler.HistoryEntry {
	if h.full != nil {
		return *h.full
	}
	return scheduler.HistoryEntry{Collection: e.coll.rec.Name, Job: e.name, ActionName: actionNames[h.action], Status: statuses[h.status],
		ExpectedExecutionTime: instant(h.expected), StartTime: instant(h.start), EndTime: instant(h.end),
		RetryCount: h.retry, RepeatCount: h.repeat, Message: h.message, ExecutionTag: h.tag, Faulted: h.faulted}
}

// keptBy reports whether f keeps the entry of e that h holds (see
// [scheduler.HistoryFilter.Keeps]), without building all of it.
func (h *histItem) keptBy(f *scheduler.HistoryFilter, e *entry) bool {
	if h.full != nil {
		return f.Keeps(h.full)
	}
	// The members that Keeps reads.
	k := scheduler.HistoryEntry{Collection: e.coll.rec.Name, Status: statuses[h.status], Faulted: h.faulted}
	return f.Keeps(&k)
}

// endTime returns the entry's EndTime.
func (h *histItem) endTime() time.Time {
	if h.full != nil {
		return h.full.EndTime
	}
	return instant(h.end)
}

// endKey returns the timeKey of the entry's EndTime.
func (h *histItem) endKey() int64 {
	if h.full != nil {
		return timeKey(h.full.EndTime)
	}
	return h.end // the nanos of an instant are its timeKey
}

// entry is a stored job. Its record is kept in compact form where it has
// one (see entry.setCompact): instants as Unix nanoseconds, the state as a
// small index, and what the record leaves empty left out. A job that has
// not run yet, the bulk of a store that was just filled, keeps it in the
// entry alone; a job that has run keeps its counters and the instants that
// differ in x too. A record without a compact form (an occurrence under
// way, a run requested) is kept whole in x.rec. Either way the Version is
// the entry's and the lease is in x, so a claim changes neither form.
// Records are built on read.
type entry struct {
	coll *coll
	name string
	// The compact form, meaningful while x or x.rec is nil.
	job     *scheduler.Job
	etag    string
	updated int64 // Created, Updated and Schedule.Anchor, as nanos (see nanos)
	next    int64 // Schedule.NextOccurrence, as nanos; DueAt and NextExecutionTime per flags
	state   uint8 // index in jobStates
	flags   uint16
	idx     int32 // place in the queue that holds it (see flags and queue)
	version int64
	seq     uint64
	x       *extra // nil until the job is claimed, has run or history, is final, or has no compact form
}

// Bits of entry.flags.
const (
	inDue      = 1 << iota // in Store.due
	inHeld                 // in Store.held
	gone                   // deleted
	dueNext                // compact form: DueAt is NextOccurrence (else zero)
	nextExec               // compact form: Status.NextExecutionTime points at NextOccurrence (else nil)
	ran                    // compact form: x.run holds Created, Anchor, the counters and LastExecutionTime
	lastExec               // compact form with ran: Status.LastExecutionTime is set
	lastFailed             // compact form: Schedule.LastFailed
	inFIFO                 // with inDue or inHeld: in that queue's FIFO
)

// extra is what an entry keeps beyond the compact form.
type extra struct {
	// rec is the job's record when it has no compact form; its Version
	// and lease fields are not used (the entry's are).
	rec        *scheduler.JobRecord
	leaseOwner string
	leaseUntil time.Time
	hist       []histItem // in recording order; the first one in one, until it grows
	// one holds the first history item of a job, which most one-time jobs
	// never go past: it comes with the extra rather than in an array of
	// its own (see appendHistory).
	one [1]histItem
	// claim holds the copy the latest ClaimDue returned, until recorded.
	claim *recBox
	// pos holds the entry's places in Store.finals and Store.aged (see
	// timeIndex); 0 when not in one.
	pos [2]int32
	// oldest is the least EndTime in hist as a timeKey; meaningful only
	// when hist is not empty.
	oldest int64
	run    runPart
}

// runPart is the part of the compact form of a job that has run that the
// entry itself has no room for.
type runPart struct {
	created, anchor, last        int64 // nanos; last is LastExecutionTime, when set
	executions, failures, faults int
	occurrences, counted         int
}

// ext returns e.x, creating it if need be.
func (e *entry) ext() *extra {
	if e.x == nil {
		e.x = new(extra)
	}
	return e.x
}

// full returns the record kept whole, or nil when e is in compact form.
func (e *entry) full() *scheduler.JobRecord {
	if e.x == nil {
		return nil
	}
	return e.x.rec
}

func (e *entry) jobState() scheduler.JobState {
	if r := e.full(); r != nil {
		return r.State
	}
	return jobStates[e.state]
}

func (e *entry) leaseOwner() string {
	if e.x == nil {
		return ""
	}
	return e.x.leaseOwner
}

func (e *entry) history() []histItem {
	if e.x == nil {
		return nil
	}
	return e.x.hist
}

func (e *entry) id() string { return e.coll.rec.Name + "/" + e.name }

// dueAt returns the record's Schedule.DueAt.
func (e *entry) dueAt() time.Time {
	if r := e.full(); r != nil {
		return r.Schedule.DueAt
	}
	if e.flags&dueNext == 0 {
		return time.Time{}
	}
	return instant(e.next)
}

// updatedKey returns the timeKey of the record's Updated.
func (e *entry) updatedKey() int64 {
	if r := e.full(); r != nil {
		return timeKey(r.Updated)
	}
	return e.updated // the nanos of an instant are its timeKey
}

// jobStates are the states the compact form can hold, by index.
var jobStates = [...]scheduler.JobState{"", scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}

// zeroNanos stands for the zero Time in the compact form; no instant that
// nanos accepts has it.
const zeroNanos = math.MinInt64

// nanos returns t as Unix nanoseconds, zeroNanos for the zero Time, and
// false when t lies too far from 1970 for that (outside the years 1678
// to 2262). instant(nanos(t)) is t in UTC without its monotonic reading,
// as utc(t) is.
func nanos(t time.Time) (int64, bool) {
	const minSec, maxSec = math.MinInt64/1_000_000_000 + 1, math.MaxInt64/1_000_000_000 - 1
	if t.IsZero() {
		return zeroNanos, true
	}
	if s := t.Unix(); s < minSec || s > maxSec {
		return 0, false
	}
	return t.UnixNano(), true
}

func instant(ns int64) time.Time {
	if ns == zeroNanos {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// setCompact stores j in compact form and reports whether it has one: a
// record as the Scheduler writes a job with no occurrence under way and
// no run requested, whose DueAt and NextExecutionTime are its
// NextOccurrence or empty, with instants between the years 1678 and 2262.
// It leaves e alone when j has none.
func (e *entry) setCompact(j *scheduler.JobRecord) bool {
	st := slices.Index(jobStates[:], j.State)
	sc, status := &j.Schedule, &j.Status
	if st < 0 || sc.Current != nil || sc.Waiting != nil || !sc.RunRequested.IsZero() || sc.RunTrace != "" || sc.RunTraceState != "" {
		return false
	}
	updated, ok := nanos(j.Updated)
	next, ok2 := nanos(sc.NextOccurrence)
	if !ok || !ok2 {
		return false
	}
	var f uint16
	if !sc.DueAt.IsZero() {
		if !sc.DueAt.Equal(sc.NextOccurrence) {
			return false
		}
		f |= dueNext
	}
	if n := status.NextExecutionTime; n != nil {
		if !n.Equal(sc.NextOccurrence) {
			return false
		}
		f |= nextExec
	}
	if sc.LastFailed {
		f |= lastFailed
	}
	if status.LastExecutionTime != nil || status.ExecutionCount != 0 || status.FailureCount != 0 || status.FaultedCount != 0 ||
		sc.Occurrences != 0 || sc.Counted != 0 || !j.Created.Equal(j.Updated) || !sc.Anchor.Equal(j.Updated) {
		created, ok := nanos(j.Created)
		anchor, ok2 := nanos(sc.Anchor)
		var last int64
		ok3 := true
		if p := status.LastExecutionTime; p != nil {
			last, ok3 = nanos(*p)
			f |= lastExec
		}
		if !ok || !ok2 || !ok3 {
			return false
		}
		f |= ran
		e.ext().run = runPart{created: created, anchor: anchor, last: last,
			executions: status.ExecutionCount, failures: status.FailureCount, faults: status.FaultedCount,
			occurrences: sc.Occurrences, counted: sc.Counted}
	}
	e.job, e.etag, e.updated, e.next, e.state = j.Job, j.ETag, updated, next, uint8(st)
	e.flags = e.flags&^(dueNext|nextExec|ran|lastExec|lastFailed) | f
	if e.x != nil {
		e.x.rec = nil
	}
	return true
}

// set stores j as e's record, in compact form when it has one. keep
// stores j itself, rather than a copy, when it has not.
func (e *entry) set(j *scheduler.JobRecord, keep bool) {
	if e.setCompact(j) {
		return
	}
	r := j
	if !keep {
		r = j.Clone()
	}
	normInPlace(r)
	r.Version, r.LeaseOwner, r.LeaseUntil, r.PreviousLeaseOwner = 0, "", time.Time{}, ""
	e.ext().rec = r
	e.job, e.etag = nil, ""
	e.x.run = runPart{}
}

// recBox holds a record built for a caller with the instants its Status
// points to, in one allocation.
type recBox struct {
	rec        scheduler.JobRecord
	last, next time.Time
}

// read returns a copy of e's record that shares only the immutable Job.
func (e *entry) read() *scheduler.JobRecord { return e.readInto(new(recBox)) }

// readInto is read building the record in b, which must be cleared.
func (e *entry) readInto(b *recBox) *scheduler.JobRecord {
	r := &b.rec
	if f := e.full(); f != nil {
		*r = *f
		if p := f.Status.LastExecutionTime; p != nil {
			b.last = *p
			r.Status.LastExecutionTime = &b.last
		}
		if p := f.Status.NextExecutionTime; p != nil {
			b.next = *p
			r.Status.NextExecutionTime = &b.next
		}
		if p := f.Schedule.Current; p != nil {
			o := *p
			r.Schedule.Current = &o
		}
		if p := f.Schedule.Waiting; p != nil {
			o := *p
			r.Schedule.Waiting = &o
		}
	} else {
		t, next := instant(e.updated), instant(e.next)
		r.Collection, r.Name, r.Job, r.State, r.ETag = e.coll.rec.Name, e.name, e.job, jobStates[e.state], e.etag
		r.Created, r.Updated = t, t
		r.Schedule.Anchor, r.Schedule.NextOccurrence = t, next
		if e.flags&dueNext != 0 {
			r.Schedule.DueAt = next
		}
		if e.flags&nextExec != 0 {
			b.next = next
			r.Status.NextExecutionTime = &b.next
		}
		r.Schedule.LastFailed = e.flags&lastFailed != 0
		if e.flags&ran != 0 {
			run := &e.x.run
			r.Created, r.Schedule.Anchor = instant(run.created), instant(run.anchor)
			if e.flags&lastExec != 0 {
				b.last = instant(run.last)
				r.Status.LastExecutionTime = &b.last
			}
			r.Status.ExecutionCount, r.Status.FailureCount, r.Status.FaultedCount = run.executions, run.failures, run.faults
			r.Schedule.Occurrences, r.Schedule.Counted = run.occurrences, run.counted
		}
	}
	r.Version = e.version
	if e.x != nil {
		r.LeaseOwner, r.LeaseUntil = e.x.leaseOwner, e.x.leaseUntil
	}
	return r
}

// New returns an empty Store.
func New() *Store {
	return &Store{colls: make(map[string]*coll), claimed: make(map[*scheduler.JobRecord]*entry), over: make(map[*entry]struct{}),
		finals: timeIndex{heap: timeHeap{which: 0}}, aged: timeIndex{heap: timeHeap{which: 1}}}
}

// Ephemeral returns true: nothing the store holds outlives the process, so
// a Scheduler without Config.Secrets keeps job secrets in it unsealed
// (see [scheduler.Ephemeral]).
func (s *Store) Ephemeral() bool { return true }

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

// utcInPlace sets *t, if any, to UTC.
func utcInPlace(t *time.Time) {
	if t != nil {
		*t = utc(*t)
	}
}

// normInPlace sets r's times, and those it points to, to UTC.
func normInPlace(r *scheduler.JobRecord) {
	r.Created, r.Updated, r.LeaseUntil = utc(r.Created), utc(r.Updated), utc(r.LeaseUntil)
	utcInPlace(r.Status.LastExecutionTime)
	utcInPlace(r.Status.NextExecutionTime)
	s := &r.Schedule
	s.DueAt, s.Anchor, s.NextOccurrence, s.RunRequested = utc(s.DueAt), utc(s.Anchor), utc(s.NextOccurrence), utc(s.RunRequested)
	for _, o := range []*scheduler.Occurrence{s.Current, s.Waiting} {
		if o != nil {
			o.Expected, o.At = utc(o.Expected), utc(o.At)
		}
	}
}

// reindex puts e in the right queue, moves it, or takes it out, according
// to its record, lease and collection's state. A claim moves a job from
// due to held, where leases arrive in the order they end (the FIFO of
// queue), and recording its outcome takes it out of held.
func (s *Store) reindex(e *entry) {
	dueAt := e.dueAt()
	if dueAt.IsZero() || e.coll.rec.Definition.State() != scheduler.CollectionEnabled {
		s.unindex(e)
		return
	}
	ready, q, which := dueAt, &s.due, uint16(inDue)
	if x := e.x; x != nil && x.leaseOwner != "" && x.leaseUntil.After(ready) {
		ready, q, which = x.leaseUntil, &s.held, inHeld
	}
	switch e.flags & (inDue | inHeld) {
	case which:
		q.fix(e, ready.UnixNano())
	case 0:
		q.push(e, ready.UnixNano(), which)
	default:
		s.unindex(e)
		q.push(e, ready.UnixNano(), which)
	}
}

// forget drops what refers to e, which is being deleted, and takes it out
// of its collection's count.
func (s *Store) forget(e *entry) {
	s.unindex(e)
	s.unclaim(e)
	s.finals.remove(e)
	s.aged.remove(e)
	delete(s.over, e)
	e.coll.count(e.jobState(), -1)
	e.flags |= gone
}

// trackFinal keeps e in s.finals, by its last write, while its state is
// final. Every change of e's record calls it.
func (s *Store) trackFinal(e *entry) {
	if e.jobState().Final() {
		if k := e.updatedKey(); e.x == nil || e.x.pos[0] == 0 || s.finals.at(e) != k {
			s.finals.set(e, k)
		}
	} else if e.x != nil && e.x.pos[0] != 0 {
		s.finals.remove(e)
	}
}

// appendHistory appends history to e's, keeping s.aged and s.over.
func (s *Store) appendHistory(e *entry, history []scheduler.HistoryEntry) {
	if len(history) == 0 {
		return
	}
	x := e.ext()
	oldest := x.oldest
	if len(x.hist) == 0 {
		oldest = math.MaxInt64
		if cap(x.hist) == 0 {
			x.hist = x.one[:0]
		}
	}
	for i := range history {
		s.hseq++
		x.hist = append(x.hist, newHistItem(e, &history[i], s.hseq))
		oldest = min(oldest, x.hist[len(x.hist)-1].endKey())
	}
	if cap(x.hist) > 1 && x.one[0].seq != 0 {
		x.one[0] = histItem{} // the history moved on: drop what it refers to
	}
	if x.pos[1] == 0 || oldest != x.oldest {
		x.oldest = oldest
		s.aged.set(e, oldest)
	}
	if s.perJob > 0 && len(x.hist) > s.perJob {
		s.over[e] = struct{}{}
	}
}

// historyChanged updates s.aged and s.over after entries were deleted from
// e's history.
func (s *Store) historyChanged(e *entry) {
	x := e.x
	if len(x.hist) == 0 {
		s.aged.remove(e)
		delete(s.over, e)
		return
	}
	oldest := int64(math.MaxInt64)
	for i := range x.hist {
		oldest = min(oldest, x.hist[i].endKey())
	}
	x.oldest = oldest
	s.aged.set(e, oldest)
	if s.perJob == 0 || len(x.hist) <= s.perJob {
		delete(s.over, e)
	}
}

// count adds d to the number of jobs in state st.
func (c *coll) count(st scheduler.JobState, d int) {
	if i := slices.Index(jobStates[:], st); i >= 0 {
		c.counts[i] += d
		return
	}
	if c.others == nil {
		c.others = make(map[scheduler.JobState]int)
	}
	if n := c.others[st] + d; n != 0 {
		c.others[st] = n
	} else {
		delete(c.others, st)
	}
}

// states returns the number of jobs in each state that has any.
func (c *coll) states() map[scheduler.JobState]int {
	m := maps.Clone(c.others)
	if m == nil {
		m = make(map[scheduler.JobState]int)
	}
	for i, n := range c.counts {
		if n != 0 {
			m[jobStates[i]] = n
		}
	}
	return m
}

// setRec stores j as e's record (see entry.set), keeping the state counts.
func (e *entry) setRec(j *scheduler.JobRecord, keep bool) {
	old := e.jobState()
	e.set(j, keep)
	if st := e.jobState(); st != old {
		e.coll.count(old, -1)
		e.coll.count(st, 1)
	}
}

// unclaim drops e's claim copy (and takes it out of s.claimed).
func (s *Store) unclaim(e *entry) {
	if e.x != nil && e.x.claim != nil {
		delete(s.claimed, &e.x.claim.rec)
		e.x.claim = nil
	}
}

// maxSpare bounds Store.spare: enough for the claims of a burst in flight
// at once, about half a megabyte.
const maxSpare = 1024

// box returns a cleared recBox for a claimed record: a spare one when
// there is one.
func (s *Store) box() *recBox {
	if n := len(s.spare); n > 0 {
		b := s.spare[n-1]
		s.spare[n-1] = nil
		s.spare = s.spare[:n-1]
		return b
	}
	return new(recBox)
}

// recycle keeps b, the box of a claimed record that RecordBatch recorded
// and did not keep (its BatchRecorder contract gives the record to the
// store), for a later claim.
func (s *Store) recycle(b *recBox) {
	if len(s.spare) < maxSpare {
		*b = recBox{} // drop its references
		s.spare = append(s.spare, b)
	}
}

// unindex takes e out of its heap, if any.
func (s *Store) unindex(e *entry) {
	switch e.flags & (inDue | inHeld) {
	case inDue:
		s.due.remove(e)
	case inHeld:
		s.held.remove(e)
	}
}

// first returns the entry ClaimDue would take next and when it is ready,
// or nil.
func (s *Store) first() (*entry, int64) {
	it, held := s.due.first(), s.held.first()
	if it == nil || held != nil && less(held, it) {
		it = held
	}
	if it == nil {
		return nil, 0
	}
	return it.e, it.ready
}

// PutCollection implements [scheduler.Store].
func (s *Store) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.colls[c.Name]
	rec := c.Clone()
	rec.Created, rec.Updated = utc(rec.Created), utc(rec.Updated)
	rec.Version = c.Version + 1
	if old == nil {
		if c.Version != 0 {
			return fmt.Errorf("memory: put collection %q: %w", c.Name, scheduler.ErrNotFound)
		}
		s.colls[c.Name] = &coll{rec: rec, jobs: make(map[string]*entry)}
		return nil
	}
	if c.Version != old.rec.Version {
		return fmt.Errorf("memory: put collection %q: version %d, stored %d: %w", c.Name, c.Version, old.rec.Version, scheduler.ErrConflict)
	}
	if n, limit := len(old.jobs), rec.Definition.MaxJobCount(); n > limit {
		return &scheduler.QuotaError{Collection: c.Name, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
			Reason: fmt.Sprintf("the collection holds %d jobs", n)}
	}
	stateChanged := old.rec.Definition.State() != rec.Definition.State()
	old.rec = rec
	if stateChanged {
		for _, e := range old.jobs {
			s.reindex(e)
		}
	}
	return nil
}

// GetCollection implements [scheduler.Store].
func (s *Store) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[name]
	if c == nil {
		return nil, fmt.Errorf("memory: job collection %q: %w", name, scheduler.ErrNotFound)
	}
	return c.rec.Clone(), nil
}

// ListCollections implements [scheduler.Store].
func (s *Store) ListCollections(ctx context.Context) ([]*scheduler.CollectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*scheduler.CollectionRecord, 0, len(s.colls))
	for _, c := range s.colls {
		out = append(out, c.rec.Clone())
	}
	slices.SortFunc(out, func(a, b *scheduler.CollectionRecord) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteCollection implements [scheduler.Store].
func (s *Store) DeleteCollection(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[name]
	if c == nil {
		return fmt.Errorf("memory: delete job collection %q: %w", name, scheduler.ErrNotFound)
	}
	for _, e := range c.jobs {
		s.forget(e)
	}
	delete(s.colls, name)
	return nil
}

func (s *Store) lookup(collection, name string) (*entry, error) {
	c := s.colls[collection]
	if c == nil {
		return nil, fmt.Errorf("memory: job collection %q: %w", collection, scheduler.ErrNotFound)
	}
	e := c.jobs[name]
	if e == nil {
		return nil, &missingJob{collection: collection, name: name}
	}
	return e, nil
}

// missingJob reports a job that does not exist. Its text is formatted only
// when asked for: creating a job looks it up first, and formatting cost
// more than the lookup.
type missingJob struct{ collection, name string }

func (e *missingJob) Error() string {
	return fmt.Sprintf("memory: job %q in collection %q: %v", e.name, e.collection, scheduler.ErrNotFound)
}

func (e *missingJob) Unwrap() error { return scheduler.ErrNotFound }

// PutJob implements [scheduler.Store].
func (s *Store) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[j.Collection]
	if c == nil {
		return fmt.Errorf("memory: put job %q: job collection %q: %w", j.Name, j.Collection, scheduler.ErrNotFound)
	}
	e := c.jobs[j.Name]
	if e == nil {
		if j.Version != 0 {
			return fmt.Errorf("memory: put job %q in collection %q: %w", j.Name, j.Collection, scheduler.ErrNotFound)
		}
		if limit := c.rec.Definition.MaxJobCount(); len(c.jobs) >= limit {
			return &scheduler.QuotaError{Collection: j.Collection, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
				Reason: fmt.Sprintf("the collection already holds %d jobs", len(c.jobs))}
		}
		s.seq++
		e = &entry{coll: c, name: j.Name, seq: s.seq, version: 1}
		if s.randomTies {
			e.seq = rand.Uint64()
		}
		e.set(j, false)
		c.jobs[j.Name] = e
		c.names = nil
		c.count(e.jobState(), 1)
		s.reindex(e)
		s.trackFinal(e)
		return nil
	}
	if j.Version != e.version {
		return fmt.Errorf("memory: put job %q in collection %q: version %d, stored %d: %w", j.Name, j.Collection, j.Version, e.version, scheduler.ErrConflict)
	}
	e.setRec(j, false) // the stored lease stays
	e.version++
	s.reindex(e)
	s.trackFinal(e)
	return nil
}

// GetJob implements [scheduler.Store].
func (s *Store) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return nil, err
	}
	return e.read(), nil
}

// ListJobs implements [scheduler.Store].
func (s *Store) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[collection]
	if c == nil {
		return nil, fmt.Errorf("memory: list jobs: job collection %q: %w", collection, scheduler.ErrNotFound)
	}
	if c.names == nil {
		c.names = make([]string, 0, len(c.jobs))
		for n := range c.jobs {
			c.names = append(c.names, n)
		}
		slices.Sort(c.names)
	}
	var out []*scheduler.JobRecord
	names, skip := c.names, f.Skip
	if f.State == "" {
		// Every job counts: skip without looking them up.
		names, skip = names[min(max(skip, 0), len(names)):], 0
	}
	for _, n := range names {
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		e := c.jobs[n]
		if f.State != "" && e.jobState() != f.State {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, e.read())
	}
	return out, nil
}

// DeleteJob implements [scheduler.Store].
func (s *Store) DeleteJob(ctx context.Context, collection, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return fmt.Errorf("memory: delete: %w", err)
	}
	s.forget(e)
	delete(e.coll.jobs, name)
	e.coll.names = nil
	return nil
}

// ClaimDue implements [scheduler.Store].
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	leaseUntil = utc(leaseUntil)
	if !leaseUntil.After(now) {
		return nil, fmt.Errorf("memory: claim: lease end %v is not after now %v", leaseUntil, now)
	}
	var out []*scheduler.JobRecord
	nowNs := now.UnixNano()
	for len(out) < limit {
		e, ready := s.first()
		if e == nil || ready > nowNs {
			break
		}
		x := e.ext()
		prev := x.leaseOwner // set only while a lease that expired is still in place
		x.leaseOwner, x.leaseUntil = owner, leaseUntil
		e.version++
		s.reindex(e)
		b := s.box()
		c := e.readInto(b)
		c.PreviousLeaseOwner = prev
		s.unclaim(e)
		x.claim = b
		s.claimed[c] = e
		if out == nil {
			out = make([]*scheduler.JobRecord, 0, min(limit, s.due.len()+s.held.len()+1))
		}
		out = append(out, c)
	}
	return out, nil
}

// NextDue implements [scheduler.Store].
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ready := s.first()
	if e == nil {
		return time.Time{}, nil
	}
	return time.Unix(0, ready).UTC(), nil
}

// ExtendLease implements [scheduler.Store].
func (s *Store) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return fmt.Errorf("memory: extend lease: %w", err)
	}
	if held := e.leaseOwner(); held != owner || owner == "" {
		return fmt.Errorf("memory: extend lease of job %q: held by %q, not %q: %w", e.id(), held, owner, scheduler.ErrLeaseLost)
	}
	e.x.leaseUntil = utc(until)
	s.reindex(e)
	return nil
}

// Record implements [scheduler.Store].
func (s *Store) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record(owner, j, history, false)
}

// RecordBatch implements [scheduler.BatchRecorder]: it records every
// element under one acquisition of the lock, keeps the records it stores
// whole, and reuses the records that ClaimDue handed out and that it
// records in compact form for later claims: as the BatchRecorder contract
// says, the caller must not use them once recorded.
func (s *Store) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := make([]error, 0, len(batch))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range batch {
		errs = append(errs, s.record(owner, b.Job, b.History, true))
	}
	return errs
}

// record does Record's work with s.mu held. keep stores j itself rather
// than a copy, when it is stored whole.
func (s *Store) record(owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry, keep bool) error {
	e := s.claimed[j]
	var box *recBox // holding j, when it is a claim of this store
	if e != nil {
		box = e.x.claim
		s.unclaim(e)
		if e.flags&gone != 0 || e.coll.rec.Name != j.Collection || e.name != j.Name {
			e = nil
		}
	}
	if e == nil {
		var err error
		if e, err = s.lookup(j.Collection, j.Name); err != nil {
			return fmt.Errorf("memory: record: %w", err)
		}
	}
	if held := e.leaseOwner(); held != owner || owner == "" {
		return fmt.Errorf("memory: record job %q: lease held by %q, not %q: %w", j.ID(), held, owner, scheduler.ErrLeaseLost)
	}
	if j.Version != e.version {
		return fmt.Errorf("memory: record job %q: version %d, stored %d: %w", j.ID(), j.Version, e.version, scheduler.ErrConflict)
	}
	e.setRec(j, keep)
	e.version++
	x := e.x // the lease made it
	x.leaseOwner, x.leaseUntil = "", time.Time{}
	s.unclaim(e) // the lease is released
	s.appendHistory(e, history)
	s.reindex(e)
	s.trackFinal(e)
	if keep && box != nil && e.full() != j {
		s.recycle(box) // j was copied into the compact form
	}
	return nil
}

// ListHistory implements [scheduler.Store].
func (s *Store) ListHistory(ctx context.Context, collection, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, job)
	if err != nil {
		return nil, fmt.Errorf("memory: list history: %w", err)
	}
	var out []scheduler.HistoryEntry
	skip := f.Skip
	hist := e.history()
	for i := len(hist) - 1; i >= 0; i-- {
		h := &hist[i]
		if !h.keptBy(&f, e) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		out = append(out, h.entry(e))
	}
	return out, nil
}

// pruneChunk is the number of jobs Prune deletes or trims between
// releases of the lock.
const pruneChunk = 1024

// Prune implements [scheduler.Store]. It finds what it deletes through the
// store's indexes: final jobs by their last write, jobs by their oldest
// history entry, and jobs with more than PerJob entries. A call whose
// PerJob differs from the previous call's counts every job's history once,
// to know which jobs are over the new limit; the Scheduler always passes
// the same. Other calls get in after every pruneChunk jobs.
func (s *Store) Prune(ctx context.Context, p scheduler.PruneRequest) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, done := 0, 0
	pause := func() {
		if done++; done%pruneChunk == 0 {
			s.mu.Unlock()
			s.mu.Lock()
		}
	}
	if !p.FinalJobsBefore.IsZero() {
		cutoff := timeKey(p.FinalJobsBefore)
		for {
			e, at, ok := s.finals.min()
			if !ok || at >= cutoff {
				break
			}
			s.forget(e)
			delete(e.coll.jobs, e.name)
			e.coll.names = nil
			n++
			pause()
		}
	}
	if !p.HistoryBefore.IsZero() {
		cutoff := timeKey(p.HistoryBefore)
		for {
			e, oldest, ok := s.aged.min()
			if !ok || oldest >= cutoff {
				break
			}
			x := e.x
			before := len(x.hist)
			x.hist = slices.DeleteFunc(x.hist, func(h histItem) bool { return h.endTime().Before(p.HistoryBefore) })
			n += before - len(x.hist)
			s.historyChanged(e)
			pause()
		}
	}
	if p.PerJob != s.perJob {
		s.perJob = max(p.PerJob, 0)
		clear(s.over)
		if s.perJob > 0 {
			for _, c := range s.colls {
				for _, e := range c.jobs {
					if len(e.history()) > s.perJob {
						s.over[e] = struct{}{}
					}
				}
			}
		}
	}
	if s.perJob > 0 {
		over := make([]*entry, 0, len(s.over))
		for e := range s.over {
			over = append(over, e)
		}
		for _, e := range over {
			if e.flags&gone != 0 || len(e.history()) <= s.perJob {
				delete(s.over, e)
				continue
			}
			cut := len(e.x.hist) - s.perJob
			e.x.hist = slices.Delete(e.x.hist, 0, cut)
			n += cut
			s.historyChanged(e)
			pause()
		}
	}
	return n, nil
}

// timeKey returns t as Unix nanoseconds, clamped to the int64 range, with
// the zero Time least of all, so that keys compare as the instants do
// within the years 1678 to 2262.
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

// timeHeap is a binary min-heap of entries by a timeKey; each entry keeps
// its position (plus one) in x.pos[which]. Its items are kept in chunks of
// timeChunk (the first one grows up to that size), so that growing it
// neither copies nor leaves garbage. It holds the entries of a timeIndex
// whose keys came out of order.
type timeHeap struct {
	chunks [][]timeItem // each full size (len timeChunk) but the first
	n      int          // items in use
	which  int
}

type timeItem struct {
	at int64
	e  *entry
}

// timeChunk is the number of items in a chunk of a timeHeap (16 KiB).
const timeChunk = 1024

// item returns the item at i, which must be less than the room made.
func (h *timeHeap) item(i int) *timeItem { return &h.chunks[uint(i)/timeChunk][uint(i)%timeChunk] }

// grow makes room for an item at h.n.
func (h *timeHeap) grow() {
	k := uint(h.n) / timeChunk
	switch {
	case k < uint(len(h.chunks)) && uint(h.n)%timeChunk < uint(len(h.chunks[k])):
	case k < uint(len(h.chunks)): // the first chunk, not full size yet
		c := make([]timeItem, min(2*len(h.chunks[k]), timeChunk))
		copy(c, h.chunks[k])
		h.chunks[k] = c
	case k == 0:
		h.chunks = append(h.chunks, make([]timeItem, 64))
	default:
		h.chunks = append(h.chunks, make([]timeItem, timeChunk))
	}
}

// min returns the entry with the least key.
func (h *timeHeap) min() (*entry, int64, bool) {
	if h.n == 0 {
		return nil, 0, false
	}
	it := h.item(0)
	return it.e, it.at, true
}

// at returns e's key; e must be in h.
func (h *timeHeap) at(e *entry) int64 { return h.item(int(e.x.pos[h.which]) - 1).at }

// set puts e in h with key at, or moves it there.
func (h *timeHeap) set(e *entry, at int64) {
	x := e.ext()
	if x.pos[h.which] == 0 {
		h.grow()
		*h.item(h.n) = timeItem{at, e}
		h.n++
		x.pos[h.which] = int32(h.n)
		h.up(h.n - 1)
		return
	}
	i := int(x.pos[h.which]) - 1
	h.item(i).at = at
	if !h.down(i) {
		h.up(i)
	}
}

// remove takes e out of h, if it is there.
func (h *timeHeap) remove(e *entry) {
	if e.x == nil || e.x.pos[h.which] == 0 {
		return
	}
	i, last := int(e.x.pos[h.which])-1, h.n-1
	e.x.pos[h.which] = 0
	if i != last {
		it := h.item(i)
		*it = *h.item(last)
		it.e.x.pos[h.which] = int32(i + 1)
	}
	*h.item(last) = timeItem{}
	h.n = last
	if i != last && !h.down(i) {
		h.up(i)
	}
}

func (h *timeHeap) swap(i, j int) {
	a, b := h.item(i), h.item(j)
	*a, *b = *b, *a
	a.e.x.pos[h.which] = int32(i + 1)
	b.e.x.pos[h.which] = int32(j + 1)
}

func (h *timeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.item(i).at >= h.item(p).at {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves the item at i0 down as far as it goes and reports whether it
// moved.
func (h *timeHeap) down(i0 int) bool {
	i, n := i0, h.n
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.item(c+1).at < h.item(c).at {
			c++
		}
		if h.item(c).at >= h.item(i).at {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > i0
}

// dueHeap orders entries by ready time, then by creation order so that
// claims are deterministic. It is 4-ary and keeps each entry's sort key
// next to it, so that a claim among many jobs reads few cache lines.
type dueHeap []heapItem

type heapItem struct {
	ready int64
	seq   uint64
	e     *entry
}

func less(a, b *heapItem) bool {
	if a.ready != b.ready {
		return a.ready < b.ready
	}
	return a.seq < b.seq
}

// push adds e, ready at ready; which is the flag (inDue or inHeld) that
// says h holds it.
func (h *dueHeap) push(e *entry, ready int64, which uint16) {
	e.flags |= which
	*h = append(*h, heapItem{ready, e.seq, e})
	h.up(len(*h) - 1)
}

// remove takes out the entry at i.
func (h *dueHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	old[i].e.flags &^= inDue | inHeld
	if i != n {
		old[i] = old[n]
		old[i].e.idx = int32(i)
	}
	old[n] = heapItem{}
	*h = old[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
}

// fix sets the ready time of the entry at i and restores the order.
func (h *dueHeap) fix(i int, ready int64) {
	(*h)[i].ready = ready
	if !h.down(i) {
		h.up(i)
	}
}

func (h dueHeap) up(j int) {
	x := h[j]
	for j > 0 {
		p := (j - 1) / 4
		if !less(&x, &h[p]) {
			break
		}
		h[j] = h[p]
		h[j].e.idx = int32(j)
		j = p
	}
	h[j] = x
	x.e.idx = int32(j)
}

// down moves the entry at i0 down as far as it goes and reports whether
// it moved.
func (h dueHeap) down(i0 int) bool {
	x := h[i0]
	i, n := i0, len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if less(&h[k], &h[best]) {
				best = k
			}
		}
		if !less(&h[best], &x) {
			break
		}
		h[i] = h[best]
		h[i].e.idx = int32(i)
		i = best
	}
	h[i] = x
	x.e.idx = int32(i)
	return i > i0
}
