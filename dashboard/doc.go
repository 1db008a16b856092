// Package dashboard serves a web dashboard over a *scheduler.Scheduler: an
// http.Handler that a host mounts in its own mux under any prefix, and that
// jobclock serve mounts at /ui/.
//
//	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Authenticator: auth}))
//
// # Pages
//
// The overview lists the collections with their plan, state, quota and
// usage, the jobs by state, a chart of occurrences and failed attempts
// over the last hour and the last day, and the latest faulted
// occurrences; without collections, it says how to create one. "Faulted
// jobs" count jobs in the state Faulted, "faulted occurrences" the
// occurrences whose last attempt failed. A collection's page gives its
// path in the REST API, or says why that API does not serve it (a
// collection made from Go, such as Schedule's default, whose name has no
// subscription and resource group), says its limits in words, and lists its
// jobs, filtered by state and
// a page at a time, each with its action (type and target, never a
// secret), its schedule in words, its next run in UTC and in the job's
// zone (none while the collection is not Enabled, since none of its jobs
// runs then; its health is the Scheduler's), its last run and how it
// went, and its counters; a job whose attempt is in progress is marked
// "running", with the instance that runs it (from the job's lease:
// JobRecord.LeaseOwner and LeaseUntil, of a job that is due), and one
// whose next attempt has not started is marked with what it waits for:
// "waiting for a limit" while its occurrence waits for a permit of the
// collection's limits (Occurrence.Limited; its last run says so too,
// never "running"), "waiting for a worker" while it is due, unclaimed,
// and every worker of the dashboard's Scheduler is busy (Scheduler.InFlight
// at Config.MaxConcurrency). A job's page
// shows its schedule in words, what it does when it fails in words (its
// attempts' timeout, its retry policy with maxRetryDuration and
// permanentStatusCodes, the Retry-After cap, and its errorAction, saying
// when that carries the failure document), what its own run policy does
// (missed, catchUpWindow, overlap, pauseAfterFaults), each duration in
// words with its ISO 8601 text as the title, which of its collection's
// limits apply to it and toward which target, its next 20 occurrences in UTC and in its
// zone (marking those a daylight saving change moved or, for a schedule
// that keeps its cadence, ran a second time in a repeated hour; for a
// recurrence with a window, the planned instants, each next to the
// scheduled instant it is spread from; under the exclusion calendar the
// job names, the ones it moved with the instant they were moved from and
// the ones it skips or merges into a neighbouring occurrence on rows of
// their own, struck through, each naming the calendar, those before the
// next run among them; a page reads at most 1,000 of those and lists at
// most 10 rows of them before an occurrence, the last saying that more
// before the next occurrence are not listed when it cuts the list, so that a calendar
// that excludes weeks of a minutely job costs no more to show; when the job's record still has its next
// occurrence as planned under an earlier version of the calendar, the
// page lists it where the engine will run it, saying where it was
// planned), its
// history with a
// status filter and the whole message of each attempt (a long one folded
// under its first line), the attempts of occurrences a backfill asked for
// marked "backfilled" and those of a run now marked "run now", its definition as
// JSON with secrets hidden (passwords, certificates, keys, SAS tokens,
// and the values of request headers and URI query parameters whose names
// suggest credentials, such as Authorization, X-Api-Key, Cookie, sig or
// code; other headers show as stored), a chart of the outcomes and durations of the
// attempts of its history page (from the entries the page shows, so no
// further store call; the errorAction's attempts apart from the job's
// own), why it is paused and until when, and the actions
// run now, enable, disable, pause (with a reason and a resume time, read
// in the job's zone unless it has an offset, and shown in UTC and in that
// zone),
// resume, backfill a range (its occurrences listed first, run after a
// second click), retry a faulted occurrence from its history row (a
// backfill of its expected time with Only All, or, for a run now's,
// another run now), edit and delete (after a confirmation page; the
// deletion is DeleteJob with IfMatch the ETag of the job as its page
// showed it, so that a job written since is not deleted: its page shows
// it as it is then, saying so). "Try a
// definition" checks a pasted job definition as jobclock validate and
// jobclock next do: every problem at its JSON path, or the schedule in
// words and the next occurrences (for a window or H in a cron spec, as for
// a job without collection or name: its own page lists the job's own
// instants).
//
// An instant shows its seconds when they are not 0; in a column of a
// table (a collection's next and last runs, a job's occurrences, its
// history, a backfill's occurrences), every instant shows them when one
// does: "11:25:00 UTC" above "11:25:10 UTC", so that an instant on a
// whole minute does not read as one of minute precision.
//
// # Operating
//
// The job editor has a form for the common cases (an HTTP request, the
// recurrence's frequency, interval, hours, minutes and week days, the
// start time, the retry policy's type, interval and count) beside the
// JSON definition; the form writes its members into the definition and
// keeps every other one (a retry policy's maxRetryDuration, say), except
// those a retry type chosen in the form does not take: a policy switched
// from Exponential drops its minimumInterval and maximumInterval, one
// switched to None its retryInterval and retryCount. Its
// lists show the definition's value even where they would not offer it
// (a method, frequency or retry type), and offer the frequency Second
// where the collection's quota allows recurrences of seconds; a
// recurrence written as a cron expression, and JSON that does not parse,
// are edited as JSON only, so that saving the form never drops a
// recurrence or a member it does not show. As
// the user types, the page posts the draft to the dashboard's draft
// endpoint (POST Prefix+"/draft", which changes nothing), which answers
// JSON: the problems at their JSON paths, or the schedule in words and
// the next 5 occurrences (for a job naming an exclusion calendar, under
// its collection's calendar: a skipped one left out, a moved one at the
// instant it runs; a calendar the collection does not have is a problem
// at recurrence.calendar). The try page, which has no collection, lists
// them without the calendar and says so. Secrets show hidden, and a hidden value saved
// unchanged keeps the stored secret; a save carries the ETag of the
// version opened, so it does not overwrite a newer one. The collection
// editor sets location, plan, state and quota, and keeps the tags and run
// policy it does not show. A collection's page enables, disables,
// suspends and deletes it (after a confirmation page that names the jobs
// the deletion removes, the first 1,000 by name and how many more). The
// confirmed deletion deletes only the jobs the confirmation showed: its
// form carries a digest of every job's identity (name, Incarnation and
// Created), and when the collection's jobs differ from it at the deletion
// (a job put, deleted, or created again since), nothing is deleted and
// the confirmation shows the jobs as they are then, saying so.
// DeleteCollection takes no condition on the collection's jobs (the
// collection's ETag does not change when a job is put in it), so this is
// a check made just before the deletion: a job put in that instant is
// deleted with the collection. The deletion takes the collection's ETag
// as the confirmation read it (DeleteCollectionOptions.IfMatch): a
// collection written since (replaced, its state changed, or deleted and
// created again) is not deleted, and the confirmation shows it again,
// saying so.
//
// Every change goes through the Scheduler methods the REST API calls, with
// the JSON it takes, so that it is checked and stored the same and a
// refused change shows REST's messages at REST's paths: PutJobJSON,
// ParseCollection and PutCollection for the editors; PatchJob with
// {"properties": {"state": "Disabled", "stateReason", "resumeTime"}} to
// pause, EnableJob to resume (it forgets the reason and resume time);
// EnableCollection, DisableCollection, and PatchCollection with
// {"properties": {"state": "Suspended"}} to suspend; DeleteCollection;
// BackfillJob, with DryRun for the list shown first, and for a retry.
//
// The search lists the jobs of every collection the viewer sees whose
// names contain a text (in any case), by state, health and tag, a page at
// a time; the tag is a name (tag=team: the jobs that have the tag) or
// name=value (tag=team=ops), and rows and job pages show each job's tags.
// It reads the collections' jobs in name order, ListJobs pages of 100
// with the state and the tag filtered by the store
// ([scheduler.ListJobsOptions] State and Tag), until it has the page asked
// for and one more match: the first pages cost a few reads, and a search
// that matches little reads every job once (100 reads of 100 jobs at
// 10,000 jobs).
//
// Filters, sort orders and pages are in the query string, so links can be
// bookmarked and shared. Sorted by any column, a collection's pages
// follow one order across all its jobs (of the state filtered by). By
// name, next run, last run or failures (either way) a page is one store
// read in that order ([scheduler.ListJobsOptions] OrderBy and
// Descending): by name one page of the store's key whatever the
// collection's size, by the others a sort of the collection's jobs in
// the store, whose cost grows with the collection; ties are in name order, jobs without a
// next or last run come last, and descending is the exact reverse (ties
// by name descending, jobs without a time first). A collection that is
// not Enabled shows no next run: sorted by it, its jobs are in name
// order. Sorted by next run, the rows are in the order of the next runs
// they show: a job that names an exclusion calendar shows its next run
// where the calendar now places it, which may differ from the instant
// its record planned and the store orders by (an instance planned it
// under an older version of the calendar), so in a collection with
// calendars [scheduler.Scheduler.ListJobs] reads all the collection's
// jobs (of the state filtered by) for each such page and sorts them by
// what they show, as it does for the API's $orderby: at 10,000 jobs on
// the memory store, a median of 82 ms a page rather than 13 (3 pairs);
// without calendars, one store read as above. By state a page is one read for each state on the page (the job
// counts say where each begins), ties by name. No page makes a store
// call per row:
// counts come from [scheduler.Scheduler.JobCounts],
// [scheduler.Scheduler.HistoryCounts] and
// [scheduler.Scheduler.RecentHistory].
//
// # Browsers
//
// Pages are rendered on the server with html/template, which escapes
// everything users wrote (names, URIs, headers, messages). The pages that
// show things work with JavaScript off; the dashboard's own small script
// (static/dashboard.js, no build step) refreshes the parts of a page that
// change every Options.Refresh and sends the action forms without a full
// reload. When a refresh or an action finds the session ended (sent to
// the sign-in page, or 401) or the page's job or collection gone (404),
// the page says so, links to the sign-in page or the overview, stops
// refreshing and takes its forms away, instead of showing on what was. A Content-Security-Policy allows only the dashboard's own script
// and styles, nothing inline. Light and dark follow the browser's
// prefers-color-scheme, and the layout fits a phone.
//
// # Security
//
// With Options.Authenticator set (the REST API's token authenticator), a
// user signs in with an API token and sees only the collections of the
// subscriptions that token reaches: collections named
// "subscription/resourceGroup/name", as the REST API names them (a token
// for every subscription sees every collection). The session is a signed
// cookie (HMAC-SHA256 with Options.SessionKey) that expires after
// Options.SessionTTL, HttpOnly, SameSite=Strict, and Secure over TLS. It
// holds the token signed in with, sealed (AES-256-GCM under a key derived
// from Options.SessionKey, so keep that key as secret as the tokens), and
// each request of the session authenticates that token again through the
// Authenticator: a session ends as soon as its token no longer
// authenticates (removed from the token list, serve started again with
// another one), and the subscriptions it sees are the ones the token
// reaches now. Its pages then send to the sign-in page, which says that
// the session ended. Only a refusal ends it (an error of the
// Authenticator that wraps [httpapi.ErrUnauthenticated], as
// [httpapi.TokenAuth]'s do): when the Authenticator fails otherwise,
// the request is answered 503 Service Unavailable and the session goes
// on. Signing out ends the session in the process that served
// the sign-out: a copy of its cookie is no session there any more. That
// process keeps the sessions signed out in memory, until they would have
// expired, the last 100,000 of them: beyond that the oldest sign-out is
// forgotten, and a copy of its cookie is a session again (while its
// token authenticates) rather than refusing sign-outs or sign-ins;
// another process with the same session key, or the same one
// started again, does not know of them, so there a copy of a signed-out
// session's cookie goes on until it expires or its token is removed. To
// end every session at once, change the session key.
// Without an Authenticator (nil, or the nil *httpapi.TokenAuth that
// httpapi.LoadTokenAuth returns when no tokens are configured) the
// dashboard is open to whoever can connect, as the REST API is; serve it
// on a loopback address only.
//
// Failed sign-ins are budgeted (Options.SignInLimit): by default each
// client address (an IPv6 client's /64 network) may fail 10 times and all
// addresses together 100 times per 15 minutes, refilled evenly. Beyond
// that the sign-in form answers 429 Too Many Requests with Retry-After
// without checking the token, so a token cannot be guessed through the
// sign-in form at the speed of a client; a valid token signs in again once
// the budget refills, and a successful sign-in takes nothing of the
// budget, nor does one with an empty token. The dashboard's pages link its
// own icon, so that browsers do not ask the server's /favicon.ico. The REST API accepts the same tokens: give the dashboard the
// API's budget (Options.AuthFailures, the [httpapi.AuthFailures] of
// httpapi.Options.AuthFailures), as jobclock serve does, so that a guess
// at either counts at both. Failures of all addresses together (100 per
// 15 minutes) bound guessing from many addresses: beyond them sign-ins
// wait their turn and are checked one at a time as the budget refills, up
// to 20s, then 429, valid tokens too while guesses keep the line full; an
// address that signed in during the last day does not wait until the
// failures of such addresses use up a budget of 100 of their own (see
// [httpapi.AuthFailureLimit]).
//
// Every change is a POST carrying a token derived from the session, and
// cross-origin POSTs are refused (http.CrossOriginProtection), so another
// site cannot make a browser run or delete a job. A user changes only the
// collections and jobs their token may see; a read-only principal (a
// token marked "read-only" in the token list, which the REST API lets
// only read too, or one that Options.ReadOnly marks) sees no button or
// form that changes anything, and its changes are refused with 403 (it
// may still sign out, try a definition and check a draft).
package dashboard
