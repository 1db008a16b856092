package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

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

// advance brings r up to date at now: it postpones occurrences that came
// due while one is in progress, starts the next occurrence when none is in
// progress, and settles DueAt, the status and the final state. It returns
// the occurrence whose attempt is due now, or nil.
func (m machine) advance(r *JobRecord, t *Timing, now time.Time) (run *Occurrence, hist []HistoryEntry) {
	o, ok, hist := m.step(r, t, now)
	if ok {
		run = &o
	}
	return run, hist
}

// step is advance returning the due occurrence's copy by value, with ok
// reporting whether there is one: the run loop keeps it without a heap
// allocation.
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

// outcome is the result of one attempt.
type outcome struct {
	start, end time.Time
	err        error  // nil: the attempt succeeded
	message    string // for history
	// ctx is the attempt's context as Config.Observer returned it (it
	// may carry the attempt's span), for log records about the attempt;
	// nil when nothing observes the Scheduler.
	ctx context.Context
	// trace and traceState are the W3C trace context of the attempt's
	// span when the occurrence had none yet: its retries and error
	// action join it.
	trace, traceState string
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

// runDue is one step of the loop at now: it starts retention when due,
// claims the jobs that are due, hands each to a worker (which records what
// needs no attempt, or runs the attempt), and returns when the loop should
// look again.
func (s *Scheduler) runDue(ctx context.Context, now time.Time) time.Time {
	if !now.Before(s.nextPrune) && s.pruning.CompareAndSwap(false, true) {
		s.nextPrune = now.Add(pruneInterval)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.pruning.Store(false)
			s.prune(ctx, now)
		}()
	}
	wakeBy := now.Add(s.cfg.PollInterval)
	free := s.cfg.MaxConcurrency - int(s.inFlight.Load())
	if free == 0 {
		return wakeBy // the next job that ends wakes the loop
	}
	limit := min(free, claimBatch)
	claims, err := s.runStore.ClaimDue(ctx, now, s.cfg.InstanceID, now.Add(s.cfg.LeaseDuration), limit)
	if err != nil {
		s.storeFailed(ctx, "claim due jobs", err, now)
		return minTime(wakeBy, now.Add(time.Second))
	}
	s.storeAnswered(now)
	s.inFlight.Add(int64(len(claims))) // at most free: the loop alone adds
	s.wg.Add(len(claims))
	if s.pool {
		s.work.push(claims, now)
	} else {
		for _, r := range claims {
			go s.process(s.execCtx, task{r, now}, nil) // runDue driven without Start, in tests
		}
	}
	if len(claims) == limit {
		return now // there may be more
	}
	next, err := s.runStore.NextDue(ctx)
	if err != nil {
		s.storeFailed(ctx, "next due job", err, now)
		return minTime(wakeBy, now.Add(time.Second))
	}
	if next.IsZero() {
		return wakeBy
	}
	return minTime(wakeBy, next)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// worker processes claimed jobs until s.work is closed. Config.MaxConcurrency
// workers run from Start to Stop; reusing them spares a goroutine (and its
// stack growth) per attempt.
func (s *Scheduler) worker() {
	defer s.workers.Done()
	// A context per worker, so that the attempts' contexts do not all
	// register with one parent (a lock every attempt would contend on).
	ctx, cancel := context.WithCancel(s.execCtx)
	defer cancel()
	w := &workerState{lease: s.leases.addSlot()}
	defer s.leases.removeSlot(w.lease)
	for {
		t, ok := s.work.take()
		if !ok {
			return
		}
		s.process(ctx, t, w)
	}
}

// workerState is what a worker reuses from attempt to attempt.
type workerState struct {
	occ   Occurrence // see machine.occ
	lease *leaseSlot
}

// process advances a claimed job and runs its attempt, or records the
// bookkeeping when no attempt is due. It holds a slot of the semaphore.
// w is the calling worker's state, nil when no worker calls; no record
// refers to w.occ once process returns.
func (s *Scheduler) process(execCtx context.Context, tk task, w *workerState) {
	r, now := tk.r, tk.now
	var occ *Occurrence
	var slot *leaseSlot
	if w != nil {
		occ, slot = &w.occ, w.lease
	}
	handedOff := false // the slot goes with the outcome to the batch
	defer func() {
		if !handedOff {
			s.release()
			s.notify() // the job may be due again, or the loop may wait for a slot
		}
	}()
	if s.retries.stale(r) {
		// The outcome of its last attempt is being recorded again, or
		// was recorded over this claim (see recordAgain).
		return
	}
	ctx := context.Background()
	m := s.machine()
	m.occ = occ
	var info attemptInfo
	if prev := r.PreviousLeaseOwner; prev != "" {
		r.PreviousLeaseOwner = ""
		if prev != s.cfg.InstanceID {
			info.prevOwner = prev
			if obs := s.cfg.Observer; obs != nil {
				obs.TookOver(Takeover{Instance: s.cfg.InstanceID, PreviousOwner: prev, Collection: r.Collection, Job: r.Name})
			}
			s.log.Info("took over a job whose lease expired", "job", r.Name, "collection", r.Collection, "previous_owner", prev)
		}
	}
	for range 5 {
		t, err := s.timings.get(r)
		if err != nil {
			s.log.Error("job timing", "job", r.Name, "collection", r.Collection, "err", err)
			r.Schedule.DueAt = time.Time{}
			s.record(r, nil)
			return
		}
		// r is this goroutine's own copy: advance may change it in place.
		next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
		run, due, hist := m.step(r, t, now)
		miss := s.passedOver(r, t, next0, counted0, m.misfire, now)
		if due {
			// A catch-up occurrence that absorbed the missed ones shows
			// them on its attempt's span.
			absorbed := miss != nil && run.Retry == 0 && !run.ErrorAction && run.Expected.Equal(next0)
			if absorbed {
				info.missed = miss
			}
			s.missed(miss, absorbed)
			handedOff = s.attempt(execCtx, r, t, &run, hist, now, info, occ, slot)
			return
		}
		ownOccurrence(r, occ)
		err = s.runStore.Record(ctx, s.cfg.InstanceID, r, hist)
		if err == nil {
			s.emit(r.Job, hist)
			s.missed(miss, false)
			return
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(ctx, r, err)
			return
		}
		fresh, gerr := s.getJob(r.Collection, r.Name)
		if gerr != nil {
			s.recordFailed(ctx, r, gerr)
			return
		}
		r = fresh
	}
	s.log.Error("record job: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// release gives back the slot of a claimed job whose work is over.
func (s *Scheduler) release() {
	s.inFlight.Add(-1)
	s.wg.Done()
}

// record stores r with hist and releases the lease, logging failures.
func (s *Scheduler) record(r *JobRecord, hist []HistoryEntry) {
	err := s.runStore.Record(context.Background(), s.cfg.InstanceID, r, hist)
	if err != nil {
		s.recordFailed(context.Background(), r, err)
		return
	}
	s.emit(r.Job, hist)
}

// getJob reads a job for the run loop.
func (s *Scheduler) getJob(collection, name string) (*JobRecord, error) {
	return s.runStore.GetJob(context.Background(), collection, name)
}

// recordFailed logs the failure to record the outcome of work on r; ctx
// carries the attempt's span, if any.
func (s *Scheduler) recordFailed(ctx context.Context, r *JobRecord, err error) {
	if errors.Is(err, ErrNotFound) {
		return // deleted meanwhile
	}
	s.log.ErrorContext(ctx, "record job outcome", "job", r.Name, "collection", r.Collection, "err", err)
}

// spanContext returns the context of the attempt of res, which carries
// its span when Config.Observer traces it, for log records about the
// attempt.
func (res *outcome) spanContext() context.Context {
	if res.ctx == nil {
		return context.Background()
	}
	return res.ctx
}

// emit reports stored history entries of a job whose definition is def:
// to Config.Observer and to Config.OnHistory.
func (s *Scheduler) emit(def *Job, hist []HistoryEntry) {
	if obs := s.cfg.Observer; obs != nil {
		obs.HistoryStored(StoredHistory{Instance: s.cfg.InstanceID, Job: def, Entries: hist})
	}
	if s.cfg.OnHistory == nil {
		return
	}
	for _, h := range hist {
		s.cfg.OnHistory(h)
	}
}

// attempt runs one attempt of occurrence o of the claimed job r, then
// records its outcome together with hist. When the store is a
// [BatchRecorder], the outcome joins the batch of outcomes to record and
// attempt returns true: the job's slot is released once it is recorded.
//
// The store still holds the job as claimed: the start of the occurrence is
// written only with its outcome. When an API write changed the job
// meanwhile (ErrConflict), the claim-time step is replayed on the fresh
// record at claimed, so that a run requested or a patch made during the
// attempt is kept and the attempt still counts for its occurrence.
//
// occ is the worker's occurrence buffer that r's current occurrence may
// be (see machine.occ); r no longer refers to it when attempt records r.
// slot is the worker's lease slot, nil when no worker runs the attempt.
func (s *Scheduler) attempt(execCtx context.Context, r *JobRecord, t *Timing, o *Occurrence, hist []HistoryEntry, claimed time.Time, info attemptInfo, occ *Occurrence, slot *leaseSlot) (handedOff bool) {
	res := s.execute(execCtx, r, o, info, slot)
	if s.batch != nil {
		p := pendingOutcome{r: r, def: r.Job, t: *t, o: *o, res: res, hist: hist, claimed: claimed}
		p.buf = histBufs.Get().(*[]HistoryEntry)
		m := s.machine()
		next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
		p.all = m.applyOutcome(r, &p.t, true, &p.o, res, hist, (*p.buf)[:0])
		ownOccurrence(r, occ) // the occurrence goes on: a retry or the error action
		p.miss = s.passedOver(r, &p.t, next0, counted0, m.misfire, res.end)
		s.enqueue(p)
		return true
	}
	ownOccurrence(r, occ)
	s.recordOutcome(r, t, o, res, hist, claimed, false)
	return false
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

// recordOutcome records the outcome res of attempt o on the claimed job r,
// re-reading the job and replaying the claim on a conflict; with reread it
// starts with a fresh read (a first write conflicted already).
func (s *Scheduler) recordOutcome(r *JobRecord, t *Timing, o *Occurrence, res outcome, hist []HistoryEntry, claimed time.Time, reread bool) {
	m := s.machine()
	ctx := context.Background()
	var terr error
	retrying := false // the outcome is being recorded again (see recordAgain)
	defer func() {
		if retrying {
			s.retries.done(r.ID())
		}
	}()
	for range 5 {
		if reread {
			fresh, gerr := s.getJob(r.Collection, r.Name)
			if gerr != nil {
				s.recordFailed(res.spanContext(), r, gerr)
				return
			}
			s.retries.noteFresh(fresh, s.cfg.InstanceID)
			r = fresh
			if t, terr = s.timings.get(r); terr == nil {
				m.replay(r, t, o, claimed)
			}
		}
		reread = true
		next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
		all := m.applyOutcome(r, t, terr == nil, o, res, hist, nil)
		var miss *Misfire
		if terr == nil {
			miss = s.passedOver(r, t, next0, counted0, m.misfire, res.end)
		}
		err := s.runStore.Record(ctx, s.cfg.InstanceID, r, all)
		if transient(err) {
			if !retrying {
				retrying = true
				s.retries.add(r.ID())
			}
			// recordAgain logs what it could not record.
			if err = s.recordAgain(res.spanContext(), r, all, err); err != nil && !errors.Is(err, ErrConflict) {
				return
			}
		}
		if err == nil {
			s.emit(r.Job, all)
			s.missed(miss, false)
			return
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(res.spanContext(), r, err)
			return
		}
	}
	s.log.ErrorContext(res.spanContext(), "record job outcome: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// pendingOutcome is an attempt's outcome waiting to be recorded: the
// record and history to store, and what recordOutcome needs when that
// conflicts.
type pendingOutcome struct {
	r       *JobRecord
	def     *Job // r.Job, which r may no longer hold once recorded
	miss    *Misfire
	all     []HistoryEntry
	buf     *[]HistoryEntry // from histBufs, holding all once recorded
	t       Timing          // copies, so that an outcome costs no allocation
	o       Occurrence      // of them
	res     outcome
	hist    []HistoryEntry
	claimed time.Time
}

// histBufs recycles the history slices of batched outcomes, which a
// BatchRecorder copies.
var histBufs = sync.Pool{New: func() any { return new([]HistoryEntry) }}

// outcomeBatch gathers outcomes for a [BatchRecorder]. The worker that
// adds an outcome while no flush is under way becomes the flusher: it
// records its own outcome and every one added meanwhile, in batches of at
// most recordBatch, until none is left. Attempts that end together thus
// share a store call, and no goroutine waits for its turn.
type outcomeBatch struct {
	mu       sync.Mutex
	pending  []pendingOutcome
	spare    []pendingOutcome // the flusher's previous slice, for reuse
	flushing bool
	reqs     []RecordRequest // the flusher's
}

// retryOutcome records p again on its own goroutine, after a fresh read.
// (A function of its own, so that p is copied to the heap only here.)
func (s *Scheduler) retryOutcome(p pendingOutcome) {
	go func() {
		defer s.release()
		defer s.notify()
		s.recordOutcome(p.r, &p.t, &p.o, p.res, p.hist, p.claimed, true)
	}()
}

var errShortBatch = errors.New("scheduler: the store's RecordBatch returned fewer errors than records")

// recordBatch is the most outcomes recorded in one store call.
const recordBatch = 256

// enqueue adds p to the outcomes to record, and records them all unless
// another worker does so already.
func (s *Scheduler) enqueue(p pendingOutcome) {
	b := &s.outcomes
	b.mu.Lock()
	b.pending = append(b.pending, p)
	if b.flushing {
		b.mu.Unlock()
		return
	}
	b.flushing = true
	for len(b.pending) > 0 {
		all := b.pending
		b.pending = b.spare
		b.mu.Unlock()
		for rest := all; len(rest) > 0; {
			n := min(len(rest), recordBatch)
			s.flush(rest[:n])
			rest = rest[n:]
		}
		clear(all) // drop the references
		b.mu.Lock()
		b.spare = all[:0]
	}
	b.flushing = false
	b.mu.Unlock()
}

// flush records batch in one store call, then releases the jobs' slots;
// outcomes that conflicted with an API write are recorded again, each on
// its own goroutine, after a fresh read.
func (s *Scheduler) flush(batch []pendingOutcome) {
	b := &s.outcomes
	reqs := b.reqs[:0]
	for _, p := range batch {
		reqs = append(reqs, RecordRequest{Job: p.r, History: p.all})
	}
	errs := s.batch.RecordBatch(context.Background(), s.cfg.InstanceID, reqs)
	clear(reqs)
	b.reqs = reqs[:0]
	for i, p := range batch {
		err := errShortBatch
		if i < len(errs) {
			err = errs[i]
		}
		switch {
		case err == nil:
			s.emit(p.def, p.all)
			s.missed(p.miss, false)
			clear(p.all) // the store copied them
			*p.buf = p.all[:0]
			histBufs.Put(p.buf)
			s.release()
		case errors.Is(err, ErrConflict):
			s.retryOutcome(p)
		case transient(err):
			s.recordPendingAgain(p, err)
		default:
			s.recordFailed(p.res.spanContext(), p.r, err)
			s.release()
		}
	}
	s.notify() // the jobs may be due again, or the loop may wait for slots
}

// The causes of attempts that failed without the executor's error.
var (
	errAttemptTimeout   = errors.New("attempt timed out")
	errExecutorPanicked = errors.New("executor panicked")
)

// execute carries out the attempt and reports its outcome; it never panics.
// info describes the claim that started it, for its span; slot is the
// lease slot of the worker that runs it, if any.
func (s *Scheduler) execute(execCtx context.Context, r *JobRecord, o *Occurrence, info attemptInfo, slot *leaseSlot) (res outcome) {
	act := &r.Job.Action
	if o.ErrorAction {
		act = r.Job.Action.ErrorAction
	}
	res.start = time.Now()
	if o.Trace != "" {
		// Passed on by the executors, traced or not.
		execCtx = tracectx.WithRemote(execCtx, o.Trace, o.TraceState)
	}
	obs := s.cfg.Observer
	if obs != nil {
		execCtx = obs.StartAttempt(execCtx, s.attemptStart(r, o, act, res.start, info))
	}
	defer func() {
		if p := recover(); p != nil {
			res.err = fmt.Errorf("%w: %v", errExecutorPanicked, p)
			res.message = res.err.Error()
		}
		if res.end.IsZero() { // the executor panicked, or did not run
			res.end = time.Now()
		}
		if obs != nil {
			obs.EndAttempt(execCtx, attemptEnd(&res))
			res.ctx = execCtx
			if o.Trace == "" {
				res.trace, res.traceState = tracectx.Parent(execCtx)
			}
		}
	}()
	if act == nil {
		res.err = errors.New("the job has no error action")
		res.message = res.err.Error()
		return res
	}
	exec, ok := s.executor(act.Type)
	if !ok {
		res.err = fmt.Errorf("action type %q %s", act.Type, action.NoExecutor(act.Type))
		res.message = res.err.Error()
		return res
	}
	path := "action"
	if o.ErrorAction {
		path = "action.errorAction"
	}
	act, err := s.openAction(act, r.Collection, r.Name, path)
	if err != nil {
		res.err = err
		res.message = err.Error()
		return res
	}
	jobID, requestID := idAndUUID(r)
	st := &attemptState{req: action.Request{
		Action:          act,
		JobID:           jobID,
		CollectionID:    r.Collection,
		ExecutionTag:    o.Tag,
		ClientRequestID: requestID,
		ExpectedTime:    o.Expected,
		Occurrence:      o.Number,
		Retry:           o.Retry,
		ErrorAction:     o.ErrorAction,
	}}
	req, ctx := &st.req, &st.ctx
	ctx.init(execCtx, res.start.Add(s.cfg.ActionTimeout))
	defer ctx.stop()
	s.holdLease(r, res.start, slot)
	defer s.dropLease(r, slot)
	out, err := exec.Execute(ctx, req)
	res.end = time.Now()
	res.err = err
	if out != nil && out.Message != "" {
		res.message = out.Message
		if err != nil && !mentions(out.Message, err) {
			res.message += ": " + err.Error()
		}
	} else if err != nil {
		res.message = err.Error()
	}
	if err == nil && ctx.errAt(res.end) != nil {
		res.err = fmt.Errorf("%w after %s", errAttemptTimeout, s.cfg.ActionTimeout)
		res.message = res.err.Error()
	}
	return res
}

// attemptContext is an attempt's context: its parent's values and
// cancellation, with a deadline. It behaves as context.WithDeadline's
// context, cancelled when the attempt ends, but makes that context (and its
// timer) only when something asks for Done or Value: most quick executors
// never do, and they then cost no timer.
type attemptContext struct {
	parent   context.Context
	deadline time.Time
	mu       sync.Mutex
	ctx      context.Context // nil until needed
	cancel   context.CancelFunc
	stopped  bool // the attempt ended
}

func newAttemptContext(parent context.Context, deadline time.Time) *attemptContext {
	c := new(attemptContext)
	c.init(parent, deadline)
	return c
}

// init readies c, which must be new, for an attempt under parent that
// must end by deadline.
func (c *attemptContext) init(parent context.Context, deadline time.Time) {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.parent, c.deadline = parent, deadline
}

// attemptState is what an attempt hands its executor, its context and its
// request, in one allocation.
type attemptState struct {
	ctx attemptContext
	req action.Request
}

// get returns the underlying context, making it on first use.
func (c *attemptContext) get() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
		if c.stopped {
			c.cancel()
		}
	}
	return c.ctx
}

// stop cancels the context: the attempt is over.
func (c *attemptContext) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cancel != nil {
		c.cancel()
	}
}

func (c *attemptContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *attemptContext) Done() <-chan struct{}       { return c.get().Done() }
func (c *attemptContext) Value(key any) any           { return c.get().Value(key) }
func (c *attemptContext) String() string              { return "scheduler.attemptContext" }

func (c *attemptContext) Err() error { return c.errAt(time.Now()) }

// errAt is Err at now.
func (c *attemptContext) errAt(now time.Time) error {
	c.mu.Lock()
	ctx, stopped := c.ctx, c.stopped
	c.mu.Unlock()
	switch {
	case ctx != nil:
		return ctx.Err()
	case c.parent.Err() != nil:
		return c.parent.Err()
	case !now.Before(c.deadline):
		return context.DeadlineExceeded
	case stopped:
		return context.Canceled
	}
	return nil
}

// leaseKeeper extends the leases of the jobs whose attempts are running:
// one timer for all of them, armed only while there are some, rather than
// one per attempt. A worker's attempts hold their leases in the worker's
// own slot, so that attempts on different workers share no lock; other
// attempts (and outcomes being recorded again) in held.
type leaseKeeper struct {
	mu    sync.Mutex
	held  map[*JobRecord]heldLease // by the attempt's record
	slots []*leaseSlot             // the workers'
	armed atomic.Bool              // the timer runs or will run extendLeases
}

// leaseSlot is the lease of the attempt that a worker runs, if any.
type leaseSlot struct {
	mu sync.Mutex
	r  *JobRecord // the attempt's record (compared, not read); nil: none
	heldLease
}

// addSlot registers and returns a worker's slot; removeSlot undoes it.
func (k *leaseKeeper) addSlot() *leaseSlot {
	sl := new(leaseSlot)
	k.mu.Lock()
	k.slots = append(k.slots, sl)
	k.mu.Unlock()
	return sl
}

func (k *leaseKeeper) removeSlot(sl *leaseSlot) {
	k.mu.Lock()
	if i := slices.Index(k.slots, sl); i >= 0 {
		k.slots = slices.Delete(k.slots, i, i+1)
	}
	k.mu.Unlock()
}

// holds reports whether the lease on job collection/name held for record
// r is still held. k.mu is held.
func (k *leaseKeeper) holds(r *JobRecord, collection, name string) bool {
	if h, ok := k.held[r]; ok && h.collection == collection && h.name == name {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r == r && sl.collection == collection && sl.name == name
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// active reports whether any lease is held. k.mu is held.
func (k *leaseKeeper) active() bool {
	if len(k.held) > 0 {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r != nil
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// heldLease is a lease that leaseKeeper extends. It names the job itself:
// once its attempt ended, the record may be the store's again (see
// [BatchRecorder]), so an extension under way must not read it.
type heldLease struct {
	at               time.Time // when to extend it
	collection, name string
}

// holdLease keeps the lease on r from start, when its attempt starts,
// until dropLease: it is extended about every third of
// Config.LeaseDuration, also past the attempt's timeout when an executor
// ignores its context. slot is the worker's that runs the attempt, nil
// when none does.
func (s *Scheduler) holdLease(r *JobRecord, start time.Time, slot *leaseSlot) {
	k := &s.leases
	every := s.cfg.LeaseDuration / 3
	h := heldLease{start.Add(every), r.Collection, r.Name}
	if slot != nil {
		slot.mu.Lock()
		slot.r, slot.heldLease = r, h
		slot.mu.Unlock()
	} else {
		k.mu.Lock()
		if k.held == nil {
			k.held = make(map[*JobRecord]heldLease)
		}
		k.held[r] = h
		k.mu.Unlock()
	}
	// After the lease is in place: extendLeases disarms before it
	// looks for leases, so one of the two sees the other.
	if !k.armed.Load() && k.armed.CompareAndSwap(false, true) {
		time.AfterFunc(every/2, s.extendLeases)
	}
}

// dropLease ends holdLease.
func (s *Scheduler) dropLease(r *JobRecord, slot *leaseSlot) {
	if slot != nil {
		slot.mu.Lock()
		slot.r, slot.heldLease = nil, heldLease{}
		slot.mu.Unlock()
		return
	}
	k := &s.leases
	k.mu.Lock()
	delete(k.held, r)
	k.mu.Unlock()
}

// extendLeases runs every sixth of Config.LeaseDuration while attempts
// run. It extends the leases due for it within half a period, so that each
// is extended at most a third of the lease after it was taken or last
// extended, two thirds before it would expire.
func (s *Scheduler) extendLeases() {
	k := &s.leases
	every := s.cfg.LeaseDuration / 3
	now := time.Now()
	type dueLease struct {
		r *JobRecord // compared, not read
		heldLease
	}
	var due []dueLease
	k.mu.Lock()
	for r, h := range k.held {
		if !now.Before(h.at.Add(-every / 2)) {
			h.at = now.Add(every)
			k.held[r] = h
			due = append(due, dueLease{r, h})
		}
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		if sl.r != nil && !now.Before(sl.at.Add(-every/2)) {
			sl.at = now.Add(every)
			due = append(due, dueLease{sl.r, sl.heldLease})
		}
		sl.mu.Unlock()
	}
	k.mu.Unlock()
	// The extensions run side by side, so that a pass over many leases
	// does not take longer than the leases have left when the store is
	// slow; each lease runs a LeaseDuration from its own call.
	var wg sync.WaitGroup
	slots := make(chan struct{}, extendParallel)
	for _, d := range due {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s.extendLease(d.r, d.collection, d.name)
		})
	}
	wg.Wait()
	k.armed.Store(false)
	k.mu.Lock()
	active := k.active()
	k.mu.Unlock()
	if active && k.armed.CompareAndSwap(false, true) {
		time.AfterFunc(every/2, s.extendLeases)
	}
}

// extendParallel is the most ExtendLease calls extendLeases makes at once.
const extendParallel = 16

// extendLease extends the lease on job collection/name, whose attempt
// on record r runs, by a LeaseDuration from now.
func (s *Scheduler) extendLease(r *JobRecord, collection, name string) {
	k := &s.leases
	err := s.runStore.ExtendLease(context.Background(), collection, name, s.cfg.InstanceID, time.Now().Add(s.cfg.LeaseDuration))
	if err == nil {
		return
	}
	k.mu.Lock()
	running := k.holds(r, collection, name)
	k.mu.Unlock()
	if down, _ := s.health.down(); running && down && transient(err) {
		// The loop has logged the outage already.
		s.log.Debug("extend lease", "job", name, "collection", collection, "err", err)
	} else if running { // else the attempt ended and its outcome released the lease
		s.log.Warn("extend lease", "job", name, "collection", collection, "err", err)
	}
}

// prune applies the retention limits.
func (s *Scheduler) prune(ctx context.Context, now time.Time) {
	n, err := s.runStore.Prune(ctx, PruneRequest{
		HistoryBefore:   now.Add(-s.cfg.HistoryRetention),
		PerJob:          s.cfg.HistoryPerJob,
		FinalJobsBefore: now.Add(-s.cfg.FinalJobRetention),
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("apply retention", "err", err)
		}
		return
	}
	if n > 0 {
		if obs := s.cfg.Observer; obs != nil {
			obs.Pruned(n)
		}
		s.log.Debug("applied retention", "deleted", n)
	}
}

// mentions reports whether msg already gives the text of err or of an
// error err wraps (the HTTP executor's message quotes the connection error
// that its *RequestError wraps, for instance), so that history does not
// say it twice.
func mentions(msg string, err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if text := e.Error(); text != "" && strings.Contains(msg, text) {
			return true
		}
	}
	return false
}
