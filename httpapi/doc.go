// Package httpapi serves the management REST API of a scheduler: the
// Azure Scheduler ARM API (api-version 2016-03-01) as an http.Handler over
// a *scheduler.Scheduler, plus a [Client] for it with a method per
// operation: RunJob returns the run's requestedTime and message,
// BackfillJob the expected times, the calendar methods the calendars with
// their ETags.
//
//	h := httpapi.New(s, &httpapi.Options{Authenticator: auth})
//	http.ListenAndServe("127.0.0.1:8080", h)
//
// # Operations
//
// Paths start with /subscriptions/{subscriptionId}; below,
// RG = /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}
// and JC = RG/providers/Microsoft.Scheduler/jobCollections/{jobCollectionName}.
//
//	GET    /subscriptions/{subscriptionId}/providers/Microsoft.Scheduler/jobCollections   list by subscription
//	GET    RG/providers/Microsoft.Scheduler/jobCollections                                list by resource group
//	GET    JC                          get a collection                    200
//	PUT    JC                          create or replace a collection      201 created, 200 replaced
//	PATCH  JC                          merge-patch a collection            200
//	DELETE JC                          delete it with its jobs and history 200
//	POST   JC/enable, JC/disable       set the collection's state          200, empty body
//	GET    JC/jobs                     list jobs ($filter=state eq Enabled, health eq Late or tagName eq 'team', $top, $skip)
//	GET    JC/jobs/{jobName}           get a job                           200
//	PUT    JC/jobs/{jobName}           create or replace a job             201 created, 200 replaced
//	PATCH  JC/jobs/{jobName}           merge-patch a job                   200
//	DELETE JC/jobs/{jobName}           delete a job and its history        200
//	POST   JC/jobs/{jobName}/run       run the job once now                200 {"requestedTime", "message"}
//	GET    JC/jobs/{jobName}/history   list history, newest first ($filter=status eq Failed or faulted eq true, $top, $skip)
//	GET    JC/calendars                list exclusion calendars by name    200, one page
//	GET    JC/calendars/{calendarName} get an exclusion calendar           200
//	PUT    JC/calendars/{calendarName} create or replace it (If-Match)     201 created, 200 replaced
//	DELETE JC/calendars/{calendarName} delete it (If-Match)                200; 409 naming the jobs that use it
//
// Exclusion calendars are an extension beyond Azure Scheduler, of type
// Microsoft.Scheduler/jobCollections/calendars, with the properties
// described in the scheduler package's documentation ("Exclusion
// calendars"); problems are named at their paths ("properties.dates[0]").
// A job names one in "recurrence": {"calendar": "holidays", "onExcluded":
// "NextIncluded"}; a calendar the collection lacks, or one that leaves the
// job no occurrence, is refused at properties.recurrence.calendar, and a
// replacement of a calendar that leaves one of its jobs no occurrence at
// properties. Whether a PUT created the calendar (201) or replaced it
// (200) is decided in the write itself, as for collections and jobs: of
// PUTs at the same moment that find none, the one whose write creates it
// answers 201 (a job PUT that finds the job as it would write it writes
// nothing and answers 200).
//
// Every request needs the query parameter api-version=2016-03-01 (or
// 2016-01-01, which is served identically); a missing one gets 400
// MissingApiVersionParameter, another value 400 InvalidApiVersionParameter.
//
// # Tenancy
//
// A collection is stored in the engine under the name
// "{subscriptionId}/{resourceGroupName}/{jobCollectionName}" (see
// scheduler.MaxScopeSegments), so subscriptions and resource groups keep
// tenants apart: the same collection name in two resource groups is two
// collections, and listing a subscription or resource group shows only its
// own. Collections created through the Go API without two scope segments
// are not visible through this API. Subscription IDs are matched without
// regard to case (they are stored in lower case, as GUIDs usually are);
// resource group, collection and job names are case-sensitive, a
// difference from ARM. The literal segments of a path (subscriptions,
// resourceGroups, providers, Microsoft.Scheduler, jobCollections, jobs,
// enable, disable, run, history) match in any case: the handler rewrites
// them to their canonical spelling before routing with http.ServeMux, and
// only at their positions, so a job named "History" stays "History".
//
// # Bodies
//
// Bodies are ARM resources with the swagger's field names. A job is
// {"id", "type": "Microsoft.Scheduler/jobCollections/jobs", "name":
// "{jobCollectionName}/{jobName}", "properties": {startTime, action,
// recurrence, state, status}}; PUT and PATCH bodies must be the envelope
// {"properties": {...}}. Its id and name may be left out (or null); when
// given, they must name the resource of the request's path, as a GET of it
// returns them (a job's name as "{jobCollectionName}/{jobName}" or
// "{jobName}"), without regard to case: a body that names another job,
// collection or calendar is refused with 400 at "id" or "name", and
// nothing of it is applied, so that a body sent to the wrong path does not
// replace the resource there. type is ignored. The properties are
// parsed by the Scheduler's ParseJob: comments and trailing commas are
// allowed, enums are case-insensitive, unknown fields are errors, and the
// action types registered in the Scheduler's Config.Executors are accepted
// with their payloads checked as PutJob checks them. PUT replaces the
// whole job (status counters and history are kept); PATCH is a JSON merge
// patch in which absent fields keep their values and null removes one.
//
// A collection is {"id", "type": "Microsoft.Scheduler/jobCollections",
// "name", "location", "tags", "properties": {"sku": {"name"}, "state",
// "quota": {"maxJobCount", "maxRecurrence": {"frequency", "interval"}},
// "runPolicy", "limits"}}. Responses show the effective plan, state and
// quota (the plan's limits when no quota is set); runPolicy, an extension,
// is the default run policy of the collection's jobs, as the Go package
// documents it (jobs carry "runPolicy", "stateReason" and "resumeTime" the
// same way); limits, an extension, are its limits toward the targets its
// jobs call ([{"key": "host", "maxConcurrent": 5, "ratePerMinute": 120}],
// "Limits toward a target" in the Go package; a history entry of an attempt
// that waited for them has "limitWaitMs"),
// and a history filter may ask for status Skipped. A PUT replaces the
// whole collection except its location: ARM requires "location" on the
// PUT of a tracked resource, and a collection's location here is free
// text with no effect, so a PUT without it (or with null) keeps the
// location the collection has (none for a new one) rather than drop it.
// One with it sets the location of a new collection (or of one that has
// none); a location other than the one an existing collection has is
// refused, as ARM refuses it: 409 InvalidResourceLocation at "location",
// and nothing is written; so is a PATCH that gives one. A PUT of an
// existing collection, and a PATCH with a location, read it first and
// write on condition that it did not change meanwhile: when another
// write came between, they answer 409 Conflict and write nothing. POST
// .../jobs/{job}/backfill with {"from", "to", "only", "dryRun"} runs
// Scheduler.BackfillJob and answers {"expectedTimes": [...], "dryRun"}.
//
// A history entry is {"id", "type":
// "Microsoft.Scheduler/jobCollections/jobs/history", "name", "properties":
// {startTime, endTime, expectedExecutionTime, actionName, status, message,
// retryCount, repeatCount}}; its ID ends with two 20-digit numbers that
// sort newest first (see [JobHistoryDefinition]). Its properties also
// have, as extensions that Azure clients ignore, the other members of the
// Go package's HistoryEntry under the same names, each left out when
// empty: executionTag (the tag the attempts of an occurrence share, sent
// with the action), faulted (true on the failed last attempt after which
// the occurrence is faulted), httpStatus (the status of an HTTP attempt
// answered with other than 2xx), limitWaitMs (how long the occurrence
// waited for its collection's limits, in milliseconds), skipped and
// lastExpectedTime (how many occurrences a Skipped entry stands for, and
// the expected time of the last of them), backfill (an occurrence of a
// backfill) and manual (a run asked for with POST .../jobs/{job}/run).
// The entry's collection and job are those its id names.
//
// Secrets are write-only: the password of Basic and ClientCertificate
// authentication, the pfx, the OAuth secret, the storage queue sasToken
// and the Service Bus sasKey are accepted and never returned. For a client
// certificate, responses carry certificateThumbprint,
// certificateSubjectName and certificateExpirationDate read from the
// stored pfx. A PUT must therefore repeat the secrets; a PATCH that leaves
// them out keeps them. Request headers, bodies and messages are not secrets
// (the scheduler package's "Secrets"): they are stored as given and
// returned as given, to every caller that may read the job, so that a
// body read with GET can be put back unchanged. A credential belongs in
// authentication, not in a header such as Authorization.
//
// Lists carry {"value": [...], "nextLink": URL}. Jobs and history pages
// hold $top items (1 to 100, default 100) from $skip (default 0); nextLink
// repeats the request with the next $skip and is left out on the last page
// (the published definition types it as a string, so it is never null).
// Collection lists are not paged.
//
// $filter is one condition "MEMBER eq VALUE" or several joined by "and"
// (keywords and members in any case), each member at most once; a list
// keeps the items that pass all of them. Jobs may be filtered on "state"
// (Enabled, Disabled, Completed, Faulted), "health" (OK, Skipped, Stale,
// Late, Failing: the job's health, see scheduler.JobHealth) and their
// tags, as ARM does: "tagName eq 'team'" keeps the jobs with the tag,
// "tagName eq 'team' and tagValue eq 'ops'" those where it has that value
// (names and values in single quotes, a quote in them doubled, compared
// exactly; tagValue only with tagName). History may be filtered on
// "status" (Completed, Failed, Postponed, Skipped) and "faulted": "faulted
// eq true" keeps the entries of failed last attempts after which their
// occurrence was faulted (scheduler.ListHistoryOptions.Faulted), "faulted
// eq false" the others (NotFaulted), so that "status eq Failed and faulted
// eq false" lists the failures that a retry or a later occurrence
// followed. Values of state, health, status and faulted are read in any
// case, optionally in single quotes. Another member, another operator
// than eq, another connective than and ("or", "not", parentheses), a
// member named twice or a value not listed is refused: 400 at $filter,
// one detail per condition at fault, each naming the $filter and the
// condition.
//
// $orderby orders the job list by one member, by its OData path in the
// job or the path's last segment alone, in any case: "name" (the
// default), "properties/status/nextExecutionTime",
// "properties/status/lastExecutionTime" or
// "properties/status/failureCount", optionally followed by "asc" (the
// default) or "desc" (scheduler.ListJobsOptions.OrderBy and Descending).
// Ties are in name order, and jobs without a time (no next execution: a
// Disabled, Completed or Faulted job, or one with no occurrence left; no
// last execution: one that has not run) come after the others, before
// them with "desc"; nextLink keeps $orderby, so that pages that follow
// one another while nothing changes neither miss nor repeat a job. The
// store orders the jobs: by name from its key, in the other orders by
// sorting the collection's jobs, a cost in proportion to the collection.
// By nextExecutionTime in a collection with exclusion calendars, the
// order is that of the nextExecutionTime the list shows, where a job's
// calendar places its next run now (scheduler.ListJobsOptions.OrderBy):
// each page then reads all the collection's jobs. A collection that is
// not Enabled shows no nextExecutionTime: by it, its jobs are in name
// order.
// Another member, several members or another direction are refused: 400
// at $orderby naming it. A job's history is newest first and takes no
// $orderby (400).
//
// A job is {"id", "type": "Microsoft.Scheduler/jobCollections/jobs",
// "name", "tags", "properties"}: "tags" are its labels (at most 15, names
// of 1 to 512 characters, values of at most 256; problems at "tags" and
// "tags.NAME"), left out when it has none. A PUT replaces them (without
// "tags", the job has none); a PATCH merges them ({"tags": {"tier": null}}
// removes one) and may give "tags" alone, without "properties".
//
// # Concurrency
//
// GET, PUT and PATCH of jobs and collections return an ETag header (a
// quoted entity tag). A PUT or PATCH with an If-Match header succeeds only
// when the tag is current ("*": when the resource exists); otherwise 412
// PreconditionFailed. So does a DELETE of a calendar, also when the
// calendar or its collection does not exist. A DELETE of a job
// or job collection with If-Match deletes it only while it holds that tag
// ("*": while it exists), checked in the store write that deletes it,
// without a read before: a write of another client since the tag was
// read is never deleted in its place. Otherwise it answers 412 and
// deletes nothing, also when the job or collection does not exist. A
// PUT of a job, job collection or calendar with If-None-Match: * only
// creates it: 412 PreconditionFailed with target
// If-None-Match when it exists (any other If-None-Match value is 400). The
// check is made in the store write that creates the resource, so of
// several such PUTs at once exactly one answers 201 and the others 412. A
// 412 for an If-Match that does not hold has target If-Match. A PATCH or
// DELETE with If-None-Match: *, which holds only for a resource that does
// not exist (RFC 9110), changes nothing: 412 at If-None-Match when the
// resource exists, 404 when it does not (another value is 400, as for a
// PUT). [Client] sends both headers from [WriteOptions], which its PUT,
// PATCH and DELETE methods take. The tag changes on every write through
// the API, not when a job runs.
//
// # Errors
//
// Errors have the ARM body {"error": {"code", "message", "target",
// "details"}}. target names the element at fault: a JSON path into the
// body ("properties.recurrence.schedule.hours[1]"), a query parameter
// ("$top", "api-version") or a path parameter ("jobName"). Several
// problems at once give code BadRequest, a message listing all of them and
// one entry per problem in details. Status codes: 400 invalid input, 401
// AuthenticationFailed (with WWW-Authenticate: Bearer), 403
// AuthorizationFailed (the caller may not reach the subscription), 404
// ResourceNotFound (unknown path, collection or job), 405
// MethodNotAllowed (with Allow), 409 QuotaExceeded (maxJobCount or
// maxRecurrence), InvalidResourceLocation (a PUT or PATCH that gives a job
// collection another location than the one it has; the same location in
// another case or without spaces, "westeurope" for "West Europe", is no
// change: a PUT or PATCH keeps the spelling the collection has) or Conflict
// (changing or running a Completed or Faulted job, whose message says
// which, running a job of a collection that is not Enabled, a write race),
// 412 PreconditionFailed, 413 RequestEntityTooLarge, 429 TooManyRequests
// (the caller's budget is used up, see Throttling; the client's failed
// authentications are, see Authentication; or the server is busy, see
// Admission), 500
// InternalServerError (a store failure, or a recovered panic, both logged),
// 503 ServiceUnavailable (the scheduler is stopping, with Retry-After: 5;
// or the request's work timed out). Every response has
// an x-ms-request-id header, and echoes x-ms-client-request-id when the
// request has one.
//
// # Authentication
//
// Options.Authenticator identifies callers; a [Principal] lists the
// subscriptions a caller may reach. [TokenAuth] checks bearer tokens from
// a list ("TOKEN SUBSCRIPTION[,SUBSCRIPTION...]" per line, "*" for all,
// and a third field "read-only" for a token that may only read), read
// from a file or the JOBCLOCK_API_TOKENS environment variable by
// [LoadTokenAuth]. A read-only principal's requests with any method but
// GET and HEAD are answered 403 AuthorizationFailed. Without an
// Authenticator (nil, or the nil *TokenAuth that LoadTokenAuth returns
// when no tokens are configured) every caller reaches everything: serve
// such a handler only on a loopback address.
//
// Failed authentications are budgeted (Options.AuthFailures, an
// [AuthFailures] made with an [AuthFailureLimit]): by default each client
// address (an IPv6 client's /64 network) may fail 10 times per 15
// minutes, refilled evenly. Beyond that its requests are answered 429
// TooManyRequests with Retry-After without their credentials being
// checked, so a token cannot be guessed at the speed of a client and a
// guesser learns nothing from the answer; a request that authenticates
// takes nothing of the budget, nor does one without credentials (without
// an Authorization header, as a browser's request for /favicon.ico or a
// load balancer's health check): it is answered 401 at once. (An
// Authenticator of your own tells such requests apart by implementing
// [CredentialsPresenter], as TokenAuth does; without it every request it
// refuses counts.) All addresses together may fail 100 times per 15 minutes; beyond that
// requests wait their turn in one line and are checked one per 9s (the
// budget's refill), right and wrong credentials alike, up to 20s
// (AuthFailureLimit.Wait, then 429): while guesses from many addresses
// keep the line full, callers with a valid token from a new address are
// refused too. An address from which a request authenticated in the last
// day (kept in memory) does not wait: its failures take from a budget of
// 100 per 15 minutes of their own, and only once that is used up do its
// requests wait in the line as well. Give the same
// AuthFailures to every surface that checks the same tokens (the
// dashboard's sign-in form), so that a guess at one counts at all.
//
// Request bodies are limited to Options.MaxBodyBytes (64 KiB) and each
// request's work to Options.HandlerTimeout (30s).
//
// # Throttling
//
// Each caller has a request budget, as in Azure Resource Manager: by
// default 120,000 reads (GET, HEAD) and 12,000 writes (PUT, PATCH, DELETE,
// POST) per hour, ten times ARM's limits, set with Options.Throttle
// ([Throttle]). A caller is the authenticated principal, or the remote IP
// address when the request is not authenticated (requests that fail
// authentication count against their address). Each budget is a bucket
// that refills evenly over the hour, so a caller may spend it at once and
// then continues at its rate (3.3 writes a second by default). Every
// response reports what is left of the budget of its kind:
//
//	x-ms-ratelimit-remaining-subscription-reads: 119998     (on reads)
//	x-ms-ratelimit-remaining-subscription-writes: 11999     (on writes)
//
// A request beyond the budget gets 429 TooManyRequests with a Retry-After
// header: the whole seconds until the next request of that kind is
// allowed. The budgets live in the handler's memory, so several servers
// (or a restart) each keep their own. [Client] reports Retry-After in
// ResponseError.RetryAfter and does not retry by itself.
//
// # Admission
//
// A scheduler's first promise is the time: API requests share the
// process, the cores and the store with the scheduler's claims and
// records, so the handler serves only a few operations at once, across
// all callers: by default 2 reads (GET, HEAD) and 1 write (PUT, PATCH,
// DELETE, POST), set with Options.Admission ([Admission]). The others wait
// for their turn in order of arrival; one that waited 2s (Admission.Wait)
// gets 429 TooManyRequests with the ARM error body and a Retry-After
// header (the wait in whole seconds, rounded up), and nothing of it is
// applied: a write is either answered 2xx and stored, or refused and not
// stored. Closed-loop clients thus see the API slow down, and clients in
// excess see 429, before a job fires late. The defaults are set for 100
// clients calling without pause on two cores while jobs come due at
// 1,000 a second (BENCHMARKS.md, "Load", has the figures); more cores or
// a store on another machine can take larger values. Requests refused
// before their operation (authentication, the caller's budget, an unknown
// path or method) take no turn.
package httpapi
