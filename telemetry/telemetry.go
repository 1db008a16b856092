package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// ScopeName is the instrumentation scope of the Scheduler's spans and
// metrics: the name the Observer passes to TracerProvider.Tracer and
// MeterProvider.Meter. The REST API's are in the scope
// github.com/jobclock/scheduler/httpapi, the executors' in the scope of
// their package (github.com/jobclock/scheduler/action/http, and so on).
const ScopeName = "github.com/jobclock/scheduler"

// httpScope is the instrumentation scope of the REST API's spans and
// metrics.
const httpScope = "github.com/jobclock/scheduler/httpapi"

// DefaultStatsMaxAge is how long the job-count gauges reuse a reading of
// the store by default (Options.StatsMaxAge).
const DefaultStatsMaxAge = 10 * time.Second

// Options configure an Observer. A nil *Options means every default.
type Options struct {
	// TracerProvider makes the spans of attempts, postponed occurrences,
	// misfires and REST API requests; the executors' spans are made with
	// the provider of the attempt's span. Nil means the global provider
	// (otel.GetTracerProvider), which records nothing until the host
	// installs an SDK with otel.SetTracerProvider; until then each
	// attempt costs a few atomic loads.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments. Nil means the global provider
	// (otel.GetMeterProvider), which measures nothing until the host
	// installs an SDK with otel.SetMeterProvider.
	MeterProvider metric.MeterProvider
	// MetricsByJob adds the attributes jobclock.collection and
	// jobclock.job to the per-attempt instruments (jobclock.attempts,
	// jobclock.attempt.duration, jobclock.occurrences.started,
	// jobclock.occurrence.lateness). Each job then has time series of its
	// own, so leave it off with more than a few hundred jobs. Defaults to
	// false: those instruments carry the action type, action name and
	// outcome only.
	MetricsByJob bool
	// StatsMaxAge is the longest the gauges jobclock.jobs and
	// jobclock.jobs.due reuse the counts they read from the store (one
	// JobCounts and one DueCount call), so that frequent scrapes by
	// several readers cost the store one count per period. Defaults to
	// DefaultStatsMaxAge (10s).
	StatsMaxAge time.Duration
	// Logger receives the Observer's warnings (an instrument that could
	// not be made, job counts that could not be read). Nil means
	// slog.Default().
	Logger *slog.Logger
}

// The names of the Scheduler's spans; the package documentation describes
// each.
const (
	spanAttempt  = "jobclock.attempt"
	spanPostpone = "jobclock.postpone"
	spanMisfire  = "jobclock.misfire"
)

// The attribute keys of spans and metrics; the package documentation
// describes each.
const (
	keyCollection  = attribute.Key("jobclock.collection")
	keyJob         = attribute.Key("jobclock.job")
	keyActionType  = attribute.Key("jobclock.action.type")
	keyActionName  = attribute.Key("jobclock.action.name")
	keyOccurrence  = attribute.Key("jobclock.occurrence.number")
	keyExpected    = attribute.Key("jobclock.occurrence.expected_time")
	keyManual      = attribute.Key("jobclock.occurrence.manual")
	keyMissed      = attribute.Key("jobclock.occurrence.missed")
	keyRetry       = attribute.Key("jobclock.attempt.retry")
	keyLateness    = attribute.Key("jobclock.attempt.lateness")
	keyOutcome     = attribute.Key("jobclock.attempt.outcome")
	keyTag         = attribute.Key("jobclock.execution_tag")
	keyInstance    = attribute.Key("jobclock.instance")
	keyPrevOwner   = attribute.Key("jobclock.lease.previous_owner")
	keyPolicy      = attribute.Key("jobclock.misfire.policy")
	keyFirstMissed = attribute.Key("jobclock.misfire.first_expected_time")
	keyLastMissed  = attribute.Key("jobclock.misfire.last_expected_time")
	keyJobState    = attribute.Key("jobclock.job.state")
	keyJobHealth   = attribute.Key("jobclock.job.health")
	keyStoreOp     = attribute.Key("jobclock.store.operation")
	keyLimitKey    = attribute.Key("jobclock.limit.key")
	keyErrorType   = attribute.Key("error.type")
	errorTypeOther = "_OTHER"
)

// Bucket boundaries of the histograms, in seconds.
var (
	durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}
	latenessBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	storeBuckets    = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// httpBuckets are the bucket boundaries OpenTelemetry's HTTP
	// conventions advise for http.server.request.duration.
	httpBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
)

// Observer traces and measures Schedulers and REST API handlers with
// OpenTelemetry: it is a [scheduler.Observer] (Config.Observer) and an
// [httpapi.Observer] (Options.Observer). One Observer may serve several
// Schedulers and handlers. Make it with New.
type Observer struct {
	tracer *tracer // the Scheduler's
	byJob  bool
	maxAge time.Duration
	log    *slog.Logger
	meter  metric.Meter

	occurrences metric.Int64Counter
	faulted     metric.Int64Counter
	attempts    metric.Int64Counter
	duration    metric.Float64Histogram
	lateness    metric.Float64Histogram
	missed      metric.Int64Counter
	timedOut    metric.Int64Counter
	permanent   metric.Int64Counter
	retryAfter  metric.Int64Counter
	afterWait   metric.Float64Histogram
	limitWaits  metric.Int64Counter
	limitWait   metric.Float64Histogram
	permitsLost metric.Int64Counter
	takeovers   metric.Int64Counter
	storeTime   metric.Float64Histogram
	storeErrors metric.Int64Counter
	pruned      metric.Int64Counter
	jobs        metric.Int64ObservableGauge
	due         metric.Int64ObservableGauge
	health      metric.Int64ObservableGauge
	inFlight    metric.Int64ObservableGauge
	limit       metric.Int64ObservableGauge

	mu   sync.RWMutex
	sets map[attrKey]*measureOpts

	http httpObserver
}

var (
	_ scheduler.Observer = (*Observer)(nil)
	_ httpapi.Observer   = (*Observer)(nil)
)

// attrKey identifies one attribute set of the per-attempt instruments.
type attrKey struct {
	actionType action.Type
	name       scheduler.ActionName
	status     scheduler.ExecutionStatus
	collection string // with Options.MetricsByJob
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

// New returns an Observer that makes its spans and instruments with the
// providers of opts (nil: all defaults).
func New(opts *Options) *Observer {
	var c Options
	if opts != nil {
		c = *opts
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StatsMaxAge <= 0 {
		c.StatsMaxAge = DefaultStatsMaxAge
	}
	mp := c.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	o := &Observer{tracer: newTracer(c.TracerProvider, ScopeName), byJob: c.MetricsByJob, maxAge: c.StatsMaxAge,
		log: c.Logger, sets: make(map[attrKey]*measureOpts)}
	m := mp.Meter(ScopeName)
	o.meter = m
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
	gauge := func(name, desc string) metric.Int64ObservableGauge {
		i, err := m.Int64ObservableGauge(name, metric.WithUnit("{job}"), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	o.occurrences = counter("jobclock.occurrences.started", "{occurrence}", "Occurrences whose first attempt started.")
	o.faulted = counter("jobclock.occurrences.faulted", "{occurrence}", "Occurrences that faulted: their main action's last attempt failed, whatever ended its retries (the job's faultedCount).")
	o.attempts = counter("jobclock.attempts", "{attempt}", "History entries: attempts by action and outcome, and postponed occurrences.")
	o.duration = histogram("jobclock.attempt.duration", "Duration of attempts, from start to end of the executor's call.", durationBuckets)
	o.lateness = histogram("jobclock.occurrence.lateness", "Time from an occurrence's expected time to the start of its first attempt.", latenessBuckets)
	o.missed = counter("jobclock.occurrences.missed", "{occurrence}", "Scheduled occurrences passed over without running: merged into another occurrence or skipped by the misfire policy.")
	o.timedOut = counter("jobclock.attempts.timed_out", "{attempt}", "Attempts failed because they outlived their timeout, which cancelled them.")
	o.permanent = counter("jobclock.attempts.permanent", "{attempt}", "Attempts failed with a permanent error: not retried.")
	o.retryAfter = counter("jobclock.attempts.retry_after", "{attempt}", "Failed attempts whose answer's Retry-After asked the next retry to wait.")
	o.afterWait = histogram("jobclock.attempt.retry_after.wait", "The wait a Retry-After asked for, from the end of the attempt.", latenessBuckets)
	o.limitWaits = counter("jobclock.limit.waits", "{attempt}", "Attempts that waited for the permits of their collection's limits.")
	o.limitWait = histogram("jobclock.limit.wait", "How long an attempt was held back by its collection's limits, from the first refusal to the end of the last wait.", latenessBuckets)
	o.permitsLost = counter("jobclock.limit.permits_lost", "{attempt}", "Attempts cancelled because the permits of their collection's limits expired unextended while they ran.")
	o.takeovers = counter("jobclock.lease.takeovers", "{lease}", "Attempts started by claims that took over a lease another instance held and let expire.")
	o.storeTime = histogram("jobclock.store.operation.duration", "Duration of the store calls of the run loop.", storeBuckets)
	o.storeErrors = counter("jobclock.store.operation.errors", "{error}", "Store calls of the run loop that failed.")
	o.pruned = counter("jobclock.history.pruned", "{record}", "History entries and final jobs deleted by retention.")
	o.jobs = gauge("jobclock.jobs", "Jobs in the store by collection and state.")
	o.due = gauge("jobclock.jobs.due", "Jobs due and not started: the backlog.")
	o.health = gauge("jobclock.jobs.health", "Jobs in the store by health (OK, Skipped, Stale, Late, Failing).")
	o.inFlight = gauge("jobclock.jobs.in_flight", "Claimed jobs being worked on by this instance.")
	o.limit = gauge("jobclock.jobs.in_flight.limit", "The most jobs this instance works on at once (Config.MaxConcurrency).")
	if err := errors.Join(errs...); err != nil {
		o.log.Warn("telemetry: creating instruments", "err", err)
	}
	o.http.init(&c)
	return o
}

// measuring reports whether the per-attempt instruments record.
func (o *Observer) measuring(ctx context.Context) bool {
	return o.attempts.Enabled(ctx) || o.duration.Enabled(ctx) || o.lateness.Enabled(ctx) || o.faulted.Enabled(ctx)
}

// opts returns the measurement options of an attribute set.
func (o *Observer) opts(k attrKey) *measureOpts {
	if !o.byJob {
		k.collection, k.job = "", ""
	}
	o.mu.RLock()
	m := o.sets[k]
	o.mu.RUnlock()
	if m != nil {
		return m
	}
	attrs := []attribute.KeyValue{keyActionType.String(string(k.actionType))}
	if k.name != "" {
		attrs = append(attrs, keyActionName.String(string(k.name)))
	}
	if k.status != "" {
		attrs = append(attrs, keyOutcome.String(string(k.status)))
	}
	if o.byJob {
		// Copies: a claimed record's names may share their bytes with
		// others' (a SQL store's claim buffers), which the set and the
		// series made of it would keep alive.
		k.collection, k.job = strings.Clone(k.collection), strings.Clone(k.job)
		attrs = append(attrs, keyCollection.String(k.collection), keyJob.String(k.job))
	}
	m = newMeasureOpts(attrs...)
	o.mu.Lock()
	if len(o.sets) >= maxAttrSets {
		clear(o.sets) // with MetricsByJob and very many jobs: keep memory bounded
	}
	o.sets[k] = m
	o.mu.Unlock()
	return m
}

// maxAttrSets bounds the caches of measurement options.
const maxAttrSets = 4096

// actionOf returns the action of def that a history entry of action name
// is about.
func actionOf(def *scheduler.Job, name scheduler.ActionName) *action.Action {
	if def == nil {
		return nil
	}
	if name == scheduler.ErrorAction {
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

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// StartAttempt implements [scheduler.Observer]: it starts the span of the
// attempt, as a child of the occurrence's trace context when it has one.
// Without a tracer that records, ctx gets the occurrence's trace context
// alone (when it has one), for the host's executors.
func (o *Observer) StartAttempt(ctx context.Context, a scheduler.Attempt) context.Context {
	if a.LimitWait > 0 || a.LimitKey != "" {
		o.limitWaited(ctx, a)
	}
	ctx = extract(ctx, a.Trace, a.TraceState)
	tr := o.tracer.get()
	if tr == nil {
		return ctx
	}
	attrs := make([]attribute.KeyValue, 0, 14)
	attrs = append(attrs,
		keyCollection.String(a.Collection), keyJob.String(a.Job),
		keyActionType.String(string(a.ActionType)), keyActionName.String(string(a.ActionName)),
		keyOccurrence.Int(a.Occurrence), keyRetry.Int(a.Retry),
		keyExpected.String(rfc3339(a.Expected)),
		keyLateness.Float64(max(a.Start.Sub(a.Due), 0).Seconds()),
		keyTag.String(a.Tag), keyInstance.String(a.Instance))
	if a.Manual {
		attrs = append(attrs, keyManual.Bool(true))
	}
	if a.PreviousOwner != "" {
		attrs = append(attrs, keyPrevOwner.String(a.PreviousOwner))
	}
	if m := a.Missed; m != nil {
		attrs = append(attrs, keyMissed.Int(m.Count), keyPolicy.String(string(m.Policy)),
			keyFirstMissed.String(rfc3339(m.First)), keyLastMissed.String(rfc3339(m.Last)))
	}
	ctx, sp := tr.Start(ctx, spanAttempt, trace.WithTimestamp(a.Start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return tracectx.With(ctx, span{Span: sp, mine: true})
}

// limitWaited counts attempt a, which waited for the permits of its
// collection's limits, in jobclock.limit.waits and jobclock.limit.wait,
// by the key of the limit that refused it last.
func (o *Observer) limitWaited(ctx context.Context, a scheduler.Attempt) {
	key := string(a.LimitKey)
	if key == "" {
		key = errorTypeOther // the store failed
	}
	opt := metric.WithAttributeSet(attribute.NewSet(keyLimitKey.String(key)))
	o.limitWaits.Add(ctx, 1, opt)
	o.limitWait.Record(ctx, a.LimitWait.Seconds(), opt)
}

// EndAttempt implements [scheduler.Observer]: it counts a failed attempt
// in jobclock.attempts.timed_out, jobclock.attempts.permanent,
// jobclock.attempts.retry_after and jobclock.limit.permits_lost as they
// apply, and ends the attempt's
// span with its outcome.
func (o *Observer) EndAttempt(ctx context.Context, e scheduler.AttemptEnd) {
	if e.Err != nil {
		if e.TimedOut {
			o.timedOut.Add(ctx, 1)
		}
		if e.Permanent {
			o.permanent.Add(ctx, 1)
		}
		if e.PermitsLost {
			o.permitsLost.Add(ctx, 1)
		}
		if !e.RetryAfter.IsZero() {
			o.retryAfter.Add(ctx, 1)
			o.afterWait.Record(ctx, e.RetryAfter.Sub(e.End).Seconds())
		}
	}
	sp, ok := tracectx.From(ctx).(span)
	if !ok || !sp.mine {
		return
	}
	if e.Err == nil {
		sp.SetAttributes(keyOutcome.String(string(scheduler.StatusCompleted)))
	} else {
		sp.SetAttributes(keyOutcome.String(string(scheduler.StatusFailed)), keyErrorType.String(e.ErrorType))
		sp.SetStatus(codes.Error, e.Err.Error())
	}
	sp.Span.End(trace.WithTimestamp(e.End))
}

// HistoryStored implements [scheduler.Observer]: every entry but the
// Skipped ones (which jobclock.occurrences.missed counts, through Missed)
// counts in jobclock.attempts, attempts in jobclock.attempt.duration, the
// first attempt of an occurrence in jobclock.occurrences.started and
// jobclock.occurrence.lateness, the entry that faulted its occurrence
// (HistoryEntry.Faulted) in jobclock.occurrences.faulted, and each
// Postponed entry is a span.
func (o *Observer) HistoryStored(h scheduler.StoredHistory) {
	ctx := context.Background()
	tr := o.tracer.get()
	if tr == nil && !o.measuring(ctx) {
		return
	}
	def := h.Job
	for i := range h.Entries {
		e := &h.Entries[i]
		if e.Status == scheduler.StatusSkipped {
			continue
		}
		typ := actionType(actionOf(def, e.ActionName))
		m := o.opts(attrKey{typ, e.ActionName, e.Status, e.Collection, e.Job})
		o.attempts.Add(ctx, 1, m.add...)
		if e.Status == scheduler.StatusPostponed {
			if tr != nil {
				postponed(tr, typ, h.Instance, e)
			}
			continue
		}
		o.duration.Record(ctx, e.EndTime.Sub(e.StartTime).Seconds(), m.rec...)
		if e.ActionName != scheduler.MainAction {
			continue
		}
		if e.RetryCount == 0 {
			first := o.opts(attrKey{actionType: typ, collection: e.Collection, job: e.Job})
			o.occurrences.Add(ctx, 1, first.add...)
			// The wait for the collection's limits is not lateness.
			o.lateness.Record(ctx, max(e.StartTime.Sub(e.ExpectedExecutionTime)-e.LimitWait(), 0).Seconds(), first.rec...)
		}
		if e.Faulted {
			o.faulted.Add(ctx, 1, o.opts(attrKey{actionType: typ, collection: e.Collection, job: e.Job}).add...)
		}
	}
}

// postponed records the zero-length span of a Postponed history entry.
func postponed(tr trace.Tracer, typ action.Type, instance string, h *scheduler.HistoryEntry) {
	_, sp := tr.Start(context.Background(), spanPostpone,
		trace.WithTimestamp(h.StartTime),
		trace.WithAttributes(
			keyCollection.String(h.Collection), keyJob.String(h.Job), keyActionType.String(string(typ)),
			keyOccurrence.Int(h.RepeatCount), keyExpected.String(rfc3339(h.ExpectedExecutionTime)),
			keyInstance.String(instance)))
	sp.End(trace.WithTimestamp(h.EndTime))
}

// Missed implements [scheduler.Observer]: it counts the occurrences and,
// unless they are shown on the attempt that absorbed them, records the
// zero-length span jobclock.misfire.
func (o *Observer) Missed(m scheduler.Misfire) {
	ctx := context.Background()
	o.missed.Add(ctx, int64(m.Count), policyOpts(m.Policy).add...)
	if m.OnAttempt {
		return
	}
	if tr := o.tracer.get(); tr != nil {
		_, sp := tr.Start(ctx, spanMisfire, trace.WithTimestamp(m.At), trace.WithAttributes(
			keyCollection.String(m.Collection), keyJob.String(m.Job), keyPolicy.String(string(m.Policy)),
			keyMissed.Int(m.Count), keyFirstMissed.String(rfc3339(m.First)),
			keyLastMissed.String(rfc3339(m.Last)), keyInstance.String(m.Instance)))
		sp.End(trace.WithTimestamp(m.At))
	}
}

var policySets sync.Map // scheduler.MisfirePolicy → *measureOpts

func policyOpts(p scheduler.MisfirePolicy) *measureOpts {
	if m, ok := policySets.Load(p); ok {
		return m.(*measureOpts)
	}
	m, _ := policySets.LoadOrStore(p, newMeasureOpts(keyPolicy.String(string(p))))
	return m.(*measureOpts)
}

// TookOver implements [scheduler.Observer]: it counts the takeover in
// jobclock.lease.takeovers.
func (o *Observer) TookOver(scheduler.Takeover) {
	o.takeovers.Add(context.Background(), 1)
}

// storeOps are the measurement options of the store calls the run loop
// makes, by StoreCall.Op.
var storeOps = func() map[string]*measureOpts {
	m := map[string]*measureOpts{}
	for _, op := range []string{"ClaimDue", "GiveBack", "NextDue", "Record", "RecordBatch", "ExtendLease", "ExtendLeases", "GetJob", "PutJob",
		"Prune", "AcquirePermits", "ExtendPermits", "ReleasePermits"} {
		m[op] = newMeasureOpts(keyStoreOp.String(op))
	}
	return m
}()

// StoreCalled implements [scheduler.Observer]: it measures the call in
// jobclock.store.operation.duration and counts its errors (each failed
// element of a RecordBatch call) in jobclock.store.operation.errors.
func (o *Observer) StoreCalled(c scheduler.StoreCall) {
	ctx := context.Background()
	if !o.storeTime.Enabled(ctx) && !o.storeErrors.Enabled(ctx) {
		return
	}
	d := c.Duration.Seconds()
	if c.Err == nil {
		m := storeOps[c.Op]
		if m == nil {
			m = newMeasureOpts(keyStoreOp.String(c.Op))
		}
		o.storeTime.Record(ctx, d, m.rec...)
		for _, err := range c.Errs {
			if err != nil {
				o.storeErrors.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
					keyStoreOp.String(c.Op), keyErrorType.String(storeErrorType(err)))))
			}
		}
		return
	}
	set := metric.WithAttributeSet(attribute.NewSet(keyStoreOp.String(c.Op), keyErrorType.String(storeErrorType(c.Err))))
	o.storeTime.Record(ctx, d, set)
	o.storeErrors.Add(ctx, 1, set)
}

// storeErrorType classifies a store error for error.type.
func storeErrorType(err error) string {
	switch {
	case errors.Is(err, scheduler.ErrConflict):
		return "conflict"
	case errors.Is(err, scheduler.ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, scheduler.ErrNotFound):
		return "not_found"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return errorTypeOther
}

// Pruned implements [scheduler.Observer]: it counts what retention deleted
// in jobclock.history.pruned.
func (o *Observer) Pruned(n int) {
	o.pruned.Add(context.Background(), int64(n))
}

// TraceParent implements [scheduler.Observer]: it returns the W3C trace
// context of the OpenTelemetry span in ctx.
func (o *Observer) TraceParent(ctx context.Context) (traceparent, tracestate string) {
	return format(trace.SpanContextFromContext(ctx))
}
