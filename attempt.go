package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

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
	// superseded reports that the attempt failed after its context was
	// cancelled because the job's next occurrence came due
	// (OverlapCancelRunning): the occurrence ends without retry.
	superseded bool
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

// attempt is a claimed job whose occurrence is due: what process found,
// what the executor is handed, and what recording the outcome needs.
type attempt struct {
	r       *JobRecord
	t       *Timing
	o       Occurrence     // the due occurrence, as the step that made it due left it
	hist    []HistoryEntry // that step's entries, recorded with the outcome
	claimed time.Time      // when the job was claimed: the step's instant
	// requested is the run requested (JobSchedule.RunRequested) that
	// the claim's step saw; zero when none (see machine.replay).
	requested time.Time
	// start is when the attempt starts: the clock on which its lease
	// was last found long enough (see leaseTooShort), which the attempt's
	// start, its first lease extension and its history share.
	start time.Time
	m     machine // the job's state machine, as the step used it
	// cancelAt is when the attempt's context is cancelled because the
	// job's next occurrence comes due (OverlapCancelRunning), unless the
	// Scheduler began to stop before then (see supersedes); zero when
	// never.
	cancelAt time.Time
	// detached says that the occurrence runs beside the job's others
	// under OverlapAllowAll (see Run): the attempt holds no lease on the
	// job.
	detached bool
	info     attemptInfo // for the attempt's span
	// buf is the worker's occurrence buffer that r's current occurrence
	// may be (see machine.occ); r no longer refers to it once the outcome
	// is applied. slot is the worker's lease slot. Both are nil when no
	// worker runs the attempt.
	buf  *Occurrence
	slot *leaseSlot
	// permits are the concurrency permits of the collection's limits
	// that the attempt took (see Limiter); nil when it took none.
	permits *heldPermits
}

// runAttempt runs attempt a, then records its outcome together with
// a.hist. When the store is a [BatchRecorder], the outcome joins the batch
// of outcomes to record and runAttempt returns true: the job's slot is
// released once it is recorded.
//
// The store still holds the job as claimed: the start of the occurrence is
// written only with its outcome. When an API write changed the job
// meanwhile (ErrConflict), the claim-time step is replayed on the fresh
// record at a.claimed, so that a run requested or a patch made during the
// attempt is kept and the attempt still counts for its occurrence.
func (s *Scheduler) runAttempt(execCtx context.Context, a *attempt) (handedOff bool) {
	res := s.execute(execCtx, a) // the job's lease is held from here on
	r := a.r
	if a.permits != nil {
		// Given back under the job's lease, which the lease keeper goes
		// on extending alone: the store call may outlast the lease.
		s.holdLease(r, s.dropLease(r, a.slot), a.slot, nil)
		s.releasePermits(a.permits.holder)
	}
	p := pendingOutcome{r: r, def: r.Job, t: *a.t, o: a.o, res: res, hist: a.hist, claimed: a.claimed, tookOver: a.m.tookOver, requested: a.requested}
	if s.batch == nil {
		ownOccurrence(r, a.buf)
		// The outcome keeps the job's lease until it is recorded, next
		// extended when it would have been had the attempt gone on; no
		// store call comes between the two holds.
		p.leaseAt = s.dropLease(r, a.slot)
		s.recordOutcome(&p, false)
		return false
	}
	var buf []HistoryEntry
	if !s.noEntries {
		p.buf = histBufs.Get().(*[]HistoryEntry)
		buf = (*p.buf)[:0]
	}
	m := a.m
	m.occ = nil  // a new occurrence the outcome starts goes on the heap
	m.owner = "" // and waits for a claim, which runs it
	next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
	p.all = m.applyOutcome(r, &p.t, true, &p.o, res, p.hist, buf)
	ownOccurrence(r, a.buf) // the occurrence goes on: a retry or the error action
	p.miss = s.passedOver(r, &p.t, next0, counted0, misfireOf(m.policy.Missed), res.end)
	p.leaseAt = s.dropLease(r, a.slot) // the batch keeps it (see outcomeBatch.dueLeases)
	s.enqueue(&p)
	return true
}

// The causes of attempts that failed without the executor's error.
var (
	errAttemptTimeout   = errors.New("attempt timed out")
	errExecutorPanicked = errors.New("executor panicked")
	errSuperseded       = errors.New("cancelled")
	errAttemptStopped   = errors.New("cancelled: the scheduler stopped")
	errPermitsLost      = errors.New("cancelled: the permits of the collection's limits that the attempt held expired, unextended")
)

// answerGrace is how long after an attempt's timeout, or after Stop
// cancelled the attempt's context, the success that an executor watching
// its context (see attemptContext.isWatched) returns still counts. Such
// an executor stops when its context is cancelled and reports what it got
// in time (the HTTP executor's 2xx answer whose body the cancellation cut
// short): its action was carried out, and retrying it would carry it out
// again. Success returned later, or by an executor that never watched its
// context, comes from an executor that ignored the cancellation: the
// attempt timed out, or was cancelled by Stop.
const answerGrace = time.Second

// execute carries out attempt a and reports its outcome; it never panics.
func (s *Scheduler) execute(execCtx context.Context, a *attempt) (res outcome) {
	r, o := a.r, &a.o
	act := &r.Job.Action
	if o.ErrorAction {
		act = r.Job.Action.ErrorAction
	}
	res.start = a.start
	s.tookOver(r, o, &a.info)
	if o.Trace != "" {
		// Passed on by the executors, traced or not.
		execCtx = tracectx.WithRemote(execCtx, o.Trace, o.TraceState)
	}
	obs := s.cfg.Observer
	if obs != nil {
		execCtx = obs.StartAttempt(execCtx, s.attemptStart(r, o, act, res.start, a.info))
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
			obs.EndAttempt(execCtx, attemptEnd(r, o, &res))
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
	if o.ErrorAction && CarriesFailure(act) {
		if act, err = s.withFailure(execCtx, r, o, act); err != nil {
			s.log.Warn("read the occurrence's history for its errorAction; it is sent without it", "job", r.Name, "collection", r.Collection, "err", err)
		}
	}
	st := &attemptState{req: action.Request{
		Action:       act,
		CollectionID: r.Collection,
		ExpectedTime: o.Expected,
		Occurrence:   o.Number,
		Retry:        o.Retry,
		ErrorAction:  o.ErrorAction,
	}, name: r.Name, tag: o.Tag, tagSeed: r.tagSeed(), uuid: newUUID()}
	st.req.IDs = st
	req, ctx := &st.req, &st.ctx
	limit := act.AttemptTimeout(s.cfg.ActionTimeout)
	timeout := res.start.Add(limit)
	parent, cancelAt := execCtx, a.cancelAt
	if !cancelAt.Before(timeout) {
		cancelAt = time.Time{} // the attempt times out first
	}
	if !cancelAt.IsZero() {
		var release func()
		parent, release = s.superseding(execCtx, cancelAt)
		defer release()
	}
	ctx.init(parent, timeout)
	defer func() {
		// The attempt ended when the executor returned (or panicked).
		end := res.end
		if end.IsZero() {
			end = time.Now()
		}
		ctx.stop(end)
	}()
	if a.permits != nil {
		a.permits.ctx = ctx // before holdLease hands it to the lease keeper
	}
	if !a.detached {
		// Held on return: runAttempt hands it to the outcome.
		s.holdLease(r, s.firstExtension(r, res.start), a.slot, a.permits)
	}
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
	switch {
	case err != nil && ctx.permitsLost():
		res.err = fmt.Errorf("%w: %w", errPermitsLost, err)
		res.message = errPermitsLost.Error() + ": " + res.message
	case err != nil && !cancelAt.IsZero() && !res.end.Before(cancelAt) && s.supersedes(cancelAt) && execCtx.Err() == nil:
		res.superseded = true
		res.err = fmt.Errorf("%w: the occurrence expected at %s came due (runPolicy.overlap CancelRunning)", errSuperseded, stamp(cancelAt))
		if res.message != "" {
			res.message = res.err.Error() + ": " + res.message
		} else {
			res.message = res.err.Error()
		}
	case err == nil && ctx.errAt(res.end) != nil && res.end.Before(timeout) && execCtx.Err() != nil &&
		!(ctx.isWatched() && res.end.Sub(time.Unix(0, s.cancelledAt.Load())) <= answerGrace):
		// Stop's context ended (it cancels the attempts' contexts)
		// before the attempt did: it did not time out. An executor that
		// watched its context and returned success when Stop cancelled
		// it, or just after, keeps it, as at the timeout.
		res.err = errAttemptStopped
		res.message = res.err.Error()
	case err == nil && ctx.errAt(res.end) != nil && !res.end.Before(timeout) && !(ctx.isWatched() && res.end.Sub(timeout) <= answerGrace):
		// Success past the timeout from an executor that ignored its
		// context. One that returned success before the timeout (after
		// the next occurrence came due) keeps it, as does one that
		// watched its context and stopped when the timeout cancelled it.
		res.err = fmt.Errorf("%w after %s", errAttemptTimeout, limit)
		res.message = res.err.Error()
	case err != nil && !res.end.Before(timeout) && execCtx.Err() == nil:
		// The executor gave up at the timeout: history says so first.
		res.err = fmt.Errorf("%w after %s: %w", errAttemptTimeout, limit, err)
		res.message = fmt.Sprintf("%v after %s: %s", errAttemptTimeout, limit, res.message)
	case err != nil && res.end.Before(timeout) && execCtx.Err() != nil && errors.Is(err, context.Canceled):
		res.err = fmt.Errorf("%w: %w", errAttemptStopped, err)
		res.message = errAttemptStopped.Error() + ": " + res.message
	}
	if w := limitWaited(o); w != "" {
		if res.message == "" {
			res.message = w
		} else {
			res.message += " (" + w + ")"
		}
	}
	return res
}

// superseding returns a context under parent that is cancelled with the
// cause ErrSuperseded at at, when the job's next occurrence comes due
// under OverlapCancelRunning, unless the Scheduler began to stop before
// then (see supersedes); release frees its timer.
func (s *Scheduler) superseding(parent context.Context, at time.Time) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	d := time.Until(at)
	if d <= 0 {
		if s.supersedes(at) { // it came due before the attempt started
			cancel(ErrSuperseded)
		}
		return ctx, func() { cancel(nil) }
	}
	timer := time.AfterFunc(d, func() {
		if s.supersedes(at) {
			cancel(ErrSuperseded)
		}
	})
	return ctx, func() { timer.Stop(); cancel(nil) }
}

// supersedes reports whether the job's next occurrence, due at at under
// OverlapCancelRunning, cancels the attempt in progress: unless Stop was
// called before at. An instance that is stopping claims no more jobs, so
// that occurrence is not its to run, and the attempt goes on until it
// ends, times out or Stop's context ends.
func (s *Scheduler) supersedes(at time.Time) bool {
	stopping := s.stoppingAt.Load()
	return stopping == 0 || at.UnixNano() < stopping
}

// attemptContext is an attempt's context: its parent's values and
// cancellation, with a deadline. It behaves as context.WithDeadline's
// context, cancelled when the attempt ends, but makes that context (and its
// timer) only when something asks for Done or Value: most quick executors
// never do, and they then cost no timer. It takes 64 bytes, which keeps
// an attemptState at 208: every attempt allocates one.
//
// The deadline is kept in Unix nanoseconds, so Deadline returns it
// without a monotonic clock reading: a deadline compared with the time
// now (by Err before Done, by the timer that Done starts, by whatever the
// executor does with Deadline) is compared on the wall clock, as a
// deadline from another process is. Nothing in the Scheduler compares
// the attempt's deadline with Deadline's.
type attemptContext struct {
	parent   context.Context
	ctx      context.Context // nil until needed
	cancel   context.CancelFunc
	deadline int64 // Unix nanoseconds
	mu       sync.Mutex
	lost     bool // cancelled by losePermits
	// err is the error that Err reported, or that the context was
	// cancelled with when the attempt ended, before it made ctx: Err
	// keeps reporting it, and a ctx made later ends with it.
	err ctxErr
	// watched says that Done or Err was called: the executor watches c
	// (after err, which fits beside lost in the padding).
	watched atomic.Bool
}

// ctxErr is one of the errors of a context that is done.
type ctxErr uint8

const (
	notDone          ctxErr = iota
	canceled                // context.Canceled
	deadlineExceeded        // context.DeadlineExceeded
	superseded              // context.Canceled, with ErrSuperseded as its cause
)

func (e ctxErr) error() error {
	switch e {
	case canceled, superseded:
		return context.Canceled
	case deadlineExceeded:
		return context.DeadlineExceeded
	}
	return nil
}

// doneAt returns how c is done at now, as the context it did not make
// yet would be; c.mu must be held.
func (c *attemptContext) doneAt(now time.Time) ctxErr {
	switch err := c.parent.Err(); {
	case err == context.DeadlineExceeded:
		return deadlineExceeded
	case err != nil && errors.Is(context.Cause(c.parent), ErrSuperseded):
		return superseded
	case err != nil:
		return canceled
	case now.UnixNano() >= c.deadline:
		return deadlineExceeded
	}
	return notDone
}

// end cancels c, if it is not done yet: its attempt ended at now. c.mu
// must be held.
func (c *attemptContext) end(now time.Time) {
	if c.ctx != nil {
		c.cancel()
		return
	}
	if c.err == notDone {
		if c.err = c.doneAt(now); c.err == notDone {
			c.err = canceled
		}
	}
}

// losePermits cancels c: its attempt lost the permits of its
// collection's limits.
func (c *attemptContext) losePermits() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = true
	c.end(time.Now())
}

// permitsLost reports whether losePermits cancelled c.
func (c *attemptContext) permitsLost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// init readies c, which must be new, for an attempt under parent that
// must end by deadline.
func (c *attemptContext) init(parent context.Context, deadline time.Time) {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.parent, c.deadline = parent, math.MaxInt64 // past the year 2262
	if deadline.Before(maxDeadline) {
		c.deadline = deadline.UnixNano()
	}
}

// maxDeadline is the last instant whose Unix nanoseconds an int64 holds.
var maxDeadline = time.Unix(0, math.MaxInt64)

// attemptState is what an attempt hands its executor, its context and its
// request, in one allocation, with what the request's identifiers are made
// of when the executor reads them (see action.RequestIDs). Nothing that
// outlives the attempt points into it: it holds the opened action (secrets
// in plain text) and the attempt's context chain, which a record kept by
// the store (see BatchRecorder) or an outcome waiting for the store would
// keep alive.
type attemptState struct {
	ctx     attemptContext
	req     action.Request
	name    string   // the job's name; req.CollectionID is its collection
	tag     string   // the occurrence's execution tag; empty: made from the job's identity (see machine.tagLater)
	tagSeed int64    // the job's tagSeed, for the tag
	uuid    [16]byte // the random bits of the request ID
}

// JobID implements action.RequestIDs: the ID of the job, as
// [JobRecord.ID]. It and ExecutionTag read the request's fields, which
// executors must not modify (see action.Request).
func (st *attemptState) JobID() string { return jobID(st.req.CollectionID, st.name) }

// ExecutionTag implements action.RequestIDs: the occurrence's tag, made
// when start left it empty (see machine.tagLater).
func (st *attemptState) ExecutionTag() string {
	if st.tag != "" {
		return st.tag
	}
	return tagOf(st.req.CollectionID, st.name, st.tagSeed, st.req.Occurrence)
}

// ClientRequestID implements action.RequestIDs: a version 4 UUID, drawn
// when the attempt started.
func (st *attemptState) ClientRequestID() string {
	var b [36]byte
	formatUUID(&b, &st.uuid)
	return string(b[:])
}

// get returns the underlying context, making it on first use: a
// context.WithDeadline of the parent (which, under CancelRunning, is
// cancelled with the cause ErrSuperseded: see superseding), or, when c is
// already done with err, a context done with the same error and cause.
func (c *attemptContext) get() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		switch c.err {
		case notDone:
			c.ctx, c.cancel = context.WithDeadline(c.parent, time.Unix(0, c.deadline))
		case superseded:
			ctx, cancel := context.WithCancelCause(context.WithoutCancel(c.parent))
			cancel(ErrSuperseded)
			c.ctx, c.cancel = ctx, func() {}
		case deadlineExceeded:
			// A deadline long past: done at once, whatever the clock
			// says now.
			c.ctx, c.cancel = context.WithDeadline(context.WithoutCancel(c.parent), time.Time{})
		default:
			c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(c.parent))
			c.cancel()
		}
	}
	return c.ctx
}

// stop cancels the context: the attempt ended at now, the instant the
// executor returned (a clock read spared per attempt). Done if the
// deadline had passed by then, Err reports DeadlineExceeded, else
// Canceled.
func (c *attemptContext) stop(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end(now)
}

func (c *attemptContext) Deadline() (time.Time, bool) { return time.Unix(0, c.deadline), true }
func (c *attemptContext) Value(key any) any           { return c.get().Value(key) }
func (c *attemptContext) String() string              { return "scheduler.attemptContext" }

func (c *attemptContext) Err() error {
	c.watch()
	return c.errAt(time.Now())
}

func (c *attemptContext) Done() <-chan struct{} {
	c.watch()
	return c.get().Done()
}

// watch notes that the executor watches c: once, without a lock (an
// executor may ask for Done or Err in a loop).
func (c *attemptContext) watch() {
	if !c.watched.Load() {
		c.watched.Store(true)
	}
}

// isWatched reports whether the executor asked for c's Done channel or
// Err, as every executor that stops when c is cancelled does (directly,
// or through a context derived from c); the Scheduler itself reads c with
// errAt.
func (c *attemptContext) isWatched() bool {
	return c.watched.Load()
}

// errAt is Err at now. Once it is not nil it stays the same, as
// context.Context's contract asks: the first error it reports is kept.
func (c *attemptContext) errAt(now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != nil {
		return c.ctx.Err()
	}
	if c.err == notDone {
		c.err = c.doneAt(now)
	}
	return c.err.error()
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
