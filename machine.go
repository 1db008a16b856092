package scheduler

import (
	"sync"
	"time"
	"unicode/utf8"
)

// machine is the job state machine: pure functions of a record, its
// timing, a policy and an instant. They modify the record in place and
// return the history entries they produce.
type machine struct {
	misfire   MisfirePolicy
	threshold time.Duration
	// occ, when not nil, is where step starts a scheduled occurrence
	// rather than in a new allocation: a worker's, reused from attempt to
	// attempt. The caller moves it to the heap (see ownOccurrence) before
	// the record outlives the worker's use of it; most attempts end the
	// occurrence, and then nothing is moved.
	occ *Occurrence
}

// step brings r up to date at now: it postpones occurrences that came due
// while one is in progress, starts the next occurrence when none is in
// progress, and settles DueAt, the status and the final state. It returns
// a copy of the occurrence whose attempt is due now, with ok reporting
// whether there is one (by value: the run loop keeps it without a heap
// allocation).
func (m machine) step(r *JobRecord, t *Timing, now time.Time) (run Occurrence, ok bool, hist []HistoryEntry) {
	sc := &r.Schedule
	if r.State.Final() {
		sc.DueAt = time.Time{}
		return Occurrence{}, false, nil
	}
	if sc.Current != nil {
		hist = m.postpone(r, t, now, hist)
	}
	if sc.Current == nil {
		switch {
		case sc.Waiting != nil:
			w := sc.Waiting
			sc.Waiting = nil
			m.start(r, w, now)
		case !sc.RunRequested.IsZero() && !sc.RunRequested.After(now):
			sc.Occurrences++
			m.start(r, requested(sc), now)
		case r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now):
			if m.misfire == MisfireSkip && now.Sub(sc.NextOccurrence) > m.threshold {
				m.moveOn(r, t, now)
				break
			}
			exp := m.take(r, t, now)
			sc.Occurrences++
			o := m.occ
			if o == nil {
				o = new(Occurrence)
			}
			*o = Occurrence{Number: sc.Occurrences, Expected: exp}
			m.start(r, o, now)
		}
		// A run requested while an occurrence starts waits its turn.
		if sc.Current != nil {
			hist = m.postpone(r, t, now, hist)
		}
	}
	if c := sc.Current; c != nil && !c.At.After(now) {
		run, ok = *c, true
	}
	m.settle(r, now)
	return run, ok, hist
}

// start makes o the current occurrence, due at now.
func (m machine) start(r *JobRecord, o *Occurrence, now time.Time) {
	o.Tag = executionTag(r, o.Number)
	o.At = now
	o.Retry = 0
	o.ErrorAction = false
	r.Schedule.Current = o
}

// take consumes the due scheduled occurrence and returns its expected
// time, moving NextOccurrence on.
func (m machine) take(r *JobRecord, t *Timing, now time.Time) time.Time {
	exp := r.Schedule.NextOccurrence
	r.Schedule.Counted++
	m.moveOn(r, t, now)
	return exp
}

// moveOn moves NextOccurrence past the due one without counting it: to
// the next occurrence after it, or (except with runAll) after now, which
// drops the missed ones; to none when count is used up.
func (m machine) moveOn(r *JobRecord, t *Timing, now time.Time) {
	sc := &r.Schedule
	base := sc.NextOccurrence
	if m.misfire != MisfireRunAll && now.After(base) {
		base = now
	}
	sc.NextOccurrence = time.Time{}
	if c := t.Count(); c == 0 || sc.Counted < c {
		sc.NextOccurrence = t.Next(base)
	}
}

// postpone handles a scheduled occurrence or a requested run that is due
// while r.Schedule.Current is in progress.
func (m machine) postpone(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) []HistoryEntry {
	sc := &r.Schedule
	for r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now) {
		if sc.Waiting != nil {
			if m.misfire == MisfireRunAll {
				break
			}
			m.moveOn(r, t, now) // merged into the waiting one
			continue
		}
		exp := m.take(r, t, now)
		sc.Occurrences++
		sc.Waiting = &Occurrence{Number: sc.Occurrences, Expected: exp}
		hist = append(hist, postponed(r, sc.Waiting, now))
	}
	if !sc.RunRequested.IsZero() && !sc.RunRequested.After(now) && sc.Waiting == nil {
		sc.Occurrences++
		sc.Waiting = requested(sc)
		hist = append(hist, postponed(r, sc.Waiting, now))
	}
	return hist
}

// requested returns the occurrence of the run RunJob requested, numbered
// sc.Occurrences, and clears the request.
func requested(sc *JobSchedule) *Occurrence {
	o := &Occurrence{Number: sc.Occurrences, Expected: sc.RunRequested, Manual: true, Trace: sc.RunTrace, TraceState: sc.RunTraceState}
	sc.RunRequested, sc.RunTrace, sc.RunTraceState = time.Time{}, "", ""
	return o
}

func postponed(r *JobRecord, o *Occurrence, now time.Time) HistoryEntry {
	return HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusPostponed,
		ExpectedExecutionTime: o.Expected, StartTime: now, EndTime: now, RepeatCount: o.Number,
		Message: "postponed: the previous occurrence is still in progress",
	}
}

// settle computes DueAt, the status's NextExecutionTime and the final
// state, and marks r as written at now (retention of final jobs counts
// from their last write, so from the run that ended them).
func (m machine) settle(r *JobRecord, now time.Time) { m.settleIn(r, now, nil) }

// settleIn is settle keeping NextExecutionTime, when it has one, in next
// (nil: a new instant).
func (m machine) settleIn(r *JobRecord, now time.Time, next *time.Time) {
	r.Updated = now
	sc := &r.Schedule
	enabled := r.State == JobEnabled
	if r.State.Final() {
		sc.DueAt = time.Time{}
		r.Status.NextExecutionTime = nil
		return
	}
	if enabled && sc.Current == nil && sc.Waiting == nil && sc.RunRequested.IsZero() && sc.NextOccurrence.IsZero() {
		r.State = JobCompleted
		if sc.LastFailed {
			r.State = JobFaulted
		}
		sc.DueAt = time.Time{}
		r.Status.NextExecutionTime = nil
		return
	}
	var due time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (due.IsZero() || t.Before(due)) {
			due = t
		}
	}
	if sc.Current != nil {
		earliest(sc.Current.At)
	} else if sc.Waiting != nil {
		earliest(now)
	}
	if enabled && (sc.Waiting == nil || m.misfire != MisfireRunAll) {
		earliest(sc.NextOccurrence)
	}
	if sc.Current == nil || sc.Waiting == nil {
		earliest(sc.RunRequested)
	}
	sc.DueAt = due
	r.Status.NextExecutionTime = nil
	if enabled && !sc.NextOccurrence.IsZero() {
		if next == nil {
			next = new(time.Time)
		}
		*next = sc.NextOccurrence
		r.Status.NextExecutionTime = next
	}
}

// replay applies the claim-time step at claimed to a record re-read after
// an API write, and adopts o as its current occurrence when the step starts
// the same one (same number, expected time, action and retry).
func (m machine) replay(r *JobRecord, t *Timing, o *Occurrence, claimed time.Time) {
	m.step(r, t, claimed)
	c := r.Schedule.Current
	if c != nil && c.Number == o.Number && c.Expected.Equal(o.Expected) && c.ErrorAction == o.ErrorAction && c.Retry == o.Retry {
		c.Tag = o.Tag
	}
}

// complete applies the outcome of an attempt of occurrence o to r and
// returns its history entry. When r's current occurrence is no longer o
// (the job was replaced, disabled or changed meanwhile), only the counters
// and the history entry are recorded.
func (m machine) complete(r *JobRecord, o *Occurrence, res outcome) HistoryEntry {
	h := HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusCompleted,
		ExpectedExecutionTime: o.Expected, StartTime: res.start, EndTime: res.end,
		RetryCount: o.Retry, RepeatCount: o.Number, Message: truncate(res.message, MaxHistoryMessage),
		ExecutionTag: o.Tag,
	}
	if o.ErrorAction {
		h.ActionName = ErrorAction
	}
	failed := res.err != nil
	if failed {
		h.Status = StatusFailed
	}
	if !o.ErrorAction {
		r.Status.ExecutionCount++
		if failed {
			r.Status.FailureCount++
		}
		r.Status.LastExecutionTime = new(res.start)
	}
	c := r.Schedule.Current
	if c == nil || c.Tag != o.Tag || c.ErrorAction != o.ErrorAction || c.Retry != o.Retry {
		return h
	}
	if c.Trace == "" {
		c.Trace, c.TraceState = res.trace, res.traceState
	}
	policy := r.Job.Action.RetryPolicy
	if c.ErrorAction && r.Job.Action.ErrorAction != nil && r.Job.Action.ErrorAction.RetryPolicy != nil {
		policy = r.Job.Action.ErrorAction.RetryPolicy
	}
	switch {
	case !failed:
		r.Schedule.Current = nil
		r.Schedule.LastFailed = c.ErrorAction
	case c.Retry < policy.Retries():
		c.Retry++
		c.At = res.end.Add(policy.Delay(c.Retry, c.Tag))
	case !c.ErrorAction:
		r.Status.FaultedCount++
		h.Faulted = true
		if r.Job.Action.ErrorAction != nil {
			c.ErrorAction = true
			c.Retry = 0
			c.At = res.end
		} else {
			r.Schedule.Current = nil
			r.Schedule.LastFailed = true
		}
	default:
		r.Schedule.Current = nil
		r.Schedule.LastFailed = true
	}
	return h
}

// truncate cuts s to at most n bytes at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (s *Scheduler) machine() machine {
	return machine{misfire: s.cfg.Misfire, threshold: s.cfg.MisfireThreshold}
}

// ownOccurrence gives r a copy of its current occurrence when that is
// buf, a worker's buffer (see machine.occ), so that r no longer refers to
// it.
func ownOccurrence(r *JobRecord, buf *Occurrence) {
	if buf != nil && r.Schedule.Current == buf {
		o := *buf
		r.Schedule.Current = &o
	}
}

// applyOutcome applies the outcome res of attempt o to work and returns
// the history to record with it, appended to buf: hist, the attempt's
// entry, and the entries of what comes due meanwhile (only when timed,
// that is when t is usable).
func (m machine) applyOutcome(work *JobRecord, t *Timing, timed bool, o *Occurrence, res outcome, hist, buf []HistoryEntry) []HistoryEntry {
	// Occurrences that came due during the attempt are postponed before
	// the attempt's outcome can end the occurrence.
	var pre []HistoryEntry
	if timed && work.Schedule.Current != nil {
		pre = m.postpone(work, t, res.end, nil)
	}
	h := m.complete(work, o, res)
	all := append(append(buf, hist...), h)
	all = append(all, pre...)
	if timed {
		_, _, more := m.step(work, t, res.end)
		all = append(all, more...)
	}
	return all
}

// timingCache keeps compiled timings by job, valid while the job's ETag and
// anchor are unchanged (every API write changes the ETag).
type timingCache struct {
	mu sync.Mutex
	m  map[timingKey]cachedTiming
}

type timingKey struct{ collection, name string }

type cachedTiming struct {
	etag   string
	anchor time.Time
	t      *Timing
}

// maxCachedTimings bounds the cache; it is emptied when full.
const maxCachedTimings = 1 << 16

// get returns the timing of r's job. The timing of a job without
// recurrence is cheaper to make than to look up.
func (c *timingCache) get(r *JobRecord) (*Timing, error) {
	if r.Job.Recurrence == nil {
		return r.Job.Timing(r.Schedule.Anchor)
	}
	key := timingKey{r.Collection, r.Name}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.etag == r.ETag && e.anchor.Equal(r.Schedule.Anchor) {
		return e.t, nil
	}
	t, err := r.Job.Timing(r.Schedule.Anchor)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTimings {
		c.m = make(map[timingKey]cachedTiming)
	}
	c.m[key] = cachedTiming{r.ETag, r.Schedule.Anchor, t}
	c.mu.Unlock()
	return t, nil
}
