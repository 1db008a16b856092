package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
)

// # Retries
//
// An attempt fails when its executor returns an error, panics, or outlives
// Config.ActionTimeout. A failed attempt of the main action is retried per
// the action's retryPolicy (omitted: Fixed, 4 retries, 30 s apart; None:
// no retry), each retry waiting retryInterval after the previous attempt
// ended. When the last retry fails, the occurrence is faulted:
// faultedCount increases and the errorAction, if any, runs at once, with
// its own retryPolicy or else the main action's. executionCount and
// failureCount count attempts of the main action, retries included;
// errorAction attempts appear in history only. An occurrence whose main
// action failed counts as failed even when its errorAction succeeds.
//
// A job ends when it has no further occurrence (it ran once, or reached
// count or endTime): Completed when its last occurrence succeeded, Faulted
// when it failed. Both states are final; the job can still be deleted, or
// replaced with PutJob.
//
// Only one occurrence of a job is in progress at a time. An occurrence that
// comes due while the previous one is running or waiting for a retry gets
// a Postponed history entry and starts when the previous one ends; at most
// one waits, and with the runOnce and skip misfire policies further
// occurrences that come due meanwhile are merged into the waiting one (they
// do not run and do not count toward count). With runAll they wait their
// turn.

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

func (c *timingCache) get(r *JobRecord) (*Timing, error) {
	if r.Job.Recurrence == nil {
		return r.Job.Timing(r.Schedule.Anchor) // cheaper than the cache
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
}

// advance brings r up to date at now: it postpones occurrences that came
// due while one is in progress, starts the next occurrence when none is in
// progress, and settles DueAt, the status and the final state. It returns
// the occurrence whose attempt is due now, or nil.
func (m machine) advance(r *JobRecord, t *Timing, now time.Time) (run *Occurrence, hist []HistoryEntry) {
	sc := &r.Schedule
	if r.State.Final() {
		sc.DueAt = time.Time{}
		return nil, nil
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
			m.start(r, &Occurrence{Number: sc.Occurrences, Expected: sc.RunRequested, Manual: true}, now)
			sc.RunRequested = time.Time{}
		case r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now):
			if m.misfire == MisfireSkip && now.Sub(sc.NextOccurrence) > m.threshold {
				m.moveOn(r, t, now)
				break
			}
			exp := m.take(r, t, now)
			sc.Occurrences++
			m.start(r, &Occurrence{Number: sc.Occurrences, Expected: exp}, now)
		}
		// A run requested while an occurrence starts waits its turn.
		if sc.Current != nil {
			hist = m.postpone(r, t, now, hist)
		}
	}
	if c := sc.Current; c != nil && !c.At.After(now) {
		o := *c
		run = &o
	}
	m.settle(r, now)
	return run, hist
}

// start makes o the current occurrence, due at now.
func (m machine) start(r *JobRecord, o *Occurrence, now time.Time) {
	o.Tag = randomHex(8)
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
		sc.Waiting = &Occurrence{Number: sc.Occurrences, Expected: sc.RunRequested, Manual: true}
		sc.RunRequested = time.Time{}
		hist = append(hist, postponed(r, sc.Waiting, now))
	}
	return hist
}

func postponed(r *JobRecord, o *Occurrence, now time.Time) HistoryEntry {
	return HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusPostponed,
		ExpectedExecutionTime: o.Expected, StartTime: now, EndTime: now, RepeatCount: o.Number,
		Message: "postponed: the previous occurrence is still in progress",
	}
}

// settle computes DueAt, the status's NextExecutionTime and the final
// state.
func (m machine) settle(r *JobRecord, now time.Time) {
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
		n := sc.NextOccurrence
		r.Status.NextExecutionTime = &n
	}
}

// replay applies the claim-time step at claimed to a record re-read after
// an API write, and adopts o as its current occurrence when the step starts
// the same one (same number, expected time, action and retry).
func (m machine) replay(r *JobRecord, t *Timing, o *Occurrence, claimed time.Time) {
	m.advance(r, t, claimed)
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
		st := res.start
		r.Status.LastExecutionTime = &st
	}
	c := r.Schedule.Current
	if c == nil || c.Tag != o.Tag || c.ErrorAction != o.ErrorAction || c.Retry != o.Retry {
		return h
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
		c.At = res.end.Add(policy.Delay())
	case !c.ErrorAction:
		r.Status.FaultedCount++
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
	free := cap(s.sem) - len(s.sem)
	if free == 0 {
		return wakeBy // the next job that ends wakes the loop
	}
	limit := min(free, claimBatch)
	claims, err := s.store.ClaimDue(ctx, now, s.cfg.InstanceID, now.Add(s.cfg.LeaseDuration), limit)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("claim due jobs", "err", err)
		}
		return minTime(wakeBy, now.Add(time.Second))
	}
	for _, r := range claims {
		s.sem <- struct{}{} // never blocks: at most free jobs were claimed
		s.wg.Add(1)
		if s.pool {
			s.work <- task{r, now} // never blocks either: same capacity
		} else {
			go s.process(s.execCtx, r, now) // runDue driven without Start, in tests
		}
	}
	if len(claims) == limit {
		return now // there may be more
	}
	next, err := s.store.NextDue(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("next due job", "err", err)
		}
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

// task is a claimed job handed to a worker.
type task struct {
	r   *JobRecord
	now time.Time
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
	for t := range s.work {
		s.process(ctx, t.r, t.now)
	}
}

// process advances a claimed job and runs its attempt, or records the
// bookkeeping when no attempt is due. It holds a slot of the semaphore.
func (s *Scheduler) process(execCtx context.Context, r *JobRecord, now time.Time) {
	defer func() {
		<-s.sem
		s.wg.Done()
		s.notify() // the job may be due again, or the loop may wait for a slot
	}()
	ctx := context.Background()
	m := s.machine()
	for range 5 {
		t, err := s.timings.get(r)
		if err != nil {
			s.log.Error("job timing", "job", r.Name, "collection", r.Collection, "err", err)
			r.Schedule.DueAt = time.Time{}
			s.record(r, nil)
			return
		}
		// r is this goroutine's own copy: advance may change it in place.
		run, hist := m.advance(r, t, now)
		if run != nil {
			s.attempt(execCtx, r, t, run, hist, now)
			return
		}
		err = s.store.Record(ctx, s.cfg.InstanceID, r, hist)
		if err == nil {
			s.emit(hist)
			return
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(r, err)
			return
		}
		fresh, gerr := s.store.GetJob(ctx, r.Collection, r.Name)
		if gerr != nil {
			s.recordFailed(r, gerr)
			return
		}
		r = fresh
	}
	s.log.Error("record job: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// record stores r with hist and releases the lease, logging failures.
func (s *Scheduler) record(r *JobRecord, hist []HistoryEntry) {
	if err := s.store.Record(context.Background(), s.cfg.InstanceID, r, hist); err != nil {
		s.recordFailed(r, err)
		return
	}
	s.emit(hist)
}

func (s *Scheduler) recordFailed(r *JobRecord, err error) {
	if errors.Is(err, ErrNotFound) {
		return // deleted meanwhile
	}
	s.log.Error("record job outcome", "job", r.Name, "collection", r.Collection, "err", err)
}

func (s *Scheduler) emit(hist []HistoryEntry) {
	if s.cfg.OnHistory == nil {
		return
	}
	for _, h := range hist {
		s.cfg.OnHistory(h)
	}
}

// attempt runs one attempt of occurrence o of the claimed job r, then
// records its outcome together with hist.
//
// The store still holds the job as claimed: the start of the occurrence is
// written only with its outcome. When an API write changed the job
// meanwhile (ErrConflict), the claim-time step is replayed on the fresh
// record at claimed, so that a run requested or a patch made during the
// attempt is kept and the attempt still counts for its occurrence.
func (s *Scheduler) attempt(execCtx context.Context, r *JobRecord, t *Timing, o *Occurrence, hist []HistoryEntry, claimed time.Time) {
	res := s.execute(execCtx, r, o)
	m := s.machine()
	ctx := context.Background()
	var terr error
	for range 5 {
		work := r // the attempt's own copy, replaced by a fresh read on conflict
		// Occurrences that came due during the attempt are postponed
		// before the attempt's outcome can end the occurrence.
		var pre []HistoryEntry
		if terr == nil && work.Schedule.Current != nil {
			pre = m.postpone(work, t, res.end, nil)
		}
		h := m.complete(work, o, res)
		all := append(hist[:len(hist):len(hist)], h)
		all = append(all, pre...)
		if terr == nil {
			_, more := m.advance(work, t, res.end)
			all = append(all, more...)
		}
		err := s.store.Record(ctx, s.cfg.InstanceID, work, all)
		if err == nil {
			s.emit(all)
			return
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(r, err)
			return
		}
		fresh, gerr := s.store.GetJob(ctx, r.Collection, r.Name)
		if gerr != nil {
			s.recordFailed(r, gerr)
			return
		}
		r = fresh
		if t, terr = s.timings.get(r); terr == nil {
			m.replay(r, t, o, claimed)
		}
	}
	s.log.Error("record job outcome: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// execute carries out the attempt and reports its outcome; it never panics.
func (s *Scheduler) execute(execCtx context.Context, r *JobRecord, o *Occurrence) (res outcome) {
	act := &r.Job.Action
	if o.ErrorAction {
		act = r.Job.Action.ErrorAction
	}
	res.start = time.Now()
	defer func() {
		if p := recover(); p != nil {
			res.err = fmt.Errorf("executor panicked: %v", p)
			res.message = res.err.Error()
		}
		res.end = time.Now()
	}()
	if act == nil {
		res.err = errors.New("the job has no error action")
		res.message = res.err.Error()
		return res
	}
	exec, ok := s.executor(act.Type)
	if !ok {
		res.err = fmt.Errorf("no executor registered for action type %q", act.Type)
		res.message = res.err.Error()
		return res
	}
	req := &action.Request{
		Action:          act,
		JobID:           r.ID(),
		CollectionID:    r.Collection,
		ExecutionTag:    o.Tag,
		ClientRequestID: newUUID(),
		ExpectedTime:    o.Expected,
		Occurrence:      o.Number,
		Retry:           o.Retry,
		ErrorAction:     o.ErrorAction,
	}
	ctx, cancel := context.WithTimeout(execCtx, s.cfg.ActionTimeout)
	defer cancel()
	stopExtend := s.extendLease(r)
	defer stopExtend()
	out, err := exec.Execute(ctx, req)
	res.err = err
	if out != nil && out.Message != "" {
		res.message = out.Message
		if err != nil && !strings.Contains(out.Message, err.Error()) {
			res.message += ": " + err.Error()
		}
	} else if err != nil {
		res.message = err.Error()
	}
	if err == nil && ctx.Err() != nil {
		res.err = fmt.Errorf("attempt timed out after %s", s.cfg.ActionTimeout)
		res.message = res.err.Error()
	}
	return res
}

// extendLease keeps the lease on r while an attempt runs, extending it
// every third of Config.LeaseDuration, also past the attempt's timeout
// when an executor ignores its context; the returned function stops it.
// Short attempts cost one timer and no goroutine.
func (s *Scheduler) extendLease(r *JobRecord) func() {
	every := s.cfg.LeaseDuration / 3
	var mu sync.Mutex
	stopped := false
	var timer *time.Timer
	mu.Lock()
	defer mu.Unlock()
	timer = time.AfterFunc(every, func() {
		err := s.store.ExtendLease(context.Background(), r.Collection, r.Name, s.cfg.InstanceID, time.Now().Add(s.cfg.LeaseDuration))
		if err != nil {
			s.log.Warn("extend lease", "job", r.Name, "collection", r.Collection, "err", err)
			return
		}
		mu.Lock()
		if !stopped {
			timer.Reset(every)
		}
		mu.Unlock()
	})
	return func() {
		mu.Lock()
		stopped = true
		timer.Stop()
		mu.Unlock()
	}
}

// prune applies the retention limits.
func (s *Scheduler) prune(ctx context.Context, now time.Time) {
	n, err := s.store.Prune(ctx, PruneRequest{
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
		s.log.Debug("applied retention", "deleted", n)
	}
}
