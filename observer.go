package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/guard"
)

// Observer is told what a Scheduler does, to trace and measure it: set
// Config.Observer. Package telemetry (github.com/jobclock/scheduler/telemetry,
// a module of its own, so that a program that does not import it links no
// OpenTelemetry package) implements it with OpenTelemetry; see "Observing"
// in the package documentation. The Scheduler calls its methods from
// several goroutines at once, and they must return quickly. What the
// events carry is the Scheduler's: an Observer reads it during the call
// and does not modify it. A method that panics is recovered and logged to
// Config.Logger (an error the first time each method panics, with its
// stack; debug after that; with the context the method was given, if
// any), and the Scheduler goes on as if it had
// returned nothing: the attempt whose StartAttempt or TookOver panicked
// runs, with the context StartAttempt was given (so that what a
// StartAttempt began before it panicked, a span, is not in the context
// EndAttempt gets, and only the Observer can end it).
type Observer interface {
	// Attach is called by New with the Scheduler it made, and returns
	// the func that Stop calls. In between the Observer may read the
	// Scheduler (JobCounts, DueCount, InFlight) for gauges.
	Attach(s *Scheduler) (detach func())
	// StartAttempt is called as an attempt starts, with the context its
	// executor is to get (which carries the occurrence's trace context,
	// Attempt.Trace, when it has one). It returns that context, or one
	// derived from it that carries the attempt's span; the executors of
	// this module make their client and producer spans its children and
	// send its trace context on. The context returned is also what log
	// records about the attempt are written with.
	StartAttempt(ctx context.Context, a Attempt) context.Context
	// EndAttempt is called when the attempt ends, with the context
	// StartAttempt returned.
	EndAttempt(ctx context.Context, e AttemptEnd)
	// HistoryStored is called with history entries once they are stored
	// (under Config.HistoryPerJob NoHistory, once the outcome they describe
	// is recorded without them), in the order of each job's entries
	// (before Config.OnHistory).
	HistoryStored(h StoredHistory)
	// Missed is called with scheduled occurrences that a step passed over
	// without running them: merged into a waiting occurrence or into a
	// catch-up after downtime, or dropped by MisfireSkip.
	Missed(m Misfire)
	// TookOver is called when an attempt starts whose claim took over
	// a job's lease that another instance held and let expire, or runs
	// again an attempt of an occurrence that runs beside others ([Run])
	// whose claim another instance held and let expire: once per
	// takeover, just before StartAttempt. A claim that takes over a
	// lease and whose step only records bookkeeping (the occurrence
	// waits for a limit, say) reports the takeover once
	// that record is written, with no StartAttempt: the record releases
	// the lease, and the claim that later starts the job takes over none.
	// A claim that takes over a lease and then neither starts an attempt
	// nor writes its record reports nothing: a write won over the claim,
	// or Stop gave the claim back (putting back the expired lease, so
	// that the claim that then starts the job reports the takeover; over
	// a store that is not an [AheadClaimer] Stop releases the lease
	// instead, and the takeover goes unreported).
	TookOver(t Takeover)
	// StoreCalled is called after each store call of the run loop.
	StoreCalled(c StoreCall)
	// Pruned is called when retention deleted n history entries and final
	// jobs (n > 0).
	Pruned(n int)
	// TraceParent returns the W3C traceparent and tracestate of the span
	// ctx carries, or empty strings: RunJob keeps them with the run it
	// requests, whose attempts then continue the caller's trace.
	TraceParent(ctx context.Context) (traceparent, tracestate string)
}

// guardedObserver is Config.Observer as the Scheduler calls it: a method
// that panics is recovered, as a panicking executor is, so that a bug of
// the Observer's never takes the engine down, and the Scheduler goes on as
// if the method had returned nothing: the attempt whose StartAttempt
// panicked runs with the context StartAttempt was given, an Attach that
// panicked leaves nothing for Stop to detach, a TraceParent that panicked
// returns empty strings. The first panic of each method is logged as an
// error with its stack, the later ones at debug level.
type guardedObserver struct {
	obs    Observer
	panics *guard.Panics
}

func newGuardedObserver(obs Observer, log *slog.Logger) *guardedObserver {
	return &guardedObserver{obs, guard.New(log, "the Observer (Config.Observer)", "the scheduler goes on as if the call returned nothing",
		"Attach", "detach", "StartAttempt", "EndAttempt", "HistoryStored", "Missed", "TookOver", "StoreCalled", "Pruned", "TraceParent")}
}

// The methods of an Observer, and the func Attach returns, by their index
// in the methods of guardedObserver.panics.
const (
	obsAttach = iota
	obsDetach
	obsStartAttempt
	obsEndAttempt
	obsHistoryStored
	obsMissed
	obsTookOver
	obsStoreCalled
	obsPruned
	obsTraceParent
)

func (g *guardedObserver) Attach(s *Scheduler) (detach func()) {
	detach = func() {}
	defer g.panics.Recover(context.Background(), obsAttach)
	d := g.obs.Attach(s)
	return func() {
		defer g.panics.Recover(context.Background(), obsDetach)
		d()
	}
}

func (g *guardedObserver) StartAttempt(ctx context.Context, a Attempt) (actx context.Context) {
	actx = ctx
	defer g.panics.Recover(ctx, obsStartAttempt)
	return g.obs.StartAttempt(ctx, a)
}

func (g *guardedObserver) EndAttempt(ctx context.Context, e AttemptEnd) {
	defer g.panics.Recover(ctx, obsEndAttempt)
	g.obs.EndAttempt(ctx, e)
}

func (g *guardedObserver) HistoryStored(h StoredHistory) {
	defer g.panics.Recover(context.Background(), obsHistoryStored)
	g.obs.HistoryStored(h)
}

func (g *guardedObserver) Missed(m Misfire) {
	defer g.panics.Recover(context.Background(), obsMissed)
	g.obs.Missed(m)
}

func (g *guardedObserver) TookOver(t Takeover) {
	defer g.panics.Recover(context.Background(), obsTookOver)
	g.obs.TookOver(t)
}

func (g *guardedObserver) StoreCalled(c StoreCall) {
	defer g.panics.Recover(context.Background(), obsStoreCalled)
	g.obs.StoreCalled(c)
}

func (g *guardedObserver) Pruned(n int) {
	defer g.panics.Recover(context.Background(), obsPruned)
	g.obs.Pruned(n)
}

func (g *guardedObserver) TraceParent(ctx context.Context) (traceparent, tracestate string) {
	defer g.panics.Recover(ctx, obsTraceParent)
	return g.obs.TraceParent(ctx)
}

// Attempt describes an attempt as it starts, for [Observer.StartAttempt].
type Attempt struct {
	// Instance is Config.InstanceID of the Scheduler that runs it.
	Instance string
	// Collection and Job name the job.
	Collection, Job string
	// ActionType is the type of the action attempted; empty when the job
	// has no error action to attempt.
	ActionType action.Type
	// ActionName is MainAction or ErrorAction.
	ActionName ActionName
	// Occurrence is the occurrence's number (history's repeatCount), and
	// Retry the attempt's retry number (history's retryCount).
	Occurrence, Retry int
	// Expected is the occurrence's expected time.
	Expected time.Time
	// Due is when the attempt was due: Expected for a first attempt, the
	// retry's due time for a retry or an errorAction attempt. The wait
	// for the permits of the collection's limits is not lateness: a
	// first attempt that waited is due at Expected plus LimitWait, a
	// retry or errorAction attempt at the end of its last wait.
	Due time.Time
	// LimitWait is how long the attempt was held back by the permits of
	// its collection's limits: from their first refusal to the end of
	// its last wait, when it was due again (the next grant of the rate
	// that refused it, or the Scheduler's next look at a concurrency
	// limit's permits); zero when it did not wait. LimitKey is the key
	// of the limit that refused it last (empty when the store failed).
	LimitWait time.Duration
	LimitKey  LimitKey
	// Start is when the attempt started.
	Start time.Time
	// Tag is the occurrence's execution tag.
	Tag string
	// Manual is set for a run requested with RunJob.
	Manual bool
	// PreviousOwner is the instance whose expired lease this claim took
	// over; empty when none.
	PreviousOwner string
	// Missed describes the scheduled occurrences merged into this one by
	// the step that started it (a catch-up after downtime under
	// MisfireRunOnce); nil when none. They are reported to Missed too,
	// with OnAttempt set.
	Missed *Misfire
	// Trace and TraceState are the occurrence's W3C trace context
	// (Occurrence.Trace): its first attempt's, or RunJob's caller's;
	// empty when it has none yet.
	Trace, TraceState string
}

// AttemptEnd describes how an attempt ended, for [Observer.EndAttempt].
type AttemptEnd struct {
	// End is when it ended.
	End time.Time
	// TimedOut reports that the attempt failed because it outlived its
	// timeout (the action's own, else Config.ActionTimeout), which
	// cancelled its context.
	TimedOut bool
	// Permanent reports that the attempt failed with an error that is
	// not retried: marked with action.Permanent, or an HTTP status that
	// the retry policy lists in permanentStatusCodes. The occurrence
	// faults at once.
	Permanent bool
	// RetryAfter is the instant the retry that follows waits until
	// because a 429 or 503 answer's Retry-After header asked it not to
	// start before then (within MaxRetryAfter); zero without one, and
	// when no retry follows (the policy allows none, or no more, or the
	// retry would start after maxRetryDuration) or the policy's own
	// interval already makes the retry start no sooner.
	RetryAfter time.Time
	// PermitsLost reports that the attempt failed because the
	// concurrency permits of its collection's limits expired unextended
	// while it ran (its instance cut off from the store, see [Limiter]),
	// which cancelled its context.
	PermitsLost bool
	// Err is its error: the executor's, or one that says why it failed
	// without the executor's error (timeout, panic, no executor); nil
	// when it succeeded.
	Err error
	// ErrorType classifies Err: "timeout" when the attempt outlived its
	// deadline, "panic" when its executor panicked, else Err's Go type as
	// fmt's %T writes it; empty when Err is nil.
	ErrorType string
}

// StoredHistory is history stored for one job, for
// [Observer.HistoryStored].
type StoredHistory struct {
	// Instance is Config.InstanceID of the Scheduler that stored it.
	Instance string
	// Job is the definition of the job the entries are about, as it was
	// when they were made; nil when unknown. It may be the definition
	// the store holds: it must not be modified.
	Job *Job
	// Entries are the entries stored.
	Entries []HistoryEntry
}

// Misfire describes scheduled occurrences of one job that a step passed
// over without running them, for [Observer.Missed].
type Misfire struct {
	// Instance is Config.InstanceID of the Scheduler that stepped.
	Instance string
	// Collection and Job name the job.
	Collection, Job string
	// Policy is the misfire policy that applied.
	Policy MisfirePolicy
	// Count is how many occurrences were passed over; at most 10,000 are
	// counted.
	Count int
	// First and Last are the expected times of the first and last of
	// them.
	First, Last time.Time
	// At is when the step ran.
	At time.Time
	// OnAttempt is set when they were merged into the catch-up occurrence
	// whose attempt starts now, which carries them as Attempt.Missed.
	OnAttempt bool
}

// Takeover describes the claim of a job whose lease another instance held
// and let expire, for [Observer.TookOver].
type Takeover struct {
	// Instance is Config.InstanceID of the Scheduler that claimed it, and
	// PreviousOwner the instance whose lease expired.
	Instance, PreviousOwner string
	// Collection and Job name the job.
	Collection, Job string
}

// StoreCall describes a store call of the run loop, for
// [Observer.StoreCalled].
type StoreCall struct {
	// Op names the Store method: ClaimDue, NextDue, Record, RecordBatch,
	// ExtendLease, GetJob, PutJob (the outcome of an occurrence that runs
	// beside others, see [Run]) or Prune, the LeaseExtender method
	// (ExtendLeases), the AheadClaimer method (ClaimDueBy, named
	// ClaimDue: it is the same claim, and ClaimDue its special case;
	// GiveBack), or the Limiter method: AcquirePermits, ExtendPermits or
	// ReleasePermits.
	Op string
	// Duration is how long the call took.
	Duration time.Duration
	// Err is the call's error; nil for RecordBatch and ExtendLeases,
	// whose errors are in Errs.
	Err error
	// Errs are a RecordBatch call's errors, one per record (nil for a
	// record stored), also when the store answered a batch it stored
	// whole with nil; an ExtendLeases call's, one per job (nil for a
	// lease extended), likewise; and a GiveBack call's, one per claim,
	// nil for each claim given back or that needed none: a job deleted meanwhile
	// ([ErrNotFound]) or leased to another instance since, or claimed
	// again by this one ([ErrLeaseLost]), is not this claim's to give
	// back, so Errs holds
	// only the failures that leave a claim leased until its lease
	// expires. The Observer must not modify them.
	Errs []error
}

// The store calls of the run loop, as StoreCall.Op names them.
const (
	opClaimDue     = "ClaimDue" // also AheadClaimer.ClaimDueBy
	opGiveBack     = "GiveBack"
	opNextDue      = "NextDue"
	opRecord       = "Record"
	opRecordBatch  = "RecordBatch"
	opExtendLease  = "ExtendLease"
	opExtendLeases = "ExtendLeases"
	opGetJob       = "GetJob"
	opPutJob       = "PutJob"
	opPrune        = "Prune"
	opAcquire      = "AcquirePermits"
	opExtend       = "ExtendPermits"
	opRelease      = "ReleasePermits"
)

// observedLimiter is the Limiter of the run loop when Config.Observer is
// set: it tells the Observer of each call it makes.
type observedLimiter struct {
	Limiter
	obs Observer
}

func (o *observedLimiter) called(op string, start time.Time, err error) {
	o.obs.StoreCalled(StoreCall{Op: op, Duration: time.Since(start), Err: err})
}

func (o *observedLimiter) AcquirePermits(ctx context.Context, req PermitRequest) (PermitGrant, error) {
	start := time.Now()
	g, err := o.Limiter.AcquirePermits(ctx, req)
	o.called(opAcquire, start, err)
	return g, err
}

func (o *observedLimiter) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	start := time.Now()
	n, err := o.Limiter.ExtendPermits(ctx, holder, now, until)
	o.called(opExtend, start, err)
	return n, err
}

func (o *observedLimiter) ReleasePermits(ctx context.Context, holder string) error {
	start := time.Now()
	err := o.Limiter.ReleasePermits(ctx, holder)
	o.called(opRelease, start, err)
	return err
}

// observedClaimer is the AheadClaimer of the run loop when
// Config.Observer is set: it tells the Observer of each call it makes.
type observedClaimer struct {
	AheadClaimer
	obs Observer
}

func (o *observedClaimer) ClaimDueBy(ctx context.Context, c ClaimRequest) ([]*JobRecord, error) {
	start := time.Now()
	claims, err := o.AheadClaimer.ClaimDueBy(ctx, c)
	o.obs.StoreCalled(StoreCall{Op: opClaimDue, Duration: time.Since(start), Err: err})
	return claims, err
}

func (o *observedClaimer) GiveBack(ctx context.Context, owner string, claims []*JobRecord) []error {
	start := time.Now()
	errs := o.AheadClaimer.GiveBack(ctx, owner, claims)
	o.obs.StoreCalled(StoreCall{Op: opGiveBack, Duration: time.Since(start), Errs: stillLeased(errs)})
	return errs
}

// observedExtender is the LeaseExtender of the lease keeper when
// Config.Observer is set: it tells the Observer of each call it makes.
type observedExtender struct {
	LeaseExtender
	obs Observer
}

func (o *observedExtender) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []JobKey) []error {
	start := time.Now()
	errs := o.LeaseExtender.ExtendLeases(ctx, owner, until, jobs)
	d := time.Since(start)
	all := extendAnswer(errs, len(jobs))
	if all == nil {
		all = make([]error, len(jobs))
	}
	o.obs.StoreCalled(StoreCall{Op: opExtendLeases, Duration: d, Errs: all})
	return errs
}

// stillLeased returns the errors of a GiveBack that leave a claim leased
// (see leftLeased): errs without ErrNotFound and ErrLeaseLost (see
// [StoreCall].Errs). It returns errs itself when it holds no such error.
func stillLeased(errs []error) []error {
	var out []error
	for i, err := range errs {
		if err == nil || leftLeased(err) {
			if out != nil {
				out[i] = err
			}
			continue
		}
		if out == nil {
			out = make([]error, len(errs))
			copy(out, errs[:i])
		}
	}
	if out == nil {
		return errs
	}
	return out
}

// observedStore is the store of the run loop when Config.Observer is set:
// it tells the Observer of each call it makes.
type observedStore struct {
	Store
	obs Observer
}

// observedBatchStore is an observedStore over a BatchRecorder.
type observedBatchStore struct {
	observedStore
	batch BatchRecorder
}

// observeStore returns store with its calls told to obs, a BatchRecorder
// when store is one.
func observeStore(store Store, obs Observer) Store {
	o := observedStore{store, obs}
	if b, ok := store.(BatchRecorder); ok {
		return &observedBatchStore{o, b}
	}
	return &o
}

func (o *observedStore) called(op string, start time.Time, err error) {
	o.obs.StoreCalled(StoreCall{Op: op, Duration: time.Since(start), Err: err})
}

func (o *observedStore) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*JobRecord, error) {
	start := time.Now()
	claims, err := o.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
	o.called(opClaimDue, start, err)
	return claims, err
}

func (o *observedStore) NextDue(ctx context.Context) (time.Time, error) {
	start := time.Now()
	next, err := o.Store.NextDue(ctx)
	o.called(opNextDue, start, err)
	return next, err
}

func (o *observedStore) Record(ctx context.Context, owner string, r *JobRecord, hist []HistoryEntry) error {
	start := time.Now()
	err := o.Store.Record(ctx, owner, r, hist)
	o.called(opRecord, start, err)
	return err
}

func (o *observedStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	start := time.Now()
	err := o.Store.ExtendLease(ctx, collection, name, owner, until)
	o.called(opExtendLease, start, err)
	return err
}

func (o *observedStore) GetJob(ctx context.Context, collection, name string) (*JobRecord, error) {
	start := time.Now()
	r, err := o.Store.GetJob(ctx, collection, name)
	o.called(opGetJob, start, err)
	return r, err
}

func (o *observedStore) PutJob(ctx context.Context, r *JobRecord) error {
	start := time.Now()
	err := o.Store.PutJob(ctx, r)
	o.called(opPutJob, start, err)
	return err
}

func (o *observedStore) Prune(ctx context.Context, req PruneRequest) (int, error) {
	start := time.Now()
	n, err := o.Store.Prune(ctx, req)
	o.called(opPrune, start, err)
	return n, err
}

// noBatchErrs is StoreCall.Errs of a RecordBatch call that stored every
// record (up to recordBatch of them, the most the Scheduler passes), which
// the store answered with nil: one slice that nobody writes to, handed out
// with no spare capacity, so that an Observer's append copies it.
var noBatchErrs = make([]error, recordBatch)

func (o *observedBatchStore) RecordBatch(ctx context.Context, owner string, reqs []RecordRequest) []error {
	start := time.Now()
	errs := o.batch.RecordBatch(ctx, owner, reqs)
	d := time.Since(start)
	all := errs
	switch {
	case errs == nil && len(reqs) <= len(noBatchErrs): // every record stored
		all = noBatchErrs[:len(reqs):len(reqs)]
	case len(errs) < len(reqs): // the caller counts the missing ones as errShortBatch
		all = make([]error, len(reqs))
		for i := range all {
			all[i] = batchErr(errs, i)
		}
	}
	o.obs.StoreCalled(StoreCall{Op: opRecordBatch, Duration: d, Errs: all})
	return errs
}

// attemptStart describes attempt o of r, of action act, starting at start,
// for the Observer.
func (s *Scheduler) attemptStart(r *JobRecord, o *Occurrence, act *action.Action, start time.Time, info attemptInfo) Attempt {
	a := Attempt{
		Instance: s.cfg.InstanceID, Collection: r.Collection, Job: r.Name, ActionName: MainAction,
		Occurrence: o.Number, Retry: o.Retry, Expected: o.Expected, Due: o.Expected, Start: start, Tag: o.Tag,
		Manual: o.Manual, PreviousOwner: info.prevOwner, Missed: info.missed, Trace: o.Trace, TraceState: o.TraceState,
	}
	if act != nil {
		a.ActionType = act.Type
	}
	if o.ErrorAction {
		a.ActionName = ErrorAction
	}
	if o.Retry > 0 || o.ErrorAction {
		a.Due = o.At
	}
	if l := o.Limited; l != nil {
		w := limitWaitOf(o)
		a.LimitWait, a.LimitKey = w, l.Key
		if o.Retry == 0 && !o.ErrorAction {
			a.Due = o.Expected.Add(w)
		}
	}
	return a
}

// attemptEnd describes the end of attempt o of r, whose outcome is res.
func attemptEnd(r *JobRecord, o *Occurrence, res *outcome) AttemptEnd {
	e := AttemptEnd{End: res.end, Err: res.err}
	if res.err != nil {
		policy := retryPolicyOf(r.Job, o.ErrorAction)
		e.ErrorType = errorType(res.err)
		e.TimedOut = errors.Is(res.err, errAttemptTimeout)
		e.PermitsLost = errors.Is(res.err, errPermitsLost)
		e.Permanent = !res.superseded && (action.IsPermanent(res.err) || permanentStatus(res.err, policy) != 0)
		if !res.superseded && retryAfter(res.err).After(res.end) {
			at := *o
			tagged(r, &at)
			if p := planRetry(&at, policy, res); p.retries() && p.waited {
				e.RetryAfter = p.at
			}
		}
	}
	return e
}

// errorType is the error.type of an attempt's error: the Go type of the
// executor's error, or timeout when the attempt outlived its deadline.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, errAttemptTimeout):
		return "timeout"
	case errors.Is(err, errExecutorPanicked):
		return "panic"
	}
	return fmt.Sprintf("%T", err)
}

// attemptInfo is what execute needs to know beyond the occurrence to
// describe an attempt.
type attemptInfo struct {
	prevOwner string   // the instance whose lease this claim took over
	run       bool     // prevOwner's was the claim of the occurrence's run, not the job's lease
	missed    *Misfire // occurrences merged into this one by the step that started it
}

// maxMissedCounted bounds Misfire.Count.
const maxMissedCounted = 10_000

// passedOver compares the schedule of r after a step at now with its
// NextOccurrence and Counted before it, and describes the occurrences the
// step passed over without taking them; nil when there are none, or when
// nothing observes the Scheduler.
func (s *Scheduler) passedOver(r *JobRecord, tm *Timing, next0 time.Time, counted0 int, policy MisfirePolicy, now time.Time) *Misfire {
	sc := &r.Schedule
	next1 := sc.NextOccurrence
	if s.cfg.Observer == nil || tm == nil || next0.IsZero() || next1.Equal(next0) || policy == MisfireRunAll {
		return nil
	}
	taken := sc.Counted - counted0
	until := now
	if !next1.IsZero() && !next1.After(now) {
		until = next1.Add(-time.Nanosecond)
	}
	// The occurrences from next0 up to until, less the one taken: the
	// first of them, or, when a catch-up window passed over the older
	// ones, the first within it.
	var m Misfire
	first := next0
	if exp, ok := takenAt(sc); taken == 1 && ok && !exp.Before(next0) && !exp.After(until) {
		before, last, _ := span(tm, next0, exp.Add(-time.Nanosecond), maxMissedCounted)
		_, _, after := span(tm, exp, until, 1)
		var n int
		n, m.Last, _ = span(tm, after, until, maxMissedCounted-before)
		m.Count = before + n
		if before > 0 && n == 0 {
			m.Last = last
		}
		if before == 0 {
			first = after
		}
	} else {
		_, _, first = span(tm, next0, until, taken)
		m.Count, m.Last, _ = span(tm, first, until, maxMissedCounted)
	}
	if m.Count == 0 {
		return nil
	}
	m.First = first
	m.Instance, m.Collection, m.Job, m.Policy, m.At = s.cfg.InstanceID, r.Collection, r.Name, policy, now
	return &m
}

// takenAt returns the expected time of the newest occurrence of sc (the
// one a step started), in progress or running beside others; ok is false
// when there is none.
func takenAt(sc *JobSchedule) (exp time.Time, ok bool) {
	if c := sc.Current; c != nil && c.Number == sc.Occurrences {
		return c.Expected, true
	}
	if p := sc.Policy; p != nil {
		for i := len(p.Running) - 1; i >= 0; i-- {
			if p.Running[i].Number == sc.Occurrences {
				return p.Running[i].Expected, true
			}
		}
	}
	return time.Time{}, false
}

// missed tells the Observer of m (which may be nil); onAttempt says that
// the attempt starting now carries them.
func (s *Scheduler) missed(m *Misfire, onAttempt bool) {
	if m == nil {
		return
	}
	e := *m
	e.OnAttempt = onAttempt
	s.cfg.Observer.Missed(e)
}
