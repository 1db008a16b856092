// Package scheduler is an embeddable job scheduler with the semantics of
// Azure Scheduler: job collections with quotas, jobs whose JSON definition
// says when to run (startTime, recurrence with advanced schedules, count,
// endTime) and what to do (an HTTP request, an Azure Storage queue message,
// a Service Bus queue or topic message), retry policies, an error action,
// job states and status counters, and a queryable execution history.
//
// The shortest way in: a Go function, run on a recurrence, durably in a
// SQLite file, without a registry or a definition:
//
//	st, err := sqlite.Open(ctx, "reports.db", nil)
//	s, err := scheduler.New(st, nil)
//	_, err = s.ScheduleFunc(ctx, "nightly", recurrence.Daily(2, 30).In("Europe/Berlin"), func(ctx context.Context) error {
//		return send(ctx, "ops") // a closure
//	})
//	err = s.Start(ctx)                 // returns once running
//	defer s.Stop(context.Background()) // waits for attempts in flight
//
// [Scheduler.ScheduleFunc] registers the function under the job's name in
// this process and, as [Scheduler.Schedule] does, puts the job in
// [DefaultCollection] the first time and leaves it alone when the program
// starts again with the same job, so the job keeps its place in its
// recurrence across restarts. The job is durable, the function is not: an
// attempt in a process where no function is registered for the job runs
// nothing and fails, saying so in the history and the log, and the job
// stays. examples/funcjob is a runnable program of this shape (its job
// "minutely" runs every minute, in the SQLite file its -db flag names).
//
// A function that takes data, a payload of its own per job, is a typed
// handler: [action.Handle] turns it into an action type whose payload is
// checked when the job is put, in Go, JSON or over REST:
//
//	type Report struct{ To string `json:"to"` }
//
//	reg := new(action.Registry)
//	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r Report) error {
//		return send(ctx, r.To)
//	})
//	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
//	_, err = s.Schedule(ctx, "nightly", recurrence.Daily(2, 30), report.Action(Report{To: "ops"}))
//
// Underneath is the whole Azure Scheduler model: a host program creates a
// [Scheduler] over a [Store], puts collections and jobs (written in Go or
// as JSON definitions) into it, and starts it:
//
//	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: logger}) // nil Config: all defaults
//	_, err = s.PutCollection(ctx, "reports", &scheduler.JobCollection{}, nil)
//	job, err := s.ParseJob(definition) // or a *scheduler.Job written in Go
//	rec, err := s.PutJob(ctx, "reports", "nightly", job, nil)
//	err = s.Start(ctx)        // returns once running
//	err = s.Stop(shutdownCtx) // waits for running attempts, or returns ctx.Err()
//
// The packages around this one: [github.com/jobclock/scheduler/jobdef] is
// the job definition language (this package's Job, ParseJob, JobCollection
// and their kin are its names), [github.com/jobclock/scheduler/recurrence]
// expands recurrences, [github.com/jobclock/scheduler/retry] holds retry
// policies, [github.com/jobclock/scheduler/action] the action object, the
// Executor interface and its registry, with one executor each in
// action/http (built into every Scheduler), action/storagequeue and
// action/servicebus (added by the host, or both at once with
// action/azure; see "Actions" below). The stores are
// store/memory, store/sqlite (the embedded default) and store/postgres
// (several processes on one database); store/storetest checks any of them,
// and schedulertest helps hosts test their code that uses a Scheduler.
// [github.com/jobclock/scheduler/secrets] holds the keys that seal the
// secrets of job definitions (see "Secrets" below). httpapi serves the Azure Scheduler management REST API over a Scheduler,
// dashboard a web dashboard over one, and cmd/jobclock is the command-line
// tool.
//
// # Jobs
//
// A job definition is the JSON "properties" object of an Azure Scheduler
// job: startTime, action (with its retryPolicy and errorAction), recurrence
// and state. [ParseJob] reads one. The input may be either that object
// itself or the ARM resource envelope {"id": ..., "name": ..., "type": ...,
// "tags": {...}, "properties": {...}}, whose id, name and type are accepted
// and ignored. The input may contain // and /* */ comments and trailing
// commas, so the examples of the Azure documentation parse as printed.
//
// A job may carry tags, labels that the scheduler keeps beside its
// definition without interpreting them: ARM's "tags" of the job resource,
// {"team": "ops", "tier": "1"}, at most [jobdef.MaxTags] (15), names of 1
// to 512 characters and values of at most 256, checked by
// [jobdef.ValidateTags] at the paths "tags" and "tags.NAME". They are
// [JobRecord.Tags]; [PutJobOptions.Tags] sets them (a put replaces them, as
// ARM's PUT does), [Scheduler.PutJobJSON] takes those of the envelope,
// [Scheduler.PatchJob] merges a "tags" member beside (or in the envelope
// around) the properties, and [ListJobsOptions.Tag] lists the jobs with a
// tag, or a tag of a value (REST: $filter=tagName eq 'team' and tagValue eq
// 'ops'). [Scheduler.Schedule] keeps the tags of the job it replaces. A
// store keeps them with the job's record: store/memory keeps a job with
// tags in its whole-record form, so jobs without take no memory for them.
//
// A put of a job may carry a precondition on the job stored, checked in
// the store write itself: [PutJobOptions.IfMatch] (the job's ETag, or "*":
// it exists) and [PutJobOptions.IfNoneMatch] ("*": it does not exist, the
// put only creates); either failing is ErrPreconditionFailed (REST: 412).
// Puts of collections and calendars take both as well
// ([PutCollectionOptions], [PutCalendarOptions]): a create-only put is a
// create in the store (Version 0), which fails when the record exists, so
// of several at once exactly one creates it. The record a put of a job
// returns says whether that put created the job
// ([JobRecord.CreatedByPut], decided by the store write; REST: 201
// rather than 200): of puts racing to create one job exactly one does,
// and a put that finds the job as it would write it writes nothing.
// Deletes take the ETag condition too: [DeleteJobOptions.IfMatch] and
// [DeleteCollectionOptions.IfMatch] (the ETag, or "*": it exists) delete
// only the job or collection stored with that ETag, checked by the store
// in the write that deletes it (see "Stores"), so a job written since
// its ETag was read is never deleted in its place; otherwise, and when
// there is none, the delete fails with ErrPreconditionFailed (REST: 412)
// and deletes nothing. [DeleteCalendarOptions.IfMatch] is checked in the
// write of the collection that removes the calendar; a calendar or
// collection that does not exist fails it the same way.
//
// Object keys are matched without regard to case, as the original service
// did ("Occurrence" and "occurrence" are the same key; so are "startTime"
// and "StartTime"); two keys that differ only in case are an error. Keys
// are written as the published OpenAPI definition of Microsoft.Scheduler
// 2016-03-01 spells them, which makes monthlyOccurrences
// [{"day": "Friday", "Occurrence": -1}] (capital O, as the Azure SDKs
// read it; the Azure documentation's "occurrence" is read the same). Enum
// values (frequency, weekday, state, action type, retry type, auth type,
// transport type, HTTP method) are accepted in any case and written back in
// their canonical spelling ("Week", "Monday", "Enabled", "Http", "Fixed",
// "GET"). A null value is the same as an absent one. The read-only status
// object is ignored on input, whatever it contains.
//
// Times (startTime, recurrence.endTime, certificateExpirationDate,
// scheduledEnqueueTimeUtc) are ISO 8601: "2012-08-04T00:00Z" (seconds may
// be left out), "2012-08-04T00:00:00.123+02:00", or a bare date
// "2012-11-04" (midnight UTC). A date-time without an offset is UTC. The
// ISO 8601 basic format ("20120804T000000Z") is not read: its error says
// so and gives the extended form to write ("2012-08-04T00:00:00Z"), and a
// date that does not exist is named so ("2026-02-30" is not a date:
// February 2026 has no day 30). See
// [ParseTime]. Durations (retryInterval, timeToLive) are ISO 8601 ("PT30S",
// "P1D") or "[d.]hh:mm:ss"; see [retry.ParseDuration].
//
// Marshalling a parsed [Job] with encoding/json writes the canonical form,
// which parses back to an equal Job.
//
// # Many jobs at once
//
// [Scheduler.PutJobs] puts a batch of jobs ([JobPut]: a name and a
// definition) into one collection at one instant, each as PutJob would,
// and writes them in one step: all or nothing, one transaction on the SQL
// stores, with the collection's maxJobCount counted once for the batch.
// Every job is checked before anything is written; the error of a batch
// with invalid jobs is a [*PutJobsError] with one [PutJobsItemError] per
// such job (its index, its name, and validation errors at paths within
// its definition; a schedule more frequent than maxRecurrence included),
// and errors.Is sees each item's error. The maxJobCount is counted only
// for a batch whose every job is valid:
//
//	recs, err := s.PutJobs(ctx, "reports", []scheduler.JobPut{
//		{Name: "daily", Job: daily},
//		{Name: "weekly", Job: weekly},
//	}, nil)
//
// A store does the single step when it is a [BulkPutter]; on another
// store the jobs are put one at a time once all were checked. A batch of
// 512 jobs or more is checked in parts on several goroutines; a panic in
// a check (an executor's [action.Validator]) is raised again on the
// caller's goroutine once every part ended, as a [*PartPanic] holding the
// value and the stack of the goroutine that panicked, so that the
// caller's recover sees it.
//
// # Validation
//
// ParseJob reports every problem at once, ordered by path. Each is a
// [*ValidationError] carrying the JSON path of the offending field
// ("recurrence.schedule.hours[1]", or "properties.recurrence..." inside an
// envelope), the offending value as JSON text (never for secrets such as
// password, pfx, secret, sasKey and sasToken) and the reason, and prints as
// "recurrence.schedule.hours[1]: 25 is not an hour (0-23)". The value is
// quoted as the input wrote it, not as it was read: "retryInterval":
// "P19M" is refused as "P19M", not as the 570 days it stands for, and a
// weekday repeated as "sunday" is quoted so, with the entry it repeats
// named by its whole path ("recurrence.schedule.weekDays[2]: "sunday"
// repeats recurrence.schedule.weekDays[1]"). The paths a reason names (the
// entry a repeated one repeats, where credentials or a misplaced member
// belong) are its Refs, and they stand where the problem's own path does:
// inside an envelope ("properties.recurrence.schedule.weekDays[2]: ...
// repeats properties.recurrence.schedule.weekDays[1]"), in a patch, and in
// a collection file of jobclock ("jobs.a.action.request.uri: ... put them
// in jobs.a.action.request.authentication"); [ValidationError.Under] puts
// a problem so under a path of one's own. Paths spell members as the
// canonical form writes them, whatever the case of the input: in lower
// camel case, and "Occurrence" in a monthly occurrence, as the OpenAPI
// definition does ("recurrence.schedule.monthlyOccurrences[0].Occurrence:
// 9 is not an occurrence in a month", for "occurrence": 9 too); only a
// problem with a member's name (unknown, or given twice in another case)
// names the member as written. A
// definition built in Go has no input text: its values are quoted in
// their canonical form. The errors are
// joined with [errors.Join]; [ValidationErrors] returns them as a slice,
// and errors.Is(err, ErrInvalid) reports whether err is a validation
// failure. Input that is not JSON at all gives a single [*SyntaxError]
// naming the line and column. Problems concerning the document as a whole
// (its size, a top level that is not an object, input that holds no value
// at all) have the path "job".
// Unknown members are errors ("action.request.urii: unknown field, did you
// mean "uri"?"), so a typo cannot silently drop part of a definition; a
// name close to a valid one, or a misspelt enumeration value, is answered
// with the valid names closest to it (at most two edits away), and a
// member given one level too high with where it belongs
// ("recurrence.monthDays: unknown field, it belongs in
// recurrence.schedule"). The older names "httpAuthentication" (for
// authentication) and "certificateExpiration" (for
// certificateExpirationDate) are accepted. A value of the wrong JSON
// type is reported once, at its path (recurrence.interval: "two" is not an
// integer). A member given twice is an error at its path, in a job, a
// collection, a calendar, the envelope or its tags, a header, and an
// object in a custom payload:
// with the same name ("properties.state: is given more than once"), or
// in another case or by another name ("properties.state: is a duplicate
// of "State""), and in a patch of a job or collection.
//
// The rules: an action is required and its type must be a built-in type or
// one registered in the Scheduler's Config.Executors ([Scheduler.ParseJob];
// the package-level ParseJob takes them from [ParseOptions.ActionTypes]);
// the payload for that type
// (request, queueMessage, serviceBusQueueMessage, serviceBusTopicMessage, or
// custom for a host-registered type) must be present and the others absent.
// An Http action may call http or https URLs, an Https action only https
// ones; the URI must be absolute with a host and at most 2,048 characters,
// with a port, if any, of at most 65535, and without a user name or
// password ("http://alice:pw@host/"): Azure Scheduler's documentation
// does not say, and such a URI would send its password as Basic
// credentials while the password stood in clear in the stored and
// returned definition, out of reach of the sealing of "Secrets", so it is
// refused ("action.request.uri: must not hold a user name or password;
// put them in action.request.authentication (type Basic)"), in the
// errorAction too. Stores do not check a definition they read again: a
// job stored with such a URI before this rule reads and runs as it did,
// and putting or patching it is refused at that path until the
// credentials move into authentication. The method is one of GET, PUT, POST, DELETE, PATCH, HEAD and OPTIONS; at
// most 50 headers; a body of at most 8,192 characters. Authentication
// (Basic: username and password; ClientCertificate: pfx in base64 and
// password; ActiveDirectoryOAuth: tenant, audience, clientId and secret)
// needs an https URI, since it would otherwise send secrets in clear text,
// unless [ParseOptions.AllowInsecureAuthentication] is set. A pfx whose
// key derivations ask for more than [http.MaxPfxIterations] (1,000,000)
// iterations, in the parts readable without its password, is rejected; a
// Scheduler also opens the pfx with its password when the job is put (its
// HTTP executor is an [action.Validator]), so a pfx that is not a PKCS#12
// file, or that the password does not open, is refused at
// action.request.authentication.pfx or .password. Storage queue
// messages need storageAccount, queueName, sasToken and message; Service
// Bus messages need namespace, queueName or topicPath, and message, and
// with SharedAccessKey authentication sasKeyName and sasKey. A
// retryPolicy has a retryCount of 0 to 20 and a retryInterval of 15 seconds
// ([ParseOptions.MinRetryInterval]) to 18 months. An errorAction follows
// the same rules but may not have an errorAction of its own. The state may
// be set to Enabled or Disabled; Completed and Faulted are reached only by
// running. The recurrence is checked by [recurrence.Recurrence.Validate]
// (an interval or count given as 0 is an error too) and must match at
// least one date that exists, counting its periods from startTime or,
// without one, from [ParseOptions.Created], the job's creation instant
// (every 3 months from a job created in February never reaches
// December); PutJob checks from the time of the put, PatchJob from the
// job's creation.
// The whole definition, without comments and insignificant whitespace, is
// at most 16,000 bytes; in an ARM envelope the definition is its
// "properties", and the envelope's id, name, type and tags do not count
// (the problem is at "properties" then, and says the size measured), as
// for a definition PutJob is given as a [Job]. A startTime more than 18 months ahead is rejected
// when [ParseOptions.Now] is set. An endTime in the past is accepted: such
// a job completes without running.
//
// # Recurrence
//
// A job's recurrence is expanded by package recurrence, whose
// documentation states every rule: schedule times in the recurrence's
// timeZone (UTC without one), RFC 5545 semantics on rrule-go with Azure
// Scheduler's rules on top (minutes without hours means every hour, whole
// minutes, monthDays and monthlyOccurrences as a union, days that do not
// exist skipped, periods counted from the start's, Monday weeks), and
// daylight saving time handled so that a time whose hour the schedule
// fixes runs shifted by a spring-forward gap and once in a fall-back hour,
// while one whose hour it leaves free ("every 30 minutes") keeps its
// cadence: skipped in the gap, run in both passes of the repeated hour
// (an Hour rule's interval counts the hours the clocks show, as
// "0 */2 * * *" does, so every 2 hours runs one or three real hours apart
// across a change).
// Every schedule member is an array, as in the current Azure Scheduler
// API: an older API version also took a single number ("hours": 5), which
// is refused at its path ("recurrence.schedule.hours: 5 is not an array")
// rather than read as [5], so that a definition means one thing.
// Beyond Azure Scheduler, a recurrence may run in seconds: frequency
// Second, a schedule's seconds, a six-field cron spec with seconds first,
// "@every 10s", [recurrence.Every](10, [recurrence.Second]). A collection
// allows them only when its quota says so (see Job collections); the
// collection of [Scheduler.Schedule] does.
// A recurrence's window ("window": "PT15M", an extension) spreads each
// occurrence over that span after its scheduled instant, by an offset
// hashed from the collection, the job's name and the scheduled instant
// (package recurrence, "Spreading"): every instance, "jobclock next" and
// the dashboard agree on the planned instant, which is the one the
// receiver's x-ms-scheduler-expected-execution-time header and the
// history carry, lateness is measured from, and count, endTime and the
// run policies apply to. In Go, a recurrence
// is a struct literal or one of the constructors [recurrence.Every],
// [recurrence.Hourly], [recurrence.Daily], [recurrence.Weekly] and
// [recurrence.Monthly], with [recurrence.Recurrence.In] for the zone, or a
// cron spec with [recurrence.Cron].
//
// [Job.Describe] says when a job runs in words ("every week on Monday,
// Wednesday and Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov
// 2012", and what the exclusion calendar it names does: ", except on the
// days calendar “holidays” excludes (skipped)"), and [Job.Location] is
// the zone its schedule is read in.
//
// When a job runs first ([Job.Timing]): without startTime it counts from
// its creation truncated to the whole second, its [JobSchedule.Anchor] (a
// job created at 11:51:18.86 to run every minute runs at 11:51:18,
// 11:52:18, ...; the record's Created and Updated keep the exact
// instant); with no recurrence it runs once, at startTime or at once when
// startTime is absent or past; with a recurrence but no schedule it runs
// on the grid startTime + k*interval, the first point at or after its
// creation (so a past startTime only sets the phase); with a schedule it
// runs at the first match at or after both startTime and its creation.
// count counts the scheduled occurrences that actually run, from the
// first: a run asked for with [Scheduler.RunJob] or
// [Scheduler.BackfillJob] runs beside them and does not count (a job with
// count 2 and one RunJob runs 3 times); endTime is inclusive; with both, whichever ends the job first wins; an endTime in
// the past is accepted and the job completes without running.
//
// # Cron specs
//
// As an extension beyond Azure Scheduler, a recurrence may say when to run
// with a cron spec, as robfig/cron, gocron and Kubernetes CronJobs take
// them:
//
//	"recurrence": {"cron": "CRON_TZ=Europe/Berlin */15 9-16 * * 1-5", "count": 100}
//
// ParseJob expands the spec into the recurrence it stands for
// ([recurrence.ParseCron] states the dialect and how each spec maps), and
// the canonical form keeps both: the cron member, and the frequency,
// timeZone and schedule that read like it (Week; weekDays Monday to
// Friday; hours 9 to 16; minutes 0, 15, 30 and 45). It parses back to an
// equal job. The job runs at the spec's instants whatever its startTime,
// by this package's rules, daylight saving time included; package
// recurrence documents, in a table, where robfig/cron runs differently
// around clock changes (it skips 02:30 on a spring-forward day and runs it
// twice on a fall-back day; jobclock runs it once, at 03:30 and at the
// first 02:30; with "*" or a step in the hour field both keep the cadence).
//
// Fields given with a spec must agree with it: frequency, interval and
// each schedule member (compared as sets) must equal the spec's, and
// timeZone must name the same zone as a CRON_TZ= (or TZ=) prefix; a
// conflict is an error at that path ("recurrence.schedule.hours: [10]
// differs from the cron spec, which gives [9]"). Without a prefix the spec
// runs in timeZone, UTC without one. count and endTime apply as to any
// recurrence: count counts the spec's runs from the first. A spec that
// does not parse is reported at recurrence.cron naming the field
// ("recurrence.cron: field 2 (hours): 24 is out of range 0-23"). H in a
// field ("H * * * *", "H(0-29)/10 9-17 * * 1-5", Jenkins' hash syntax)
// stands for values that the job's collection and name decide, so that
// jobs given one spec run at different times; the job is stored with its
// own values, and package recurrence documents the hash. Specs the
// recurrence model cannot express exactly (W, an @every that is not a
// whole number of seconds, a day such as February 30 that never occurs)
// are refused, never approximated. A seconds field other than 0
// ("15 * * * * *") and an @every not in whole minutes ("@every 90s") are
// taken: they run at seconds (the schedule's seconds, or frequency
// Second), and the collection's maxRecurrence quota applies to them as to
// any recurrence. A job put from Go with only a cron spec is stored
// expanded; [Scheduler.PatchJob] replaces the fields an old spec
// stood for when a patch gives a new one. "jobclock next -cron SPEC"
// previews a spec and prints the recurrence it stands for.
//
// # Actions
//
// An action's type picks its executor. Every Scheduler executes Http and
// Https itself (see action/http: success on 2xx, no redirects, Basic,
// client certificate and OAuth authentication). The other types need an
// executor in the [action.Registry] given as Config.Executors, so that a
// program links the Azure SDKs only when it sends to Azure:
//
//	reg := new(action.Registry)
//	azure.Register(reg, nil)              // StorageQueue, ServiceBusQueue, ServiceBusTopic
//	defer reg.Close(context.Background()) // after Stop: closes the Azure clients
//	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
//
// storagequeue.Register and servicebus.Register add one of them. Both
// executors check their actions when a job is put (each is an
// [action.Validator]): the storage account and queue names, and the
// Service Bus namespace, queue and topic names and message fields, so that
// a name Azure refuses is refused at its path then
// (action.serviceBusQueueMessage.namespace: "ns1" is 3 characters long; a
// namespace name has 6 to 50), not at each attempt. What each import brings to a program (Go 1.26, linux/amd64, default build flags):
//
//	the root package and a store/memory Scheduler   6.5 MB, 21 packages outside the standard library
//	+ store/sqlite                                   +4.5 MB (modernc.org/sqlite)
//	+ action/azure                                   +2 MB (azcore, azqueue, azservicebus, go-amqp, x/net/http2)
//
// (a program that starts the Scheduler also links the run loop, and the
// HTTP client and TLS as any program that calls HTTPS endpoints does: 11.7
// MB in all; BENCHMARKS.md has the measured programs.)
//
// A job whose action type (or errorAction type) has no executor is refused
// by PutJob and PatchJob at action.type with the package to import and the
// call that registers its executor; [ParseJob] alone accepts every
// built-in type, since it does not know the Scheduler. A job stored by
// another process whose Scheduler had the executor fails its attempts with
// the same advice. Config.Executors also adds a host's own action types
// (a Go function, a gRPC call): register an [action.Executor] under a new
// type; its "custom" payload is accepted in job definitions. Registering an
// executor for Http or Https replaces the built-in one.
//
// A Go function becomes an action type with [action.Handle], which decodes
// each attempt's payload into the function's parameter type:
//
//	type Report struct{ To string `json:"to"` }
//	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r Report) error {
//		return send(ctx, r.To)
//	})
//	job := &scheduler.Job{Action: report.Action(Report{To: "ops"}), Recurrence: recurrence.Daily(2, 0)}
//
// report.Action encodes the payload into the action's JSON "custom"
// member; a definition in JSON gives
// "custom" itself. That one registration is all the Scheduler needs: Go
// definitions, JSON parsed with [Scheduler.ParseJob], PatchJob and the REST
// API all accept the type, and the payload is decoded strictly into Report
// when the job is put, with every member Report lacks and every value of
// the wrong type reported at its path (action.custom.to: 42 is not a
// string) before anything is stored. Any executor can check its actions
// that way by being an [action.Validator].
//
// Every attempt carries the execution metadata
// of the original service: x-ms-scheduler-jobid,
// x-ms-scheduler-jobcollectionid, x-ms-scheduler-expected-execution-time,
// x-ms-scheduler-execution-tag (the same for every attempt of an
// occurrence, also across scheduler processes, so receivers can drop
// duplicates) and x-ms-client-request-id (new per attempt), as HTTP
// headers or message properties. A Go executor reads them with the
// methods of [action.Request] (JobID, ExecutionTag, ClientRequestID),
// which format them when called (with no history kept and nothing
// observing, the execution tag is made only then).
//
// # Retries
//
// An attempt fails when its executor returns an error, panics, or outlives
// its timeout. The timeout is the action's own "timeout" (an extension: an
// ISO 8601 duration from PT1S to PT1H, action.MinTimeout to
// action.MaxTimeout, on an action or an errorAction), else
// Config.ActionTimeout: the attempt's context is cancelled then, the
// built-in HTTP executor gives up its request, and history says "attempt
// timed out after 30s" before the executor's message. An executor that
// watches its context (its Done channel or Err) and returns success when
// the timeout cancels it, or within a second after, got its answer in
// time and keeps its success, not retried: the built-in HTTP executor's
// 2xx answer whose body the timeout cut short is Completed, its message
// noting that reading the body failed. Success returned later, or past the
// timeout by an executor that never watched its context, comes from an
// executor that ignored the timeout: the attempt timed out. A timed-out
// attempt is retried as any failure. A failed attempt of the main action is retried per
// the action's retryPolicy (omitted: Fixed, 4 retries, 30 s apart; None:
// no retry), each retry waiting retryInterval after the previous attempt
// ended.
//
// As an extension beyond Azure Scheduler, retryType may be Exponential, in
// the shape of Azure Logic Apps' exponential interval policy: retry n
// waits a time between max(2^(n-2)*retryInterval, minimumInterval) and
// min(2^(n-1)*retryInterval, maximumInterval) (the first retry from
// minimumInterval), with minimumInterval defaulting to 15 s and
// maximumInterval to 548 days; both must lie between the smallest
// retryInterval and 548 days, and apply only to Exponential.
//
//	"retryPolicy": {"retryType": "Exponential", "retryCount": 6, "retryInterval": "PT20S", "maximumInterval": "PT10M"}
//
// Logic Apps' member names type, count and interval are accepted too. The
// point within each range is derived from the occurrence's execution tag
// and the retry number rather than drawn at random: retries of jobs that
// failed together spread over the range, and every instance (and a test,
// with [retry.Policy.Delay]) computes the same instant.
//
// Two more extensions end the retries early. "maxRetryDuration" in a
// retryPolicy (at least PT1S) is a deadline: no retry starts later than
// the occurrence's expected time plus it, and the occurrence faults
// instead. A retry planned past it is not planned (the failed attempt's
// message says so); one due by it that could not start in time (a
// collection's limit held it back, or no instance ran the job meanwhile)
// does not start either: at the deadline, or when an instance finds it
// past it, the occurrence faults with a Failed history entry of that
// retry that says what kept it (it is no attempt: executionCount and
// failureCount do not change), and its errorAction runs. An error that will not go away is not retried at all: an
// executor says so with [action.Permanent](err), as the built-in ones do
// for a problem of the action's own definition (a field value Azure
// refuses, an expired SAS token, a pfx that does not open, a message too
// large to send), and for Http and Https actions "permanentStatusCodes"
// lists the answers that are permanent ([400, 401, 403, 404, 410, 422],
// say); a network failure, a 5xx or 429 answer, or a token endpoint that
// does not answer is retried. The failed attempt's history
// message says why it was the last. A 429 or 503 answer with Retry-After
// (seconds or an HTTP date) moves the next retry to no earlier than the
// instant it names, at most [MaxRetryAfter] after the attempt ended and
// within maxRetryDuration; the attempt's history message says the retry
// waits for it.
//
//	"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 10, "maxRetryDuration": "PT1H", "permanentStatusCodes": [400, 404]}
//
// When the last retry fails, the occurrence is faulted:
// faultedCount increases and the errorAction, if any, runs at once, with
// its own retryPolicy or else the main action's. executionCount and
// failureCount count attempts of the main action, retries included;
// errorAction attempts appear in history only. An occurrence whose main
// action failed counts as failed even when its errorAction succeeds.
//
// An errorAction without a message of its own (an Http or Https request
// with method POST, PUT or PATCH and no body, a queueMessage or Service Bus
// message without "message", which an errorAction may leave out) carries
// the occurrence's [FailureDocument] as JSON: collection, job, execution
// tag, expected time, occurrence number, and each attempt of the main
// action with its start, end, status, history message and HTTP status
// (Content-Type application/json when the request sets none). It holds no
// secret. A storage queue or Service Bus errorAction without a message is
// so a dead-letter queue. [CarriesFailure] tells whether an errorAction
// does.
//
// A job ends when it has no further occurrence (it ran once, or reached
// count or endTime): Completed when its last occurrence succeeded, Faulted
// when it failed. Both states are final; the job can still be deleted, or
// replaced with PutJob.
//
// Only one occurrence of a job is in progress at a time. By default an
// occurrence that comes due while the previous one is running or waiting
// for a retry gets a Postponed history entry and starts when the previous
// one ends; at most one waits, and with the runOnce and skip misfire
// policies further occurrences that come due meanwhile are merged into the
// waiting one (they do not run and do not count toward count). With runAll
// they wait their turn. A run policy changes this per job. While an
// attempt runs, the job's record is held by it: an occurrence that comes
// due meanwhile is found waiting when the attempt ends, and its Postponed
// entry (with the Skipped entry of those passed over) carries that instant
// and is written with the attempt's outcome; until then nothing is on
// record for it. One that comes due while a retry is pending is on record
// when it comes due.
//
// # Run policies, pauses and skipped occurrences
//
// A job definition may carry a "runPolicy" (an extension of the Azure
// definition), and a job collection's properties the same object as the
// default for its jobs; a job's own members win member by member, and what
// neither sets comes from Config, so a definition without one runs as it
// would on Azure:
//
//	"runPolicy": {
//	  "missed": "RunOnce",       // RunOnce | Skip | RunAll (default: Config.Misfire)
//	  "catchUpWindow": "PT2H",   // an occurrence found later than this after its time is skipped
//	  "overlap": "Postpone",     // Postpone | Skip | BufferAll | AllowAll | CancelRunning
//	  "pauseAfterFaults": 3      // disable the job after 3 consecutive faulted occurrences
//	}
//
// missed decides what runs of the occurrences missed while no Scheduler
// could run them (the service was down, the job was paused until a
// resumeTime, its collection was not Enabled): RunOnce runs the job once
// for all of them, with the expected time of the first (the run's
// retries count from it: a retryPolicy.maxRetryDuration shorter than the
// time since then leaves that run no retry); Skip runs none that
// is later than the catch-up window (Config.MisfireThreshold when the
// policy sets none), runs once, as RunOnce does, for those within it
// (with the expected time of the first of them), and continues with the
// next occurrence after now; RunAll runs each, one after the other. catchUpWindow (at least PT1S;
// absent: none, except for Skip) passes over, whatever the missed
// policy, the occurrences that are found later than the window after their
// expected time. It bounds the lateness found when the job is stepped
// after no instance could run it, not the wait of an occurrence that came
// due while another was in progress: the one that waits under Postpone,
// and those buffered under BufferAll, run when their turn comes however
// long the one before them took. overlap decides what happens to an occurrence that comes
// due while the previous one of the same job is in progress: Postpone, as
// above; Skip passes it over; BufferAll runs every such occurrence in
// order, one at a time, after the one in progress (at most [MaxBuffered]
// wait; older ones beyond are skipped), and, unlike the one occurrence
// that waits under Postpone, they get no Postponed entry each: up to
// MaxBuffered of them may wait behind each occurrence in progress, and an
// entry each would push a fast job's attempts out of its history; the
// entries of their attempts carry their expected times, which show how
// late each ran; CancelRunning cancels the context
// of the attempt in progress when the next occurrence comes due, with
// context.Canceled and the cause [ErrSuperseded] (context.Cause), so that
// an executor tells it from its own timeout (DeadlineExceeded), and the
// HTTP executor's message says that the next occurrence came due (a pending
// retry or errorAction is dropped; the cancelled occurrence is Failed, not
// faulted) and starts the new one once the attempt ended (after an
// executor that ignores its context, the occurrences that came due
// meanwhile run once, as the first of them, under the missed policies
// RunOnce and Skip, and the Skipped entry of the others says that they
// came due while it was in progress); AllowAll starts it at once, beside
// the ones in progress (below). An attempt of a job put again while it runs
// goes on under the definition it began under: under CancelRunning it is
// cancelled when that definition's next occurrence comes due, and its
// entry says that a new definition was put; under CancelRunning the new
// definition's occurrences that came due meanwhile run once, as the first
// of them (under RunOnce and Skip), when it ends, and the Skipped entry of
// the others says that they came due while it was in progress. Under
// AllowAll an attempt begun one at a time (before the job's policy was
// AllowAll, by a put of the job or of its collection's runPolicy) holds
// the job until it ends; then each occurrence that came due meanwhile
// starts, beside the others (at most [MaxRunning] in progress; those
// beyond are skipped, on record), as it would have at its time, and the
// held occurrence's retry or errorAction, if any, runs beside them too;
// like BufferAll's, they get no Postponed entry each (one begun under
// AllowAll runs beside them from the start). The outcome of an attempt
// applies the run policy read when the attempt was claimed, over a store
// that records outcomes in batches ([BatchRecorder]), unless the job was
// written meanwhile: a collection's runPolicy changed during an attempt
// applies from the job's next step.
// All of these hold across instances sharing a
// store, as the job's lease gives one instance at a time the right to step
// it. An instance that is stopping (Stop was called) claims no more jobs,
// so CancelRunning does not cancel its attempts in progress when the next
// occurrence comes due: they end on their own (or at their timeout, the
// deadline of their context, or when Stop's context ends), and that
// occurrence waits for another instance. A change to a
// collection's runPolicy reaches the jobs of every instance within 5
// seconds (at once on the instance that made it).
//
// Under AllowAll each occurrence runs on its own, with its own retries,
// errorAction and execution tag, whichever instances claim the job: the
// instance that starts an attempt of it writes the job with its claim on
// the attempt ([Run]) and releases the job's lease, so that the job's next
// occurrences start meanwhile, and writes the attempt's outcome to the job
// when it ends (its history entry is recorded by the job's next step). At
// most [MaxRunning] occurrences of a job are in progress at once (running,
// or waiting for a retry or their errorAction); one that comes due while
// that many are is skipped, on record. The claim on an attempt lasts at
// first the attempt's timeout plus Config.LeaseDuration, and its instance
// extends it while the attempt runs, as it extends a job's lease, also past
// the timeout when an executor ignores its context (a write of the job
// once the claim has less than two thirds of a LeaseDuration left): the
// attempt runs once while its instance lives. When the instance stops
// (Stop's context ended before the attempt) before the outcome is written,
// the next instance to claim the job after the claim expires runs the
// attempt again, with the same execution tag (as a job whose lease expired
// is run again), and a late outcome of the stopped attempt is not
// recorded. Each attempt takes the permits of its collection's limits like
// any other (extended with its claim); one refused waits unclaimed, as
// between retries, until it may run.
// Occurrences end in
// any order: the counters count each, lastExecutionTime is the latest
// start, and an occurrence that ends after a newer one ended or faulted
// changes neither the job's health nor its count of consecutive faults
// (pauseAfterFaults). The job is Completed (or Faulted) when its last
// occurrence in progress ended. Disabling the job drops its occurrences
// that wait for a retry; one whose attempt is under way ends with it (its
// outcome counts, with no retry), as Postpone's occurrence in progress
// does; putting the job again keeps those whose attempt is under way the
// same way; deleting the job drops them all, and the outcomes of attempts
// under way are not recorded.
//
// Every scheduled occurrence that is passed over (merged into a late run,
// dropped by a policy or a catch-up window) is on record: one history
// entry with status [StatusSkipped] per run of consecutive ones, with their
// count (HistoryEntry.Skipped, counted up to [MaxSkippedCounted]), the
// expected times of the first and last, and a message that says why. A
// minutely job paused for a week writes one such entry, not ten thousand.
// While an occurrence waits for its retry (under the overlap policies
// Postpone and Skip), the job's next occurrences are passed over one by
// one as each comes due: the entry of such a run is kept with the job,
// its count growing, and recorded once the run ends (the occurrence in
// progress ended), with StartTime and EndTime the instants the first and
// the last of them were passed over.
// Enabling a Disabled job (EnableJob, or a PatchJob that sets the state)
// starts it from now; the occurrences it passed over are on record the
// same way, except a one-time job's (no recurrence): it keeps its
// occurrence until it runs, and one that came while the job was Disabled
// is missed, handled by the missed policy as after downtime (RunOnce and
// RunAll run it at once, with its expected time; Skip and a catch-up
// window pass it over, on record, when it is found too late). The job is
// Completed (or Faulted) once that occurrence ran or was passed over,
// never before. Disabling it (DisableJob, or a PatchJob) drops an occurrence
// that waits for its retry or errorAction, with a Failed entry "dropped
// before its next attempt: the job was Disabled", as CancelRunning's
// "cancelled before its next attempt" entry does for the one it drops. A PutJob that changes the job's definition or state replaces
// the job and starts it afresh, with nothing to pass over; one that
// changes neither (a template deployed again) leaves its schedule as it
// is, as [Scheduler.Schedule] leaves an unchanged job alone; when its
// tags are the job's too, it writes nothing, and the job keeps its ETag
// (the same representation keeps its ETag, as HTTP has it; so do the
// jobs of a PutJobs batch that change nothing).
//
// [Scheduler.BackfillJob] (REST: POST .../jobs/{job}/backfill with
// {"from", "to", "only": "Missing" | "All", "dryRun"}) runs the job's
// occurrences expected in a past range, each once, in order, as ordinary
// occurrences with their retries and errorAction and the original expected
// time; their history entries are marked Backfill. They are the
// occurrences the schedule runs: under an exclusion calendar, those it
// skips are left out and those it moves run at the instant they were moved
// to (once when two move onto one), in the range when that instant is. Missing (the default)
// leaves out the occurrences that have an attempt on record; both leave
// out those that wait to be backfilled or are in progress, so a request
// sent twice (a form posted twice) runs each occurrence once, and All
// runs again only what has ended; dryRun only answers which would run.
// One request may ask for at most [MaxBackfill] occurrences. Those that
// wait to be backfilled stay when the job is paused or disabled (they run
// once it is Enabled again) and when a new definition of it is put: they
// were asked for by their expected times, and run under the definition
// put, whether or not its schedule has those times.
//
// Every job has a health, derived when it is read ([Scheduler.GetJob],
// [Scheduler.ListJobs], GET over REST as "status": {"health"}), the first
// that holds of: Failing (its latest finished occurrence faulted; not
// one that was Failed without faulting, cancelled by CancelRunning or
// dropped by disabling the job before its next attempt, which the
// store's record tells by [JobSchedule].LastCancelled), Late
// (Enabled, due for more than [HealthLateAfter], no attempt in flight),
// Stale (Enabled, and [HealthStalePeriods] scheduled occurrences came due
// since its last success, or since it was put or last enabled again,
// whichever is latest), Skipped (a run policy passed over its latest
// occurrence), OK. A Disabled job's occurrences do not come due: a paused
// job is neither Late nor Stale (it is Failing when its latest occurrence
// faulted), and once enabled again ([Scheduler.EnableJob], a PatchJob
// of its state, or its resumeTime) it is not Stale before HealthStalePeriods more come due
// without a success. Nor do the occurrences of the jobs of a collection
// that is not Enabled come due: they too are neither Late nor Stale, and
// have no nextExecutionTime, as the dashboard shows none (GetJob and ListJobs judge by the collection's state as this instance
// last read it, at most a few seconds old; HealthCounts reads it). ListJobsOptions.Health (REST: $filter=health eq
// Failing) keeps the jobs of one health, [Scheduler.HealthCounts] counts
// them over the store (the telemetry package exports it as the gauge
// jobclock.jobs.health), and the dashboard shows it.
//
// A Disabled job may carry "stateReason" (at most [MaxStateReason]
// characters) and "resumeTime" (in the future, within 18 months): at
// resumeTime the job is Enabled again by whichever instance claims it
// first, and its run policy handles what it missed. pauseAfterFaults
// disables the job with a stateReason that says so (an occurrence that
// succeeds starts the count over; so does enabling the job). Both come
// back on GET and in [JobRecord.Definition] while the job is Disabled; a
// PatchJob that sets the state to Enabled drops them.
//
// # Job collections
//
// A job collection groups jobs under a plan (SKU) with quotas and a state.
// Its JSON form is the ARM resource body without the read-only parts:
//
//	{"location": "West Europe", "tags": {...},
//	 "properties": {"sku": {"name": "Standard"}, "state": "Enabled",
//	                "quota": {"maxJobCount": 10, "maxRecurrence": {"frequency": "Hour", "interval": 1}}}}
//
// [ParseCollection] reads it as ParseJob reads a job (the members "id",
// "name" and "type" of the ARM envelope are accepted and ignored): every
// problem at its path, with the same suggestions
// ("properties.sku.name: "Fre" is not a plan, did you mean "Free"?",
// "sku: unknown field, it belongs in properties"), the problems of reading
// before those of the rules.
//
// The plans and their default quotas:
//
//	Free        5 jobs     at most once an hour
//	Standard    50 jobs    at most once a minute (the default plan)
//	P10Premium  50 jobs    at most once a minute
//	P20Premium  1000 jobs  at most once a minute
//
// An explicit quota overrides the plan's values field by field, in either
// direction. maxRecurrence may have frequency Second, an extension:
// {"frequency": "Second", "interval": 1} allows a job every second, which no
// plan does. [DefaultCollection], the collection of [Scheduler.Schedule],
// is created with that quota and the Standard plan's 50 jobs
// ([DefaultCollectionDefinition]; the jobclock command makes the
// collection "default" of a file of one job so too), so
// s.Schedule(ctx, "tick", recurrence.Every(10, recurrence.Second), act)
// works as it is; for any other collection, put such a quota first. A job is too frequent for maxRecurrence when two of its
// occurrences can lie closer together than the quota's period: the
// scheduler expands the first 200 occurrences of the job (count and
// endTime applied) and compares the shortest gap between consecutive ones
// with the quota's frequency times its interval, where a day counts as 23
// hours, a week as 7 days less an hour and a month as 28 days (the shortest
// each can be, so that daylight saving time and short months never make an
// allowed schedule look too frequent). A job with a single occurrence is
// never too frequent, and neither is one whose occurrences lie whole
// minutes apart (no seconds) under a quota of a minute or less. So a
// Minute recurrence with schedule minutes [0,15,30,45] has a 15-minute gap
// and is refused under an hourly quota, and "@every 30s" is refused under
// the Standard plan's once a minute.
//
// A write of a collection (PutCollection, PatchCollection) whose
// maxRecurrence is stricter than the collection's fails with
// ErrQuotaExceeded when one of its jobs is too frequent for it, and no
// job put at the same moment slips past that check: the write first
// marks the collection with the stricter maxRecurrence
// (JobCollection.Checking), which puts of jobs honour from then on, then
// checks the jobs, then writes the collection (or clears the mark and
// fails with ErrQuotaExceeded; another write of the collection at the same
// moment clears the mark too, and the stricter write then fails with
// ErrConflict; the last write is made again when the store fails, as for
// calendars; see [MarkLifetime] for a mark left behind); every put of a job (PutJob, PutJobs, PatchJob of a recurrence,
// Schedule) reads the collection again after its write and, when the
// collection or its mark no longer allows the job, puts the job back as
// it was (deletes a job it created) and fails with ErrQuotaExceeded.
//
// # Limits toward a target
//
// A collection's "limits" (an extension) protect the services its jobs
// call: how many attempts run at once, and how many start a minute, for
// each value of a key:
//
//	"properties": {"limits": [{"key": "host", "maxConcurrent": 5, "ratePerMinute": 120}]}
//
// key is host (the target of the action attempted, as [LimitTarget] gives
// it: an HTTP action's URI host with its port, a storage queue's account,
// a Service Bus namespace; for other action types, Go funcs and a host's
// types, the action type),
// job (each job on its own) or collection (all its jobs together); one
// limit per key. maxConcurrent is 1 to [MaxLimitConcurrent];
// ratePerMinute is 1 to [MaxLimitRate], spaced evenly (at most one start
// every 60/ratePerMinute seconds, no bursts); at least one of them. Every
// attempt takes the permits of every limit of its collection before it
// starts: retries too, and an errorAction toward its own target (it calls
// that target, so a dead-letter queue's namespace has its own permits).
// Limits of different collections never share permits.
//
// They hold across every instance that shares the store, through the store
// (see [Limiter]; the stores of this module implement it): a permit of
// maxConcurrent is leased like a job, renewed while its attempt runs and
// given back when it ends, so that the permits of an instance that died
// return after Config.LeaseDuration. A limit holds as far as these leases
// do: an attempt whose permits could not be renewed until they were about
// to expire (its instance cut off from the store), or which the store says
// it no longer holds, has its context cancelled, fails with a message that
// says so, and is logged as an error (AttemptEnd.PermitsLost; package
// telemetry counts it in jobclock.limit.permits_lost); an executor that
// ignores its context may still overrun the limit. An attempt refused a
// permit waits with its occurrence in progress: its job is recorded as
// due again (when
// the rate's next start is free; for maxConcurrent, after 50 ms, then half
// the time it has waited so far, at most a second), and any instance may
// claim it then; a wait is neither an attempt nor a history entry, so
// nothing runs twice or is lost, and occurrences that come due meanwhile
// follow the overlap policy. The wait is measured from the first refusal
// to the end of the last wait, when the attempt was due again: its history
// entry has it (HistoryEntry.LimitWaitMillis, "limitWaitMs" over REST) and
// its message says how long and for which key; the Observer gets it as
// Attempt.LimitWait, and package telemetry counts it (jobclock.limit.waits,
// jobclock.limit.wait). It is not lateness: a first attempt that waited is
// due (Attempt.Due) at its expected time plus the wait, a retry at the end
// of its wait, and jobclock.occurrence.lateness leaves the wait out. A
// retry's wait does not move its retryPolicy.maxRetryDuration: a retry
// that a limit would hold past that deadline does not start, and the
// occurrence faults at the deadline (see Retries above). A change of a
// collection's limits reaches every instance within 5 seconds.
//
// # Exclusion calendars
//
// A collection keeps exclusion calendars, an extension beyond Azure
// Scheduler: holidays, change freezes and blackout windows, each under a
// name ([Scheduler.PutCalendar], GetCalendar, ListCalendars,
// DeleteCalendar; PUT, GET and DELETE of
// .../jobCollections/{c}/calendars/{name} in the management API):
//
//	{"properties": {
//	  "timeZone": "Europe/Berlin",
//	  "dates": ["2026-12-25", "2026-12-26"],
//	  "ranges": [{"start": "2026-12-24T12:00:00", "end": "2027-01-02T00:00:00"}],
//	  "rules": [{"frequency": "Year", "schedule": {"months": [5], "monthDays": [1]}}],
//	  "ical": "BEGIN:VCALENDAR\r\n...END:VCALENDAR\r\n"}}
//
// dates are local dates (YYYY-MM-DD); ranges are spans of local time in
// the calendar's zone, start included and end excluded; rules are
// recurrences in the form of a job's (no count, endTime, window or
// timeZone of their own), and each local date on which one has an
// occurrence is excluded (a yearly rule may name monthDays; intervals count
// from 1 January 2000); ical imports the events of an iCalendar text
// (RFC 5545), such as a holiday calendar exported from Google Calendar,
// Outlook or Apple Calendar: each instance of an event's recurrence set
// (DTSTART, RRULEs up to 2100, RDATE dates, date-times and periods, less
// EXDATE and EXRULE) is excluded, an all-day one as the dates it spans,
// another as the span from its start to DTEND (or DURATION, whose days
// are days of the wall clock). A VEVENT with another's UID and a
// RECURRENCE-ID moves or resizes that instance (the highest SEQUENCE of
// several; with RANGE=THISANDFUTURE, the later ones too); cancelled
// events (STATUS:CANCELLED) exclude nothing; transparent ones
// (TRANSP:TRANSPARENT, as holidays are exported) are excluded all the
// same. A TZID is an IANA or Windows name, or else the TZID of a
// VTIMEZONE of the text, whose rules are evaluated; any other is
// refused, never read as UTC. VTODO, VJOURNAL, VALARM, X- properties and
// components, a byte order mark, CRLF or LF line ends and lines folded
// with a space or a tab are read past. Not read: VFREEBUSY periods,
// VTIMEZONE rules before 1970, and instances after 2100 (see
// [CalendarProperties]). An event's set holds at most 10,000 instances,
// a text at most 50,000 excluded days and spans. A rule (RRULE or EXRULE)
// without an occurrence before 2100 (BYMONTH=2;BYMONTHDAY=30, a BYSETPOS
// that selects nothing, an UNTIL before the first one) is a mistake and is
// refused at its line, found without a search to the year 9999; after 5
// such rules a text's further rules are not read. The refusal is of a
// write (ParseCalendar, Calendar.Validate and Compile, PutCalendar and
// the REST PUT): a calendar stored by a version that accepted such rules
// still applies, read by [Calendar.CompileStored] as that version read
// it (the rule adds nothing; its event keeps its DTSTART instance), and
// is refused only when written again. [ParseCalendar] reads the JSON form and
// names each problem at its path ("properties.ranges[0].end";
// "properties.ical" with the line: "line 3: DTSTART ..."). A calendar is kept in
// its collection's record, so that writing it is one atomic write of the
// collection and no store needs a table of its own; each calendar has its
// own ETag (PutCalendarOptions.IfMatch, DeleteCalendarOptions.IfMatch;
// REST: If-Match on PUT and DELETE), and writing one also changes the
// collection's. Replacing a collection (PutCollection, PatchCollection)
// keeps its calendars. [recurrence.CompileExclusions] is what a calendar
// compiles to.
//
// A job names a calendar of its collection in its recurrence, and says
// what becomes of an occurrence the calendar excludes:
//
//	"recurrence": {"frequency": "Month", "schedule": {"monthDays": [-1], "hours": [18]},
//	  "calendar": "holidays", "onExcluded": "PreviousIncluded"}
//
// (in Go, recurrence.Recurrence's Extensions: Calendar and OnExcluded).
// Skip (the default) passes the occurrence over; NextIncluded and
// PreviousIncluded move it to the same wall time, in the calendar's zone,
// on the next or previous day the calendar does not exclude (at most
// [recurrence.MaxMoveDays] away; on a day the clocks change, a time in
// the gap runs shifted by it and a repeated time at its first instant),
// so the job above runs on the last business day of each month. The
// rules:
//   - The calendar judges the instant the occurrence would run at (with a
//     window, the planned one, offset included); a move keeps that wall
//     time. The expected time (history, the receiver's header, lateness,
//     nextExecutionTime) is the instant it runs at: the moved one.
//   - Moved occurrences keep their order: one moved onto or past the
//     instant of the next occurrence (NextIncluded), or onto or before the
//     previous one (PreviousIncluded), runs as that one, so two
//     occurrences moved onto one instant run once.
//   - count counts the occurrences that run; endTime bounds the scheduled
//     instants (a move may take the last one past it).
//   - A skipped occurrence leaves a Skipped history entry whose message
//     names the calendar (`excluded by calendar "holidays"
//     (recurrence.onExcluded Skip)`), one for a run of them, written when
//     the occurrence before them is taken: its startTime and endTime are
//     that instant, before the skipped ones, and its
//     expectedExecutionTime and lastExpectedTime the first and last
//     skipped instants (the engine wakes at the occurrences that run, not
//     at the skipped ones). Occurrences the calendar excludes before the
//     job's first one (from its startTime, or when it was put) leave no
//     entry: its nextExecutionTime is the first it does not exclude. A
//     merged occurrence leaves none either.
//   - A job that names a calendar its collection does not have is refused
//     at recurrence.calendar (properties.recurrence.calendar in the REST
//     API), and so is one the calendar leaves no occurrence within
//     [recurrence.CalendarHorizon] (732 days) of its first.
//   - Writing a calendar (creating or replacing it) changes the jobs
//     that name it from their next occurrence on, the one already
//     planned included: before PutCalendar returns, it plans the next
//     occurrence of each Enabled job that names the calendar again
//     (nextExecutionTime, in GET and the dashboard, shows the new
//     instant), from the instant the recurrence scheduled it at. One the
//     calendar now excludes is skipped (its Skipped entry is recorded by
//     the job's next step, at once on a running instance) or moved; one
//     an older version moved goes back to where the new one places it (a
//     Saturday occurrence moved to Monday runs on Saturday again once
//     Saturday is no longer excluded). It is never
//     planned at or before the occurrence before it, so none runs twice;
//     count and endTime apply as before; one moved onto an instant
//     already past runs at once, as a missed occurrence
//     (runPolicy.missed). A job that cannot be written (the store
//     failed, or other writes kept coming first) is logged as an error
//     naming the collection, the job and the calendar, and is planned
//     again by the engine as below. See [Timing.Replan]. An occurrence
//     that is running (its outcome is not yet recorded) or already due
//     is left to the engine: it runs, and is counted, once, and the
//     occurrence after it is planned under the new version.
//   - Every instance checks a scheduled occurrence against the calendar
//     it holds when it comes due, before it takes it, and plans it again
//     where that calendar places it. When the two disagree it reads the
//     collection again first: an instance whose copy of the calendars
//     is older than the plan (it keeps a collection's calendars, with
//     its run policy, for up to 5 seconds) does not plan the occurrence
//     back under the older version. An instance that takes an occurrence
//     within those 5 seconds may plan the one after it under the older
//     version; that one is checked in turn when it comes due, so it runs
//     only where the new calendar places it, and GET shows it there
//     meanwhile (GET places the planned occurrence under the calendar the
//     instance answering holds). The instance that wrote the calendar
//     follows at once.
//   - A replacement that would leave a job no occurrence within the
//     horizon from now is refused at "properties", naming the jobs. No
//     job is left naming a calendar that leaves it no occurrence,
//     whatever runs at the same time: a replacement first writes the new
//     version beside the calendar (CalendarEntry.Next; the engine still
//     applies the old one), then checks the jobs that name it, then makes
//     it the calendar, or drops it and fails. A put of a job that names a
//     calendar checks the job under both versions, before its write and
//     again after it (when it reads the collection again, as for a
//     deletion below), and when either leaves the job no occurrence it
//     puts the job back as it was and fails at recurrence.calendar: of
//     the two at the same moment, at least one sees the other. Of two
//     replacements at the same moment, the one written second is checked
//     and the other fails with ErrConflict. The write that makes or drops
//     the new version is made again when the store fails (up to 10 times,
//     over about 3 seconds, while the caller's context lasts). A mark
//     left behind all the same (the writer stopped, or the store stayed
//     down) holds for [MarkLifetime] (a minute) from when it was made:
//     puts of jobs ignore an older one, and the next write of the
//     collection drops it; a replacement or a stricter maxRecurrence whose
//     check of the jobs takes more than half of that fails with
//     ErrConflict instead of taking effect, so that no put ignores a mark
//     that can still take effect (the rest is the margin for instances'
//     clocks to differ). A mark written by a version of this package from
//     before marks carried their instant is ignored.
//   - Deleting a calendar that jobs name (jobs in a final state aside)
//     fails with a [*CalendarInUseError] naming them (errors.Is
//     [ErrCalendarInUse]; 409 Conflict in the REST API).
//   - No job is left naming a deleted calendar, whatever runs at the same
//     time: a deletion marks the calendar first (CalendarEntry.Deleting;
//     puts of jobs naming it then fail at recurrence.calendar, "is being
//     deleted", and the engine still applies it), then looks for jobs
//     naming it, and removes it or clears the mark. A put of a job that
//     names a calendar (PutJob, PutJobs, PatchJob, Schedule) reads the
//     collection again after its write, and when the calendar is marked
//     or gone it puts the job back as it was (deletes a job it created)
//     and fails at recurrence.calendar, "was deleted while the job was
//     written": of the two at the same moment, at least one sees the
//     other. The mark carries its instant (CalendarEntry.DeletingAt) and
//     holds for [MarkLifetime] as the marks above do; one written
//     without an instant is ignored. A job that names a calendar its collection does not have
//     anyway (a store written past the Scheduler) runs without one, and
//     the engine logs a warning naming the job and the calendar, once for
//     each version of the job.
//
// [Job.TimingUnder] gives a job's occurrences under a compiled calendar,
// as the engine runs them ([Job.TimingIn] writes them in a Timing of the
// caller's); [Timing.Moved] tells a moved occurrence from the instant it
// was scheduled at.
//
// # History
//
// Every attempt of a job's action leaves one [HistoryEntry]: the main
// action's first attempt (retryCount 0), each retry, and each attempt of
// the error action (actionName ErrorAction). An occurrence that comes due
// while the previous one is still in progress leaves an entry with status
// Postponed, and so does one that waits its turn behind an occurrence that
// started after it came due (runPolicy.missed RunAll catching up, a run
// requested); its message names the occurrence it waits for. Its startTime
// and endTime are when it was postponed: when it came due (a run now: when
// it was asked for), also while the occurrence in progress had an attempt
// under way, whose end is when the Scheduler learns of it; when it waits
// behind an occurrence that started after it came due, the instant that
// one started. repeatCount is the occurrence number, counted from 1;
// manual runs (RunJob) are occurrences too, their entries marked Manual
// (REST: "manual": true; entries stored before the mark was recorded
// read unmarked). A run now's expected time is when it was asked for, cut
// to the millisecond, the precision a JavaScript Date keeps (a scheduled
// occurrence's falls on a whole second): in the record RunJob answers
// (REST: requestedTime), the history entries and the
// x-ms-scheduler-expected-execution-time header. Its attempts continue
// the trace of the call that asked for it;
// asked for again before it starts (also while an occurrence of the job
// is in progress, however many times), it runs once, at the time and
// with the trace context of the request that asked for it first. The
// failed last attempt of
// an occurrence's main action is marked Faulted (faultedCount counts
// those occurrences). The message holds the
// executor's description of the outcome (for HTTP, the response status and
// at most 2,048 bytes of the body), followed by the error of a failed
// attempt unless the description already quotes it, cut to
// MaxHistoryMessage bytes.
//
// The one exception is an attempt whose instance stops (killed, its
// machine lost) before the attempt's outcome is stored. Nothing is
// written when an attempt starts (but under overlap AllowAll), as that
// would cost a write per attempt, so the instance that takes the job over
// (see "Several instances") cannot tell such an attempt from a claim
// whose instance stopped before starting it: the attempt leaves no entry,
// and executionCount and failureCount do not count it. Its occurrence
// runs again with the same execution tag and retryCount, and the entry of
// that attempt stands for both; a receiver that logs its requests sees
// two with one tag. Under AllowAll, whose claim on an attempt is written
// when it starts, the attempt lost is run again alike, without an entry.
// Under CancelRunning, when the job's next occurrence came due meanwhile,
// the occurrence does not run again: it is cancelled, with a Failed entry
// that says that its instance stopped before recording its attempt's
// outcome, and that the attempt lost is not counted.
//
// Entries are listed newest first. They are kept for Config.HistoryRetention
// (60 days) and at most Config.HistoryPerJob (1,000) per job; both limits
// are applied by a periodic prune, so a job may briefly hold a few more.
// Config.OnHistory sees each entry as soon as it is stored.
//
// A host that wants the timing alone, as from a cron library, sets
// Config.HistoryPerJob to NoHistory: no entry is stored, and none is made
// unless Config.OnHistory or Config.Observer is set (they still get every
// entry, as the outcome that it describes is recorded, so package
// telemetry's metrics stay whole). Job states, the status counters,
// lastExecutionTime, faults, pauses and the end of a recurrence are kept
// as with history; what is lost is ListHistory, the dashboard's history,
// the attempts in an errorAction's failure document, and
// [Scheduler.BackfillJob] of the missing occurrences (BackfillMissing,
// the default), which reads history to know which occurrences ran: it is
// refused, and BackfillAll runs the range.
//
// # Lifecycle
//
// [New] checks the Config and returns a Scheduler that does nothing until
// [Scheduler.Start]. The management methods (PutJob, GetJob, ...) work
// before Start as well: they read and write the store. Start launches one
// goroutine that owns the timer and Config.MaxConcurrency workers: the
// loop claims due jobs from the store and hands each to a worker, which
// runs the attempt and records its outcome; the loop then sleeps
// until the next job is due, until a management call wakes it, or for at
// most Config.PollInterval, so that work added by other processes sharing
// the store is found. [Scheduler.Stop] stops claiming, gives back the
// claims held ahead of their instants (see "Claiming ahead"), waits for the
// attempts in flight to end and record their outcome, and returns; if its
// context ends first, the attempts' contexts are cancelled, Stop waits at
// most Config.LeaseDuration more for their outcomes to be stored, and
// returns the context's error (an attempt so cancelled fails, retried as
// any failure, and history says "cancelled: the scheduler stopped", not
// that it timed out; as at the timeout, an executor that watches its
// context and returns success when Stop cancels it, or within a second
// after, keeps its success: the built-in HTTP executor's 2xx answer whose
// body the cancellation cut short is Completed, not run again). So a host may close its store as soon as Stop
// returns: only an attempt whose executor ignores the cancellation, or
// whose outcome the store does not take within that time, is lost, and
// its occurrence runs again on the instance that takes the job over. No job that a claim brings back after Stop was called
// starts, even when Stop's context ended early: it is given back unrun
// (see "Claiming ahead"), or, over a store that is not an
// [AheadClaimer], its lease is released. A job handed to a worker before
// Stop was called may still start while Stop waits; once Stop has
// returned, none starts: a worker that gets its job, or the store's
// answer it waited for (the run policy, the permits of a limit), only
// after that gives the claim back and records nothing. The store calls of
// workers and of recording outcomes have no deadline of their own, so a
// store that hangs keeps a Stop whose context never ends waiting as long.
// From the call of Stop, every method that writes the store, Start and Stop
// return [ErrStopped]; the methods that only read the store (GetJob,
// ListJobs, ListHistory, the collections, the counts) answer while Stop
// waits, so that a host can go on serving reads while the attempts drain,
// and return ErrStopped once Stop has returned; ParseJob, ParseOptions and
// InFlight work as before.
//
// # Claiming ahead
//
// Claiming ahead is on by default (Config.ClaimAhead defaults to
// DefaultClaimAhead, 100ms, the value BENCHMARKS.md measures: at a steady
// 1,000 occurrences a second on PostgreSQL, claiming ahead 50ms cut the
// server's CPU per occurrence to about a quarter and the process's to
// under half, and 100ms rather than 50ms halves the claims and the record
// calls again and took about a sixth more off the server's CPU per
// occurrence, a tenth off the process's, a fifth on SQLite): the loop
// claims the jobs
// due within ClaimAhead in one store call, up to 256 at a time and no more than
// Config.MaxConcurrency leaves free, holds each under its lease, and starts
// it at its due instant from memory: at a steady rate one claim serves all
// the occurrences due in the next 50 to 100 milliseconds (the loop claims
// again every half ClaimAhead while it finds jobs; from about 1,000 a
// second at the defaults, where those are more than MaxConcurrency leaves,
// a claim takes the slots free instead, about half MaxConcurrency, see
// below), rather than a claim and
// a [Store.NextDue] per due instant, and no occurrence waits for the claim's
// round trip. The held jobs due within Config.FiringWindow (the firing
// granularity, [DefaultFiringWindow] 2ms) of the earliest one start
// together, at the instant of the last of them (none early, none more than
// the window late unless the loop is in a store call then, as for any held
// job), from one wake-up of the loop and one hand-off to the workers: at
// 1,000 a second, one wake-up for about three occurrences. At a steady rate
// those wake-ups and the thread and goroutine switches they bring are much
// of the process's CPU per occurrence: a longer window trades start
// lateness for fewer of them. On PostgreSQL at
// a steady 1,000 a second (measured with ClaimAhead 50ms, the default
// then), the loop and the workers woke about 0.9 times per
// occurrence with the default window, 1.5 times with [NoFiringWindow] (each
// held job at its own instant, a median start lateness of about 1ms instead
// of 2), 0.5 with 5ms (about an eighth less of the process's CPU per
// occurrence, a median lateness of about 4ms) and 0.35 with 10ms (no less
// CPU than 5ms, a median lateness of about 6ms). The default keeps every
// held job within 2ms of its instant (while the loop is free); a host that
// runs many jobs due
// close together and minds its CPU more than a few milliseconds may set
// 5ms. What a window gives up: an occurrence may start up to the window
// late, and jobs due at different instants within it start at the same
// instant, in no set order. A held job counts as in
// flight ([Scheduler.InFlight]) once it starts. The held jobs and the attempts running take at most
// MaxConcurrency workers, so that each held job finds a free worker at its
// due instant (one that waited for a worker would outlive its lease, and
// another instance would run it too); an outcome waiting for a slow store
// keeps its job in flight (and its lease, which the lease keeper extends
// until the outcome is recorded) but frees its worker, and wakes the loop
// when it waits for one, so that it does not keep the loop from claiming;
// the worker that records the outcomes waiting is busy until the store
// answers. With a store call held, the jobs due meanwhile start on time
// while a worker is free and fewer than 2,048 outcomes wait (a bound on
// their memory: a few MB, about 1.7 KB each with no history kept); with
// every worker busy or recording, nothing starts, and the loop claims
// again as their records free workers. While jobs the loop claimed wait
// for a worker to take them, it claims no more: the worker that takes the
// last of them wakes it, and it claims every slot freed meanwhile in one
// call, rather than a call for each attempt that ends (the one or two
// slots it frees) while those claimed before still wait. At most 256 are held at once. At a steady rate
// whose jobs due within ClaimAhead are more than that leaves (rate ×
// ClaimAhead above what the running attempts leave of MaxConcurrency:
// from a little under 1,000 a second at the defaults), a
// claim takes every slot free and reaches only as far as the jobs it
// takes; the loop then claims again halfway to the instant of the last
// job it holds, or when a job comes due again or is written before then
// (that job is claimed when the next attempt ends and frees its slot,
// as it may be due now), rather than at once or as each attempt ends: the held jobs that start
// meanwhile free their slots as they end, and the next claim takes them
// all in one call. The held reach shortens to MaxConcurrency ÷ rate (20ms
// at 5,000 a second), claims stay batches of about half MaxConcurrency
// (the cost of an occurrence stays flat as the rate grows), and half the
// reach is left for a claim's round trip: at rates where that is too
// short for the store, raise MaxConcurrency above rate × ClaimAhead. A negative
// ClaimAhead ([NoClaimAhead]) claims each job only once it is due.
// While held claims are about to start, outcomes wait to be recorded
// together in one store call ([BatchRecorder]): an outcome waits at most
// ClaimAhead (100ms by default) from the end of its attempt for
// the call that records it to start (at a steady 1,000 occurrences a
// second, about 100 share a call), longer only behind a call under way
// that has not returned. An outcome whose job is due again within that
// time is recorded at once, with those waiting. Stop records every
// outcome before it returns.
// Upgrading from a release where claiming ahead was off by default: a
// zero Config.ClaimAhead (the field left unset) now means
// DefaultClaimAhead; set it to NoClaimAhead to keep claiming ahead
// off.
// Claiming ahead needs a store that is an [AheadClaimer] (the memory,
// SQLite and PostgreSQL stores are): a claim ahead takes the jobs due
// within ClaimAhead but only the leases that have expired at the claim,
// and a claim given back unrun puts back the lease it replaced. Over a
// store without that capability (a user's store written before it) the
// loop claims each job once it is due, whatever ClaimAhead says.
//
// What happens to a held job:
//   - A write through this Scheduler wins over the held occurrence when it
//     returns before the due instant: PutJob, PatchJob (DisableJob,
//     EnableJob), DeleteJob, RunJob, BackfillJob, PutJobs, ScheduleFunc and
//     a write of the job's collection (PutCollection, PatchCollection,
//     DeleteCollection) give the held claim back (the job is written back
//     as claimed, which releases its lease) before the loop starts anything
//     else, and the loop claims again: what the store then holds (a new
//     definition or due time, a disabled or deleted job, a run now) is what
//     runs. The Tx writes do the same on a store without notifications
//     (SQLite) and, on PostgreSQL, once the host commits (see below).
//   - A write through another instance (another process over the same
//     store) wins the same way on PostgreSQL: its notification ([Notifier])
//     makes every instance give back all the claims it holds, a few
//     milliseconds after the commit (a notification that fails, the
//     connection lost, is sent again until it goes through, and logged
//     to postgres.Options.Logger once when the sends start failing and
//     once when one goes through). Only PutJob and collection writes
//     notify, not deletes: a job deleted through another instance within
//     ClaimAhead of its due instant may still run once, its outcome then
//     dropped, as for an attempt in flight when the job is deleted. On a
//     store without notifications, a write through another process within
//     ClaimAhead of the due instant may not stop the held occurrence: it
//     runs with the definition it was claimed with, and its outcome is
//     recorded over the write as for an attempt in flight (the write's due
//     time and state apply from the next occurrence).
//     A notification of store/postgres names the jobs written (a
//     [WriteNotifier]): an instance gives back only its claims on those
//     jobs (every job of a collection for a collection write or a bulk
//     put, every job for a write in a host's transaction), so writes to
//     other jobs, the engine's own job writes (the runs of occurrences
//     that run beside others, calendar re-plans) included, leave the
//     claims it holds alone. This instance's own notifications name the
//     jobs it already gave back: they cost nothing more unless the loop
//     claimed one of those jobs ahead again before the notification
//     arrived (a few milliseconds), and then that claim is given back
//     and the job claimed once more. A store that is a [Notifier] but not
//     a WriteNotifier names no job: each notification gives back every
//     held claim.
//   - A held claim is started only while at least two thirds of
//     LeaseDuration of its lease are left, so that the lease keeper extends
//     the lease in time. One the loop could not start before that (a store
//     call that hung, a long pause of the process, a jump of the clock)
//     does not start, even if its lease has not ended yet: it is given
//     back, the job due again at once, and the next claim, this
//     instance's or another's, runs the job once (a claim that another
//     instance took over meanwhile is no longer this one's: it is left
//     to that instance). The loop gives claims on written jobs back
//     within a tenth of LeaseDuration, after it has started the held
//     claims that are due; a claim not given back by then stays leased
//     until its lease expires (one warning says how many were, however
//     many there are, and names up to ten of their jobs).
//   - Stop gives back every held claim before it returns (unless its
//     context ends first): another instance claims those jobs at once and
//     runs each once, on time, rather than once their leases expire. A
//     claim or give-back under way when Stop is called is not cut short (a
//     statement cancelled midway may have been committed with its answer
//     lost, leaving jobs leased to an instance that does not know it holds
//     them); it ends within LeaseDuration, and what it claimed, due
//     already or not, is given back unrun too, also after Stop returned
//     because its context ended first. Over a store that is not an
//     AheadClaimer (the loop holds no claim there, but a claim under way
//     as Stop is called, or a worker that gets its job after Stop
//     returned, leaves a claim unstarted) each such job is read again
//     and recorded as it is, with no history ([Store.Record]), which
//     releases its lease: another instance runs it at once. That costs
//     one more Version (the ETag stays), and the lease the claim
//     replaced is not put back, so the next claim of a job taken over
//     from another instance reports no takeover. The give-back at Stop
//     takes at most a tenth of LeaseDuration: when the store hangs, the
//     claim under way and the give-back keep Stop (with a context that
//     does not end) up to LeaseDuration and a tenth of it. A claim that
//     cannot be given back
//     (the store fails, or does not answer in that time) stays leased
//     until its lease expires; nothing runs it meanwhile. The log says so
//     (a warning naming the job) and the Observer sees the failed GiveBack
//     call ([StoreCall].Errs), which package telemetry counts in
//     jobclock.store.operation.errors.
//   - Other instances see a held job as leased (its lease covers the hold:
//     ClaimAhead is at most a tenth of LeaseDuration). A claim ahead takes
//     over a lease only once it has expired, as a claim of a due job does,
//     so instances with different LeaseDuration and ClaimAhead can share a
//     store. A held claim that took over a lease and is given back (a
//     write, a notification, Stop) puts that expired lease back: the next
//     claim takes it over again and reports the takeover
//     ([Observer.TookOver]) when the job starts.
//
// Occurrences missed while no Scheduler was running (or while the job's
// collection was not Enabled) are handled by the job's run policy, by
// default Config.Misfire: each job runs once as soon as the scheduler is
// back, and then continues on its schedule; the others are on record as
// Skipped.
//
// # Stores
//
// A [Store] keeps collections, jobs, their scheduling state and their
// history. The Scheduler is the only writer of the scheduling state; the
// store's job is to keep records, enforce the few atomic rules listed on
// each method (versions, leases, the job-count quota) and index jobs by the
// time they are next due so that [Store.ClaimDue] is cheap. Several
// Scheduler processes may share one store: due work is claimed under a
// lease, and the outcome is recorded only by the lease holder.
//
// A store never reads a clock: every instant comes from the caller. Stores
// return times in UTC. Records passed in and returned are copies: a store
// must not keep or modify the caller's structs, except that [Job]
// definitions are treated as immutable: [Store.ClaimDue] may hand out the
// definition the store holds, which neither the store nor the Scheduler
// modifies (a put replaces it), and [Store.Record] given it back may keep
// it. A claim may also set [JobRecord.Handle], which the Scheduler passes
// back to Record, so that the store finds the job without looking it up
// again (store/memory does).
//
// [Store.ListJobs] lists a collection's jobs a page at a time in the
// order [JobFilter.OrderBy] asks for: by name, or by next execution time,
// last execution time or failure count ([JobOrder]), ties by name, jobs
// without a time after those with one, and with [JobFilter.Descending]
// the exact reverse ([ListJobsOptions.OrderBy] over the Scheduler). By
// name a page reads one page of the primary key at ten jobs or a million;
// in the other orders every store sorts the collection's jobs at each call
// (the SQL stores in the database, from the value read from the stored
// status; no index holds those values, which would cost every write of a
// job's status, one per occurrence, an entry each), so such a page costs
// in proportion to the collection: a few milliseconds at 10,000 jobs
// (BENCHMARKS.md, "Dashboard pages"). A store of your own must order too:
// storetest.Run checks the orders, ties, jobs without a time and pages
// that follow one another. By next execution time in a collection with
// exclusion calendars, [Scheduler.ListJobs] does not use the store's
// order: a job that names a calendar shows its next run where the
// calendar places it now, which may differ from the instant its record
// planned (an instance planned it under an older version of the
// calendar), so each page reads all the collection's jobs and sorts them
// by the next execution times the list shows.
//
// A delete may carry a condition, checked in the store's write that
// deletes: [Store.DeleteJob] and [Store.DeleteCollection] given an ETag
// delete only the record that holds it, and otherwise fail with
// ErrPreconditionFailed, deleting nothing (ErrNotFound when there is no
// such record), so that a record written since its ETag was read is
// never deleted in its place. The SQL stores make the ETag part of the
// DELETE statement's condition. [Scheduler.DeleteJob], DeleteJobTx and
// DeleteCollection with IfMatch delete so, and the Scheduler undoes a
// put of a job that its collection no longer allows (see "Job
// collections") by such a delete of the job the put created.
// storetest.Run checks the condition, also with puts of the job racing
// the deletes, in the store and through a Scheduler.
//
// A collection or job that does not exist is an error that matches
// [ErrNotFound]. The stores of this module return a [*NotFoundError], whose
// text names what is missing once (`put job "x": job collection "nope" not
// found`) and whose fields errors.As reads; a store of your own need only
// match ErrNotFound.
//
// A job deleted and created again under its name is another job: the
// outcome of a claim of the first one must not land on it. Record and
// [AheadClaimer.GiveBack] tell the two apart by [JobRecord.Incarnation],
// which the store draws when it creates a job (a counter, or a random
// 64-bit value), sets in the record of the create (so the answer of
// [Scheduler.PutJob] and its kin holds it) and a replace keeps, and by
// [JobRecord.Created], which a store hands back exactly as it was
// written (to the nanosecond) and which a replace keeps too; they
// answer ErrNotFound when either differs (the stores of this module a
// [*RecreatedError], made by [NewRecreatedErrorOf], which a store of
// your own may use too), and the Scheduler drops the outcome (logged
// at Info); the attempt's lease, which the new job never held, is no
// longer extended once an extension finds the name held by another job
// (logged at Debug, as for a job deleted). So two jobs of one name created at the same instant (a clock that has not moved, as inside a
// testing/synctest bubble, or a coarse one) are told apart by their
// incarnations. A store must draw one: a store that keeps no Incarnation
// (one written before the field, handing back zero) fails
// storetest.Run, and cannot tell a job created again at its
// predecessor's instant from it, so the outcome of the deleted job's
// attempt is recorded onto the new one. Only the jobs that the SQL stores
// hold from before their schemas had incarnations have zero, and are
// told apart by Created alone.
//
// Optional capabilities are found by type assertion: a
// [BatchRecorder] records many outcomes in one call (answering nil when
// all of them were recorded, so that a batch that succeeds costs no slice
// of errors, and keeping the stored definition of an element whose
// [RecordRequest.KeepDefinition] says the Scheduler left it as claimed,
// so that the SQL stores neither encode nor send nor write it), a
// [LeaseExtender] extends the leases of many jobs in one call (one
// statement on SQLite and PostgreSQL), and a [BulkPutter]
// puts many jobs in one step (the memory, SQLite and PostgreSQL stores
// have all three), a [PutReader] reads a job and its collection in one step
// for a put (the SQLite and PostgreSQL stores, and their TxStores: one
// statement instead of two), a [JobCreator] creates a job over the record
// of its collection that the Scheduler read for an earlier put, checking
// in the same step that the record is still the stored one, so that a put
// of a new job reads nothing first (the SQLite and PostgreSQL stores, and
// their TxStores: one statement instead of two; when the job
// exists or the collection was written since, the put reads and puts
// again, so a replace pays one insert that writes nothing first), a [Notifier] wakes the Schedulers of
// other processes when a job is written (PostgreSQL, with LISTEN/NOTIFY;
// otherwise other processes see new work within Config.PollInterval), and
// a [StatsReader] answers aggregate reads in one store call (the memory,
// SQLite and PostgreSQL stores have it), and a [Limiter] keeps the
// permits of collections' limits (the three stores of this module; see
// "Limits toward a target"), and an [AheadClaimer] claims jobs ahead of
// their due instants and gives such claims back (the three stores of this
// module; see "Claiming ahead"). A store that is [Ephemeral]
// (the memory store) may be given secrets unsealed; see "Secrets".
//
// Dashboards and metrics read aggregates through the Scheduler:
// [Scheduler.JobCounts] (jobs per collection and state),
// [Scheduler.DueCount] (the backlog: jobs due now and not started),
// [Scheduler.HistoryCounts] (history entries per bucket of time, action
// name and status, at most MaxHistoryBuckets buckets, with how many are
// retries and how many faulted their occurrence) and
// [Scheduler.RecentHistory] (the newest entries of all jobs, a page of at
// most 100 at a time, optionally of one status, and only the entries that
// faulted their occurrence (ListHistoryOptions.Faulted) or only those that
// did not (NotFaulted)). Both, like ListHistory, can be limited to some collections, so that a
// view for one tenant counts only its own. With a StatsReader store
// each is one store call: the memory store keeps its job counts up to date
// on every write, and the SQL stores answer from their indexes. With
// another store the Scheduler computes the same answers from the listings,
// which reads every job (and, for history, every job's history), so keep
// such calls rare.
// The execution tag of an occurrence is derived from the job's names,
// incarnation, creation time and occurrence number, so an instance that
// takes an occurrence over after another died mid-attempt sends the same
// tag, and a job created again under a name, even at the same instant,
// does not send its predecessor's tags. Versions of this module before
// incarnations derive it from the creation time alone: while a fleet
// sharing a store runs both versions (a rolling upgrade), an occurrence
// taken over by an instance of the other version keeps its tag (and the
// retry points derived from it) only when its job has incarnation zero
// (created before the upgrade, or by an instance of the older version);
// for the jobs that instances of the new version create, duplicate
// detection by tag holds across the fleet only once all instances run
// the new version.
//
// # Secrets
//
// The secrets of a definition (an authentication's password, pfx and
// OAuth secret, a storage queue message's sasToken, a Service Bus
// message's sasKey, in the action and the error action) are stored sealed.
// The Scheduler seals them with the primary key of Config.Secrets (a
// [secrets.Keyring]) when a job is put (PutJob, PatchJob, Schedule and the
// Tx variants), so every store, a host's own included, receives only
// sealed values, and opens them for the executor of each attempt. Sealing
// is AES-256-GCM; a sealed value ("sealed:v1:KEYID:...") names the key
// that sealed it and opens only for the job, the field and the
// destination it was sealed for, so a sealed value copied into another
// job is refused at its path. The destination is where the action that
// holds the secret sends it: the scheme, host and port of an HTTP
// request's uri (for an ActiveDirectoryOAuth secret, which goes to the
// token endpoint, also its authority and tenant), a storage queue's
// account, a Service Bus message's namespace (in the action and the error
// action alike; case does not matter), and for a secret of an HTTP
// request's authentication also that authentication's type (Basic,
// ClientCertificate or ActiveDirectoryOAuth), so that a certificate's
// password kept by a write that makes it a Basic password, which the
// server would read, is refused as a moved one is. The management API never returns secrets (it describes a
// client certificate by its thumbprint, subject and expiry, which the
// Scheduler reads when the job is put); the [JobRecord] of GetJob and
// ListJobs holds them sealed, and putting such a definition back (for
// the same job) keeps them, as a PatchJob that leaves them out does. A
// secret so kept is sent only where it was: a put (PutJob, PutJobs,
// Schedule) or patch that changes
// the destination of its action, or the type of its authentication, and
// keeps it sealed is refused at its
// path ("action.request.authentication.password: is kept from the job's
// definition, and the destination of its action changed from
// https://api.example.com:443 to https://other.example.net:443: ... give
// the secret again to send it there"), so that who may write a job but
// not read its secrets cannot have them sent to a server of their own.
// A write judges the secrets it keeps against the version of the job it
// replaces, the one its IfMatch checks: when another write changes the
// job in between, it is judged again. Giving the secret in the same write (in clear) moves it; a change of
// the path, query, method or queue name keeps it. Headers, bodies and
// messages are not secrets: credentials go in the authentication objects.
// A host's custom action types seal their own.
//
// Without Config.Secrets a definition with a secret is refused with a
// [*ValidationError] at each secret's path
// ("action.request.authentication.password: is a secret, and the
// scheduler has no key to seal it with ..."), unless the store is
// [Ephemeral]: store/memory keeps nothing beyond the process, so there the
// secrets are kept as given. Such a secret, or one stored in clear before
// the store had a key, is bound to its destination all the same: a
// PatchJob that leaves it out keeps it, and is refused at its path when it
// changes the destination or the type of the authentication, as for a
// sealed one; a put gives the secrets it holds (the management API returns
// none to put back). With a key, the memory store gets sealed values too.
//
// Keys rotate: a keyring holds several keys, the first of which seals
// and all of which open. Give every Scheduler the new key after the old
// one, then first, call [Scheduler.ResealSecrets] (or jobclock reseal) to
// rewrite every job not sealed with the new key (secrets stored in clear
// before sealing existed included, and secrets sealed before a sealed
// value named its destination or the type of its authentication: until
// then those open for their attempts, and for a write that keeps both),
// one atomic write per job keeping its ETag and
// schedule, then drop the old key. An attempt whose secret does
// not open (its key is not in the keyring) fails with a history entry
// naming the field and the key; [SealedKeys] lists the keys a store's
// secrets are sealed with (reading every job: a check at start), so that
// a host can refuse a keyring that lacks one. jobclock run and serve keep
// their key in the file DB.key next to a SQLite database, created (mode
// 0600) on first use, for a database that holds no sealed secret, or take
// it from -key-file or JOBCLOCK_SECRETS_KEY (PostgreSQL); run, serve and
// reseal refuse a database whose secrets are sealed with
// a key they lack, naming it, and reseal never creates a key.
//
// # Several instances
//
// Schedulers in several processes may share one store (PostgreSQL, or
// any store whose ClaimDue is atomic across processes); each needs its own
// Config.InstanceID. Each due job is claimed by one instance under a lease
// of Config.LeaseDuration (10s by default). While the job's attempt runs,
// its instance extends the lease every third of LeaseDuration (with
// [Store.ExtendLease], or many leases in one call with
// [LeaseExtender.ExtendLeases] when the store has it), and the lease ends
// when the outcome is recorded.
//
// When an instance dies (killed, its machine lost, or cut off from the
// store), its leases are no longer extended: at most LeaseDuration after
// its last extension they expire, and another instance claims the jobs
// as soon as they do, since the others' loops wake at the earliest lease
// expiry ([Store.NextDue]). With the defaults a dead instance's work is
// taken over within about 10 seconds, plus the time of one claim (and,
// when the store was away from the others too while the leases expired,
// the grace after an outage, 5 seconds with the defaults: see below); an
// attempt of an occurrence that runs beside others (overlap AllowAll) is
// the exception, as its claim lasts at first the attempt's timeout plus
// LeaseDuration (about 70 seconds with the defaults) and is taken over
// when that expires. An occurrence whose attempt was in flight then runs
// again with the same execution tag (the header
// x-ms-scheduler-execution-tag), so that the receiver can recognise the
// repeat (the attempt lost leaves no history entry: see "History"); every other occurrence runs exactly once, and
// none is lost. The next occurrences of those jobs are not merged away
// by the takeover unless it makes them late by more than the recurrence
// interval (from the occurrence taken over to the next): those less late
// run after it, as the overlap policy says, while those later are missed
// as the missed policy says (under runPolicy.overlap CancelRunning, where
// one due would cancel the occurrence taken over before it ran, every one
// due is missed: RunOnce runs that occurrence once for all of them). The same holds when the instance that claims
// such a job again is the one whose lease expired (a process restarted
// under its InstanceID, or one whose store stalled for longer than its
// lease): which instance wins the claim does not change what runs.
//
// The bound has a price: a running attempt costs one ExtendLease every
// LeaseDuration/3 (a share of one ExtendLeases call, over a store that has
// it), and an instance that cannot reach the store for two
// thirds of LeaseDuration, or whose clock runs ahead of the others' by that much, may see an
// attempt it is still running taken over. Raise LeaseDuration (jobclock
// serve -lease, jobclock run -lease) when the store may stall for seconds
// or the clocks are loosely kept. The
// heartbeats share the store's connections with claims and records, which
// store/postgres keeps in a pool of their own, apart from the API's
// (postgres.Options.EngineConns, 2 by default): raise it in proportion to
// Config.MaxConcurrency when many attempts run at once.
//
// When the store stops answering (a database restarting, a network cut),
// the Scheduler keeps running: the loop asks for due work again every
// second, and logs once that the store does not answer and once that it
// answers again, with how long it was away from the first failed call
// ([Scheduler.Ready] meanwhile reports the store's error). The loop's
// calls count, and so do the writes of outcomes and of the extensions of
// leases, of the claims on attempts that run beside others (AllowAll) and
// of the permits of a collection's limits, and the takes and give-backs of
// those permits (each failed call in between is logged at Debug, not
// warned of one by one): while writes fail and reads succeed (a disk full), the outage lasts
// until a write succeeds (a write the store refuses without writing, a
// job not found, a conflict or a lease lost, does not end it), or until a
// call of the loop answers a LeaseDuration after the last write failed.
// An attempt that ends meanwhile keeps its
// lease (the heartbeat goes on trying) and its outcome is recorded again,
// after waits of up to 2s and at once when the loop finds the store back,
// so that the occurrence does not run again; a store reconnects by
// itself (store/postgres does). Occurrences that came due meanwhile run
// when the store is back, late but not lost (Config.Misfire decides what
// happens to those more than one interval late).
//
// An outage longer than two thirds of LeaseDuration lets the leases of
// the attempts in flight expire, the instances' heartbeats failing as
// everything else. So that the first instance to find the store back does
// not take those jobs over, and run their occurrences again with the same
// execution tag, before their owners (who lost the store as long) record
// the outcomes or extend the leases, an instance that lost the store
// (its loop's calls failed, or, while its loop made none with every
// worker busy, its heartbeat's or its outcomes' writes did) takes over no
// lease that expired since its loop's last call that succeeded before the
// outage, until a grace after its loop's first claim that succeeds:
// half of LeaseDuration, and at least 4s (5s with the defaults); nor a
// claim on an attempt that runs beside others (overlap AllowAll, see
// [Run]) that expired as long: a job it claims meanwhile for such a claim
// is written due again at the grace's end (the claims of the job's other
// runs, and its other occurrences, go on as ever). Within
// it the owners record what ended (they try again at most 2s apart) and
// extend the leases of what still runs (their heartbeat tries again
// within a third of LeaseDuration); jobs that no lease holds, or whose
// leases expired before the outage, are claimed at once as ever. A job
// whose owner is gone for good is taken over a grace later than it would
// be without the outage. Over a store that is no [AheadClaimer] (a
// user's that predates it), whose ClaimDue has one clock for due times
// and leases, the jobs that came due since the instance lost the store
// wait for the grace too, and only the loop's own failed calls start one. Two other designs were weighed: comparing leases
// with the store's clock rather than the claimer's (store/postgres, as
// every store, compares a lease's end with the instant the claiming
// instance passes, its own clock) would not help, as the leases did
// expire by any clock, and would change the Store contract; and an owner
// that extends its leases before it records does not help either, as the
// claimer may find the store back first. Only an instance that lost the
// store holds off: one that kept it (the owner alone was cut off) takes
// the jobs over as soon as the leases expire, as it would a dead
// instance's. An owner whose store comes back more than the grace after
// another instance's still loses its jobs, and their occurrences run
// again with the same execution tag. Only the store's failures count as an outage (any error
// but ErrNotFound, ErrConflict, ErrLeaseLost, ErrQuotaExceeded and the
// Scheduler's other sentinels, context.Canceled, a [*ValidationError] or
// a JSON error of a record that does not encode or decode): a call of the
// loop that fails otherwise (a row that does not decode) is logged as an
// error once while it repeats, and an outcome the store refuses so is
// logged as not recorded rather than recorded again.
//
// A SQLite file that cannot grow (its disk is full, or it reached its
// max_page_count) is handled the same way: writes fail, changing nothing,
// with an error that wraps sqlite.ErrFull and says so, the Scheduler keeps
// trying to record what ended meanwhile, and it resumes once there is room.
//
// # Transactions
//
// A job can be written in the host's own database transaction, so that it
// exists exactly when the host's rows do: an order and its follow-up job
// commit together, and a rolled-back order leaves no job.
// [Scheduler.PutJobTx], [Scheduler.PatchJobTx] and [Scheduler.DeleteJobTx]
// take the transaction as their second argument, a pgx.Tx with
// store/postgres or a *sql.Tx with store/sqlite (made with sqlite.New over
// the host's *sql.DB):
//
//	tx, err := pool.Begin(ctx)
//	defer tx.Rollback(ctx)
//	_, err = tx.Exec(ctx, "INSERT INTO orders (id, total) VALUES ($1, $2)", id, total)
//	_, err = s.PutJobTx(ctx, tx, "orders", "follow-up-"+id, &scheduler.Job{
//		StartTime: &due, Action: followUp.Action(FollowUp{Order: id}),
//	}, nil)
//	err = tx.Commit(ctx)
//
// Validation and quota errors come back before the host commits and leave
// the transaction usable. The job counts against its collection's quota
// from the commit: each job holds one of its collection's places (0 to
// maxJobCount-1, no two jobs the same), so two transactions that take the
// last free place at once cannot both commit, while creates that take
// other places do not wait for each other. The Schedulers look for
// due work when the transaction commits: on PostgreSQL through a
// notification sent inside it (delivered only on commit, to every
// instance), on SQLite because the Scheduler's next claim waits for the
// transaction's write lock. SQLite writes one transaction at a time: begin
// the host's write transactions IMMEDIATE (_txlock=immediate in the
// driver's DSN) and keep them short, and set temp_store to memory
// (_pragma=temp_store(2)), without which the puts of a long transaction
// cost more once one of them has journaled more than 64 KiB of pages
// (see store/sqlite's Store.InTx, which logs a warning once when a
// transaction runs without it). A Store with transactions implements
// the optional [Transactional] interface.
//
// A collection can be written in the transaction as well
// ([Scheduler.PutCollectionTx], and its calendars with
// [Scheduler.PutCalendarTx]), so that a collection and its jobs are
// created together or not at all, through a store whose view of the
// transaction is a [CollectionTxStore] (the SQLite and PostgreSQL
// stores'; a Transactional store of one's own need not be one). A
// replace of the collection holds its row until the transaction ends,
// and one that changes its state the rows of its jobs too. Two writes that PutCollection and
// PutCalendar make in steps that other writers must see are refused inside
// a transaction, with an error matching errors.ErrUnsupported: a stricter
// maxRecurrence than the stored one, and a calendar that replaces a
// different one (the same calendar written again is accepted).
//
// # Observing
//
// The Scheduler tells what it does to an [Observer] (Config.Observer):
// each attempt as it starts and ends, the history it stores, occurrences
// passed over, lease takeovers, the run loop's store calls and what
// retention deletes. The REST API tells its requests to an
// httpapi.Observer the same way. Nil (the default) means nothing is
// observed, at the cost of a nil check, and the program links no
// telemetry library. An Observer method that panics is recovered, as a
// panicking executor is, and logged as an error (once for each method,
// with its stack): the attempt goes on as if the method had returned
// nothing (StartAttempt's context is the one it was given), and so does
// the REST API's request (with its own context when StartRequest
// panicked).
//
// Package telemetry (github.com/jobclock/scheduler/telemetry, a module of
// its own) implements both with OpenTelemetry: a host that imports it opts
// in with one value,
//
//	obs := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp}) // nil: the global providers
//	s, err := scheduler.New(store, &scheduler.Config{Observer: obs})
//	api := httpapi.New(s, &httpapi.Options{Observer: obs})
//
// and gets a span per attempt (jobclock.attempt; jobclock.postpone and
// jobclock.misfire for occurrences postponed or passed over), an
// occurrence being one trace that a run requested with RunJob from a
// traced request joins; client and producer spans of the executors, whose
// W3C trace context the HTTP request, the Service Bus message and the
// storage queue envelope carry on; a server span per REST API request;
// counters, histograms and gauges of attempts, lateness, misfires,
// takeovers, store calls and jobs (jobclock.attempts,
// jobclock.attempt.duration, jobclock.jobs, ...); and the trace_id and
// span_id of the attempt's or request's span in the log records written
// about it. Package telemetry's documentation lists every span, attribute
// and metric. The jobclock command opts in always, and serves the metrics
// to Prometheus or exports them and the traces over OTLP.
//
// An occurrence keeps its trace context (Occurrence.Trace) in the store,
// so that its retries and error action join its trace also on another
// instance; the executors pass a stored trace context on (traceparent
// header, message properties, envelope) whether or not anything observes
// the Scheduler. [Scheduler.Ready] answers readiness probes.
//
// # Testing
//
// A user's own Store backend runs the conformance suite:
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) scheduler.Store { return mystore.New(t) })
//	}
//
// The Scheduler reads time only through the standard library, so code that
// embeds it can be tested inside testing/synctest bubbles with fake time,
// as this package's own loop tests are (the SQLite store works inside a
// bubble too). Package schedulertest has what a host's tests need: a
// started Scheduler over the memory store (schedulertest.New), an executor
// and an HTTP receiver that record every attempt with its metadata, and
// waits (WaitRuns, WaitState) and history assertions that fail with a
// go-cmp diff instead of hanging:
//
//	synctest.Test(t, func(t *testing.T) {
//		s := schedulertest.New(t, &scheduler.Config{Executors: reg})
//		s.Schedule(t.Context(), "nightly", recurrence.Daily(2, 0), report.Action(Report{To: "ops"}))
//		s.Timeout = 72 * time.Hour // fake time
//		s.WaitRuns(scheduler.DefaultCollection, "nightly", 3)
//	})
package scheduler
