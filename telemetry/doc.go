// Package telemetry traces and measures jobclock with OpenTelemetry
// (go.opentelemetry.io/otel). It is a module of its own: a program that
// does not import it links no OpenTelemetry package, and the library's
// go.mod lists none. A host opts in with one value, for the Scheduler and
// the REST API alike:
//
//	obs := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp}) // nil: the global providers
//	s, err := scheduler.New(store, &scheduler.Config{Observer: obs})
//	api := httpapi.New(s, &httpapi.Options{Observer: obs})
//
// The package depends on the OpenTelemetry API only; the host chooses the
// SDK and exporters (the jobclock command serves Prometheus metrics and
// exports OTLP). Without an SDK installed an attempt costs a few atomic
// loads and allocates nothing for telemetry. The instrumentation scope is
// [ScopeName]; the REST API's is github.com/jobclock/scheduler/httpapi.
//
// Spans (all of kind Internal):
//
//	jobclock.attempt    one per attempt: the main action's first attempt, each retry, each errorAction attempt;
//	                    from the executor's call to its return
//	jobclock.postpone   zero length: an occurrence came due while the previous one was in progress (a Postponed history entry)
//	jobclock.misfire    zero length: scheduled occurrences passed over, merged into a waiting occurrence
//	                    or dropped by MisfireSkip (a runOnce catch-up shows them on its attempt instead)
//
// An occurrence is one trace: its first attempt's span is a root span (or,
// for a run requested with RunJob whose context carried a span, a child of
// that span), and its retries and errorAction attempts are children of the
// first attempt's span, also when another instance runs them. The trace
// context is kept in the stored occurrence (scheduler.Occurrence.Trace).
// Attributes of jobclock.attempt:
//
//	jobclock.collection, jobclock.job         the job
//	jobclock.action.type                      Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic or a host's type
//	jobclock.action.name                      MainAction or ErrorAction
//	jobclock.occurrence.number                the occurrence number (history's repeatCount)
//	jobclock.attempt.retry                    the retry number (history's retryCount)
//	jobclock.occurrence.expected_time         the occurrence's expected time, RFC 3339 in UTC
//	jobclock.attempt.lateness                 seconds from when the attempt was due (the expected time for a first
//	                                          attempt, the retry's due time for a retry) to its start, less the
//	                                          time its collection's limits held it back
//	jobclock.execution_tag                    the occurrence's execution tag
//	jobclock.instance                         Config.InstanceID of the instance that ran it
//	jobclock.attempt.outcome                  Completed or Failed
//	error.type                                on failure: the executor error's Go type, "timeout" or "panic";
//	                                          the span's status is Error with the error's text
//	jobclock.occurrence.manual                true for a run requested with RunJob
//	jobclock.lease.previous_owner             the instance whose expired lease this claim took over
//	jobclock.occurrence.missed                occurrences merged into this one by a catch-up after downtime,
//	jobclock.misfire.policy, jobclock.misfire.first_expected_time, jobclock.misfire.last_expected_time
//	                                          with the misfire policy and the first and last expected times merged
//
// jobclock.postpone carries the job, action type, occurrence number and
// expected time of the postponed occurrence; jobclock.misfire the job,
// policy, count and first and last expected times.
//
// Executors continue the trace across the network. The HTTP executor makes
// a client span (named after the method, with OpenTelemetry's HTTP client
// attributes) and sends its W3C trace context in the traceparent and
// tracestate headers. The Service Bus executor makes a producer span
// ("send QUEUE", messaging.system servicebus) and puts the trace context in
// the message's application properties Diagnostic-Id (as the Azure SDKs do)
// and traceparent/tracestate. The storage queue executor makes a producer
// span and, with its XML envelope option, adds the elements TraceParent and
// TraceState to the envelope. A receiver that extracts the context joins
// the scheduler's trace. (An occurrence's stored trace context is passed on
// by the executors also without this package, untraced.) To call an
// executor directly inside a span of the host's, pass it
// [ExecutorContext](ctx).
//
// The REST API's requests are server spans named after their method and
// route pattern ("PUT /subscriptions/{subscriptionId}/.../jobs/{jobName}"),
// continuing the caller's W3C trace context (traceparent header), with
// OpenTelemetry's HTTP server attributes.
//
// Metrics (units as OpenTelemetry writes them; "s" is seconds):
//
//	jobclock.occurrences.started       counter {occurrence}   occurrences whose first attempt started; jobclock.action.type
//	jobclock.occurrences.faulted       counter {occurrence}   occurrences that faulted: their main action's last attempt failed,
//	                                                          whatever ended its retries (faultedCount); jobclock.action.type
//	jobclock.attempts                  counter {attempt}      history entries: attempts and Postponed occurrences;
//	                                                          jobclock.action.type, jobclock.action.name, jobclock.attempt.outcome
//	                                                          (Completed, Failed, Postponed); counted as they are stored, so they
//	                                                          add up to the history
//	jobclock.attempt.duration          histogram s            attempts' durations; same attributes
//	jobclock.occurrence.lateness       histogram s            from an occurrence's expected time to its first attempt's start,
//	                                                          less the time its collection's limits held it back (history's
//	                                                          limitWaitMs); jobclock.action.type
//	jobclock.attempts.timed_out        counter {attempt}      attempts failed because they outlived their timeout (the action's
//	                                                          "timeout", else Config.ActionTimeout), which cancelled them
//	jobclock.attempts.permanent        counter {attempt}      attempts failed with a permanent error (action.Permanent, or a
//	                                                          status in permanentStatusCodes): not retried
//	jobclock.attempts.retry_after      counter {attempt}      failed attempts whose 429 or 503 answer's Retry-After asked the
//	                                                          next retry to wait
//	jobclock.attempt.retry_after.wait  histogram s            the wait each of those asked for, from the attempt's end (the
//	                                                          retry waits at most scheduler.MaxRetryAfter); these four have no
//	                                                          attributes, being counted as the attempt ends
//	jobclock.limit.waits               counter {attempt}      attempts that waited for the permits of their collection's limits;
//	                                                          jobclock.limit.key (host, job, collection; _OTHER when the store
//	                                                          failed), the key of the limit that refused it last
//	jobclock.limit.wait                histogram s            how long each was held back: from the first refusal to the end of
//	                                                          the last wait (scheduler.Attempt.LimitWait); the same attribute
//	jobclock.limit.permits_lost        counter {attempt}      attempts cancelled because the permits of their collection's limits
//	                                                          expired unextended while they ran (their instance cut off from
//	                                                          the store); no attributes
//	jobclock.occurrences.missed        counter {occurrence}   occurrences passed over without running; jobclock.misfire.policy
//	jobclock.lease.takeovers           counter {lease}        attempts whose claim took over a lease another instance let expire
//	jobclock.store.operation.duration  histogram s            the run loop's store calls; jobclock.store.operation (ClaimDue,
//	                                                          GiveBack, NextDue, Record, RecordBatch, ExtendLease,
//	                                                          ExtendLeases, GetJob, PutJob, Prune, and for collections'
//	                                                          limits AcquirePermits, ExtendPermits, ReleasePermits) and,
//	                                                          when one failed, error.type
//	jobclock.store.operation.errors    counter {error}        failed store calls (each failed RecordBatch element, each lease
//	                                                          an ExtendLeases did not extend, each claim a GiveBack left
//	                                                          leased); the same
//	                                                          attributes; error.type is conflict, lease_lost, not_found,
//	                                                          timeout, canceled or _OTHER
//	jobclock.history.pruned            counter {record}       history entries and final jobs deleted by retention
//	jobclock.jobs                      gauge {job}            jobs in the store; jobclock.collection, jobclock.job.state
//	jobclock.jobs.due                  gauge {job}            jobs due and not started: the backlog (Scheduler.DueCount)
//	jobclock.jobs.health               gauge {job}            jobs by health, every one of the five; jobclock.job.health (Scheduler.HealthCounts)
//	jobclock.jobs.in_flight            gauge {job}            claimed jobs this instance works on
//	jobclock.jobs.in_flight.limit      gauge {job}            Config.MaxConcurrency
//	http.server.request.duration       histogram s            REST API requests; http.request.method, http.route,
//	                                                          http.response.status_code, url.scheme, error.type (5xx)
//
// Attribute sets stay bounded: no job names unless Options.MetricsByJob adds
// jobclock.collection and jobclock.job to the per-attempt instruments. The
// gauges jobclock.jobs, jobclock.jobs.due and jobclock.jobs.health describe
// the store, so every instance sharing it reports the same values; they are
// read with one JobCounts, one DueCount and one HealthCounts call (which
// reads every job, a page at a time) at most once per Options.StatsMaxAge
// (10 s), however many readers collect them, and a reading is bounded by 5 s.
// The gauges of a Scheduler are registered when it is made and
// unregistered by its Stop.
//
// Log records the Scheduler and the REST API write about a traced attempt
// or request carry the trace_id and span_id of its span. [TraceHandler]
// does the same for a host's own log records written inside any span.
package telemetry
