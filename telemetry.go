package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// ScopeName is the instrumentation scope of the Scheduler's spans and
// metrics: the name it passes to TracerProvider.Tracer and
// MeterProvider.Meter.
const ScopeName = "github.com/jobclock/scheduler"

// The names of the Scheduler's spans; doc.go describes each.
const (
	spanAttempt  = "jobclock.attempt"
	spanPostpone = "jobclock.postpone"
	spanMisfire  = "jobclock.misfire"
)

// The attribute keys of spans and metrics; doc.go describes each.
const (
	keyCollection    = attribute.Key("jobclock.collection")
	keyJob           = attribute.Key("jobclock.job")
	keyActionType    = attribute.Key("jobclock.action.type")
	keyActionName    = attribute.Key("jobclock.action.name")
	keyOccurrence    = attribute.Key("jobclock.occurrence.number")
	keyExpected      = attribute.Key("jobclock.occurrence.expected_time")
	keyManual        = attribute.Key("jobclock.occurrence.manual")
	keyMissed        = attribute.Key("jobclock.occurrence.missed")
	keyRetry         = attribute.Key("jobclock.attempt.retry")
	keyLateness      = attribute.Key("jobclock.attempt.lateness")
	keyOutcome       = attribute.Key("jobclock.attempt.outcome")
	keyTag           = attribute.Key("jobclock.execution_tag")
	keyInstance      = attribute.Key("jobclock.instance")
	keyPrevOwner     = attribute.Key("jobclock.lease.previous_owner")
	keyPolicy        = attribute.Key("jobclock.misfire.policy")
	keyFirstMissed   = attribute.Key("jobclock.misfire.first_expected_time")
	keyLastMissed    = attribute.Key("jobclock.misfire.last_expected_time")
	keyJobState      = attribute.Key("jobclock.job.state")
	keyStoreOp       = attribute.Key("jobclock.store.operation")
	keyErrorType     = attribute.Key("error.type")
	errorTypeOther   = "_OTHER"
	maxMissedCounted = 10_000
)

// Bucket boundaries of the histograms, in seconds.
var (
	durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}
	latenessBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	storeBuckets    = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// telemetry holds the Scheduler's tracer and instruments. With the global
// providers and no SDK installed, each attempt costs a few atomic loads:
// no span is started and no measurement is made.
type telemetry struct {
	tracer   *tracectx.Tracer
	instance string
	byJob    bool
	log      *slog.Logger

	occurrences metric.Int64Counter
	faulted     metric.Int64Counter
	attempts    metric.Int64Counter
	duration    metric.Float64Histogram
	lateness    metric.Float64Histogram
	missed      metric.Int64Counter
	takeovers   metric.Int64Counter
	storeTime   metric.Float64Histogram
	storeErrors metric.Int64Counter
	pruned      metric.Int64Counter
	gauges      metric.Registration // nil when registration failed

	mu   sync.RWMutex
	sets map[attrKey]*measureOpts
}

// attrKey identifies one attribute set of the per-attempt instruments.
type attrKey struct {
	actionType action.Type
	name       ActionName
	status     ExecutionStatus
	collection string // with Config.MetricsByJob
	job        string
}

// measureOpts are the measurement options of one attribute set, made once
// so that a measurement allocates nothing.
type measureOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newMeasureOpts(attrs ...attribute.KeyValue) *measureOpts {
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	return &measureOpts{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

// newTelemetry makes the tracer and instruments of s from its Config.
func newTelemetry(s *Scheduler) *telemetry {
	c := &s.cfg
	t := &telemetry{instance: c.InstanceID, byJob: c.MetricsByJob, log: s.log, sets: make(map[attrKey]*measureOpts)}
	t.tracer = tracectx.NewTracer(c.TracerProvider, ScopeName)
	mp := c.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		i, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		i, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return i
	}
	t.occurrences = counter("jobclock.occurrences.started", "{occurrence}", "Occurrences whose first attempt started.")
	t.faulted = counter("jobclock.occurrences.faulted", "{occurrence}", "Occurrences whose main action failed its last retry (the job's faultedCount).")
	t.attempts = counter("jobclock.attempts", "{attempt}", "History entries: attempts by action and outcome, and postponed occurrences.")
	t.duration = histogram("jobclock.attempt.duration", "Duration of attempts, from start to end of the executor's call.", durationBuckets)
	t.lateness = histogram("jobclock.occurrence.lateness", "Time from an occurrence's expected time to the start of its first attempt.", latenessBuckets)
	t.missed = counter("jobclock.occurrences.missed", "{occurrence}", "Scheduled occurrences passed over without running: merged into another occurrence or skipped by the misfire policy.")
	t.takeovers = counter("jobclock.lease.takeovers", "{lease}", "Claims of jobs whose lease another instance held and let expire.")
	t.storeTime = histogram("jobclock.store.operation.duration", "Duration of the store calls of the run loop.", storeBuckets)
	t.storeErrors = counter("jobclock.store.operation.errors", "{error}", "Store calls of the run loop that failed.")
	t.pruned = counter("jobclock.history.pruned", "{record}", "History entries and final jobs deleted by retention.")
	jobs, err := m.Int64ObservableGauge("jobclock.jobs", metric.WithUnit("{job}"), metric.WithDescription("Jobs in the store by collection and state."))
	errs = append(errs, err)
	due, err := m.Int64ObservableGauge("jobclock.jobs.due", metric.WithUnit("{job}"), metric.WithDescription("Jobs due and not started: the backlog."))
	errs = append(errs, err)
	inFlight, err := m.Int64ObservableGauge("jobclock.jobs.in_flight", metric.WithUnit("{job}"), metric.WithDescription("Claimed jobs being worked on by this instance."))
	errs = append(errs, err)
	limit, err := m.Int64ObservableGauge("jobclock.jobs.in_flight.limit", metric.WithUnit("{job}"), metric.WithDescription("The most jobs this instance works on at once (Config.MaxConcurrency)."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		s.log.Warn("telemetry: creating instruments", "err", err)
	}
	g := &gauges{s: s, maxAge: c.StatsMaxAge, jobs: jobs, due: due}
	reg, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		o.ObserveInt64(inFlight, s.inFlight.Load())
		o.ObserveInt64(limit, int64(s.cfg.MaxConcurrency))
		return g.observe(ctx, o)
	}, jobs, due, inFlight, limit)
	if err != nil {
		s.log.Warn("telemetry: registering the gauges", "err", err)
	}
	t.gauges = reg
	return t
}

// tracing returns the tracer to start spans with, or nil when spans would
// not record.
func (t *telemetry) tracing() trace.Tracer { return t.tracer.Get() }

// measuring reports whether the per-attempt instruments record.
func (t *telemetry) measuring(ctx context.Context) bool {
	return t.attempts.Enabled(ctx) || t.duration.Enabled(ctx) || t.lateness.Enabled(ctx) || t.faulted.Enabled(ctx)
}

// active reports whether spans or metrics record, that is whether the
// extra work of describing a step is worth doing.
func (t *telemetry) active(ctx context.Context) bool {
	return t.tracing() != nil || t.measuring(ctx) || t.missed.Enabled(ctx)
}

// opts returns the measurement options of an attribute set.
func (t *telemetry) opts(k attrKey) *measureOpts {
	if !t.byJob {
		k.collection, k.job = "", ""
	}
	t.mu.RLock()
	o := t.sets[k]
	t.mu.RUnlock()
	if o != nil {
		return o
	}
	attrs := []attribute.KeyValue{keyActionType.String(string(k.actionType))}
	if k.name != "" {
		attrs = append(attrs, keyActionName.String(string(k.name)))
	}
	if k.status != "" {
		attrs = append(attrs, keyOutcome.String(string(k.status)))
	}
	if t.byJob {
		attrs = append(attrs, keyCollection.String(k.collection), keyJob.String(k.job))
	}
	o = newMeasureOpts(attrs...)
	t.mu.Lock()
	if len(t.sets) >= maxAttrSets {
		clear(t.sets) // with MetricsByJob and very many jobs: keep memory bounded
	}
	t.sets[k] = o
	t.mu.Unlock()
	return o
}

// maxAttrSets bounds the cache of measurement options.
const maxAttrSets = 4096

// actionOf returns the action of def that history entry h is about.
func actionOf(def *Job, name ActionName) *action.Action {
	if def == nil {
		return nil
	}
	if name == ErrorAction {
		return def.Action.ErrorAction
	}
	return &def.Action
}

func actionType(a *action.Action) action.Type {
	if a == nil {
		return ""
	}
	return a.Type
}

// history measures and traces history entries once they are stored: every
// entry counts in jobclock.attempts, attempts in jobclock.attempt.duration,
// the first attempt of an occurrence in jobclock.occurrences.started and
// jobclock.occurrence.lateness, the last failed retry of the main action in
// jobclock.occurrences.faulted, and each Postponed entry is a span.
func (t *telemetry) history(def *Job, hist []HistoryEntry) {
	ctx := context.Background()
	tr := t.tracing()
	if tr == nil && !t.measuring(ctx) {
		return
	}
	for i := range hist {
		h := &hist[i]
		typ := actionType(actionOf(def, h.ActionName))
		o := t.opts(attrKey{typ, h.ActionName, h.Status, h.Collection, h.Job})
		t.attempts.Add(ctx, 1, o.add...)
		if h.Status == StatusPostponed {
			if tr != nil {
				t.postponed(tr, typ, h)
			}
			continue
		}
		t.duration.Record(ctx, h.EndTime.Sub(h.StartTime).Seconds(), o.rec...)
		if h.ActionName != MainAction {
			continue
		}
		if h.RetryCount == 0 {
			first := t.opts(attrKey{actionType: typ, collection: h.Collection, job: h.Job})
			t.occurrences.Add(ctx, 1, first.add...)
			t.lateness.Record(ctx, max(h.StartTime.Sub(h.ExpectedExecutionTime), 0).Seconds(), first.rec...)
		}
		if h.Status == StatusFailed && def != nil && h.RetryCount >= def.Action.RetryPolicy.Retries() {
			t.faulted.Add(ctx, 1, t.opts(attrKey{actionType: typ, collection: h.Collection, job: h.Job}).add...)
		}
	}
}

// postponed records the zero-length span of a Postponed history entry.
func (t *telemetry) postponed(tr trace.Tracer, typ action.Type, h *HistoryEntry) {
	_, span := tr.Start(context.Background(), spanPostpone,
		trace.WithTimestamp(h.StartTime),
		trace.WithAttributes(
			keyCollection.String(h.Collection), keyJob.String(h.Job), keyActionType.String(string(typ)),
			keyOccurrence.Int(h.RepeatCount), keyExpected.String(h.ExpectedExecutionTime.UTC().Format(time.RFC3339Nano)),
			keyInstance.String(t.instance)))
	span.End(trace.WithTimestamp(h.EndTime))
}

// missed describes scheduled occurrences that a step of the state machine
// passed over without starting them.
type missed struct {
	n           int // how many; at most maxMissedCounted are counted
	first, last time.Time
	collection  string
	job         string
	policy      MisfirePolicy
	at          time.Time // when the step ran
}

// passedOver compares the schedule of r after a step at now with its
// NextOccurrence and Counted before it, and describes the occurrences the
// step passed over without taking them; nil when there are none, or when
// nobody records telemetry.
func (t *telemetry) passedOver(r *JobRecord, tm *Timing, next0 time.Time, counted0 int, policy MisfirePolicy, now time.Time) *missed {
	sc := &r.Schedule
	next1 := sc.NextOccurrence
	if tm == nil || next0.IsZero() || next1.Equal(next0) || policy == MisfireRunAll || !t.active(context.Background()) {
		return nil
	}
	taken := sc.Counted - counted0
	var m missed
	passed := 0
	for at := next0; !at.IsZero() && !at.After(now) && (next1.IsZero() || at.Before(next1)) && passed < maxMissedCounted+taken; {
		passed++
		if passed > taken {
			if m.first.IsZero() {
				m.first = at
			}
			m.last = at
		}
		n := tm.Next(at)
		if !n.After(at) {
			break
		}
		at = n
	}
	if m.n = passed - taken; m.n <= 0 {
		return nil
	}
	m.collection, m.job, m.policy, m.at = r.Collection, r.Name, policy, now
	return &m
}

// record counts m and, unless it is shown on the attempt that absorbed it,
// records its zero-length span.
func (t *telemetry) recordMissed(m *missed, span bool) {
	if m == nil {
		return
	}
	ctx := context.Background()
	t.missed.Add(ctx, int64(m.n), t.policyOpts(m.policy).add...)
	if !span {
		return
	}
	if tr := t.tracing(); tr != nil {
		_, sp := tr.Start(ctx, spanMisfire, trace.WithTimestamp(m.at), trace.WithAttributes(
			keyCollection.String(m.collection), keyJob.String(m.job), keyPolicy.String(string(m.policy)),
			keyMissed.Int(m.n), keyFirstMissed.String(m.first.UTC().Format(time.RFC3339Nano)),
			keyLastMissed.String(m.last.UTC().Format(time.RFC3339Nano)), keyInstance.String(t.instance)))
		sp.End(trace.WithTimestamp(m.at))
	}
}

var policySets sync.Map // MisfirePolicy → *measureOpts

func (t *telemetry) policyOpts(p MisfirePolicy) *measureOpts {
	if o, ok := policySets.Load(p); ok {
		return o.(*measureOpts)
	}
	o, _ := policySets.LoadOrStore(p, newMeasureOpts(keyPolicy.String(string(p))))
	return o.(*measureOpts)
}

// takeover counts a claim of a job whose lease another instance held.
func (t *telemetry) takeover() {
	t.takeovers.Add(context.Background(), 1)
}

// attemptInfo is what execute needs to know beyond the occurrence to
// describe an attempt.
type attemptInfo struct {
	prevOwner string  // the instance whose lease this claim took over
	missed    *missed // occurrences merged into this one by the step that started it
}

// startAttempt starts the span of attempt o of r at start, as a child of
// the occurrence's trace context when it has one, and returns the context
// the executor gets. With no tracer, ctx gets the occurrence's trace
// context alone (when it has one), so that executors still pass it on.
func (t *telemetry) startAttempt(ctx context.Context, tr trace.Tracer, r *JobRecord, o *Occurrence, act *action.Action, start time.Time, info attemptInfo) (context.Context, trace.Span) {
	if o.Trace != "" {
		ctx = tracectx.Extract(ctx, o.Trace, o.TraceState)
	}
	if tr == nil {
		return ctx, nil
	}
	due := o.Expected
	if o.Retry > 0 || o.ErrorAction {
		due = o.At
	}
	name := MainAction
	if o.ErrorAction {
		name = ErrorAction
	}
	attrs := make([]attribute.KeyValue, 0, 14)
	attrs = append(attrs,
		keyCollection.String(r.Collection), keyJob.String(r.Name),
		keyActionType.String(string(actionType(act))), keyActionName.String(string(name)),
		keyOccurrence.Int(o.Number), keyRetry.Int(o.Retry),
		keyExpected.String(o.Expected.UTC().Format(time.RFC3339Nano)),
		keyLateness.Float64(max(start.Sub(due), 0).Seconds()),
		keyTag.String(o.Tag), keyInstance.String(t.instance))
	if o.Manual {
		attrs = append(attrs, keyManual.Bool(true))
	}
	if info.prevOwner != "" {
		attrs = append(attrs, keyPrevOwner.String(info.prevOwner))
	}
	if m := info.missed; m != nil {
		attrs = append(attrs, keyMissed.Int(m.n), keyPolicy.String(string(m.policy)),
			keyFirstMissed.String(m.first.UTC().Format(time.RFC3339Nano)), keyLastMissed.String(m.last.UTC().Format(time.RFC3339Nano)))
	}
	return tr.Start(ctx, spanAttempt, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endAttempt ends the span of an attempt with its outcome.
func endAttempt(span trace.Span, res *outcome) {
	if res.err == nil {
		span.SetAttributes(keyOutcome.String(string(StatusCompleted)))
	} else {
		span.SetAttributes(keyOutcome.String(string(StatusFailed)), keyErrorType.String(errorType(res.err)))
		span.SetStatus(codes.Error, res.err.Error())
	}
	span.End(trace.WithTimestamp(res.end))
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

// storeOp names a store call of the run loop.
type storeOp int

const (
	opClaimDue storeOp = iota
	opNextDue
	opRecord
	opRecordBatch
	opExtendLease
	opGetJob
	opPrune
	numStoreOps
)

var storeOpNames = [numStoreOps]string{"ClaimDue", "NextDue", "Record", "RecordBatch", "ExtendLease", "GetJob", "Prune"}

var storeOpSets = func() (s [numStoreOps]*measureOpts) {
	for i := range s {
		s[i] = newMeasureOpts(keyStoreOp.String(storeOpNames[i]))
	}
	return s
}()

// storeStart returns the start time of a store call to measure, or the
// zero Time when store calls are not measured.
func (t *telemetry) storeStart() time.Time {
	if t.storeTime.Enabled(context.Background()) || t.storeErrors.Enabled(context.Background()) {
		return time.Now()
	}
	return time.Time{}
}

// storeEnd measures a store call that started at start (from storeStart).
func (t *telemetry) storeEnd(op storeOp, start time.Time, err error) {
	if start.IsZero() {
		return
	}
	ctx := context.Background()
	d := time.Since(start).Seconds()
	if err == nil {
		t.storeTime.Record(ctx, d, storeOpSets[op].rec...)
		return
	}
	set := metric.WithAttributeSet(attribute.NewSet(keyStoreOp.String(storeOpNames[op]), keyErrorType.String(storeErrorType(err))))
	t.storeTime.Record(ctx, d, set)
	t.storeErrors.Add(ctx, 1, set)
}

// storeBatchEnd measures a RecordBatch call of n elements that started at
// start: its duration, and each element that failed as an error.
func (t *telemetry) storeBatchEnd(start time.Time, errs []error, n int) {
	if start.IsZero() {
		return
	}
	ctx := context.Background()
	t.storeTime.Record(ctx, time.Since(start).Seconds(), storeOpSets[opRecordBatch].rec...)
	for i := range n {
		err := errShortBatch
		if i < len(errs) {
			err = errs[i]
		}
		if err != nil {
			t.storeErrors.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
				keyStoreOp.String(storeOpNames[opRecordBatch]), keyErrorType.String(storeErrorType(err)))))
		}
	}
}

// prunedRecords counts what retention deleted.
func (t *telemetry) prunedRecords(n int) {
	t.pruned.Add(context.Background(), int64(n))
}

// storeErrorType classifies a store error for error.type.
func storeErrorType(err error) string {
	switch {
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return errorTypeOther
}

// gauges answers the observable gauges of job counts and backlog from
// counts read at most once per maxAge, since a count can cost a store a
// scan (tens of milliseconds for 100,000 jobs in PostgreSQL).
type gauges struct {
	s      *Scheduler
	maxAge time.Duration
	jobs   metric.Int64Observable
	due    metric.Int64Observable

	mu      sync.Mutex
	read    time.Time // when counts and backlog were read; zero: never
	counts  []JobCount
	sets    map[[2]string]metric.ObserveOption
	backlog int
	ok      bool // the last read succeeded
}

// gaugeTimeout bounds one reading of the counts.
const gaugeTimeout = 5 * time.Second

func (g *gauges) observe(ctx context.Context, o metric.Observer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := time.Now(); g.read.IsZero() || now.Sub(g.read) >= g.maxAge {
		g.read = now
		ctx, cancel := context.WithTimeout(ctx, gaugeTimeout)
		counts, err := g.s.JobCounts(ctx)
		var backlog int
		if err == nil {
			backlog, err = g.s.DueCount(ctx)
		}
		cancel()
		g.ok = err == nil
		if err != nil {
			if !errors.Is(err, ErrStopped) {
				g.s.log.Warn("telemetry: reading job counts for the gauges", "err", err)
			}
			return nil // report nothing rather than stale or partial counts
		}
		g.counts, g.backlog = counts, backlog
	}
	if !g.ok {
		return nil
	}
	if g.sets == nil {
		g.sets = make(map[[2]string]metric.ObserveOption)
	}
	for _, c := range g.counts {
		k := [2]string{c.Collection, string(c.State)}
		opt, found := g.sets[k]
		if !found {
			opt = metric.WithAttributeSet(attribute.NewSet(keyCollection.String(c.Collection), keyJobState.String(string(c.State))))
			if len(g.sets) >= maxAttrSets {
				clear(g.sets)
			}
			g.sets[k] = opt
		}
		o.ObserveInt64(g.jobs, int64(c.Jobs), opt)
	}
	o.ObserveInt64(g.due, int64(g.backlog))
	return nil
}

// stop unregisters the gauges' callback.
func (t *telemetry) stop() {
	if t.gauges != nil {
		if err := t.gauges.Unregister(); err != nil {
			t.log.Warn("telemetry: unregistering the gauges", "err", err)
		}
	}
}

// TraceHandler returns a slog.Handler that adds the trace_id and span_id
// of the span in a record's context (as the *Context logging methods pass
// it) to the record, then hands it to h, so that log records written while
// a span is active join its trace. Records without a valid span context
// pass unchanged. The Scheduler wraps Config.Logger's handler with it; a
// host may wrap its own.
func TraceHandler(h slog.Handler) slog.Handler {
	if th, ok := h.(*traceHandler); ok {
		return th
	}
	return &traceHandler{h}
}

type traceHandler struct{ h slog.Handler }

func (t *traceHandler) Enabled(ctx context.Context, l slog.Level) bool { return t.h.Enabled(ctx, l) }

func (t *traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r = r.Clone()
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return t.h.Handle(ctx, r)
}

func (t *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{t.h.WithAttrs(as)}
}
func (t *traceHandler) WithGroup(name string) slog.Handler { return &traceHandler{t.h.WithGroup(name)} }
