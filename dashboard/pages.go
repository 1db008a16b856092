package dashboard

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// Page sizes.
const (
	defaultJobsPage    = 50
	historyPage        = 50
	faultedOnOverview  = 10
	upcomingOnJobPage  = 20
	maxTryOccurrences  = 100
	defaultTryOccurrrs = 20
)

var jobStates = []scheduler.JobState{scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}

// --- Overview ---

type overviewPage struct {
	States      []stateCount
	TotalJobs   int
	Backlog     int
	ShowBacklog bool
	Charts      []chart
	Collections []collectionRow
	Columns     []sortLink
	Faulted     []historyRow
	NoneVisible bool
	// SeesAll says the viewer sees every collection; ExampleSub is the
	// subscription the hint to create a collection names.
	SeesAll    bool
	ExampleSub string
}

type stateCount struct {
	State string
	Jobs  int
	// URL is the search for the jobs of the state.
	URL string
}

type collectionRow struct {
	Name, URL     string
	Plan, State   string
	Jobs, Max     int
	Usage         int // percent of the quota used
	MaxRecurrence string
	Enabled       int
	Disabled      int
	Completed     int
	Faulted       int
}

var collectionColumns = []sortKey{{"name", "Collection"}, {"plan", "Plan"}, {"state", "State"}, {"jobs", "Jobs / quota"}, {"faulted", "Faulted jobs"}}

func (h *handler) overview(r *http.Request, v *viewer) (string, any, error) {
	ctx := r.Context()
	colls, only, err := h.visibleCollections(ctx, v)
	if err != nil {
		return "", nil, err
	}
	counts, err := h.s.JobCounts(ctx)
	if err != nil {
		return "", nil, err
	}
	byColl := map[string]map[scheduler.JobState]int{}
	for _, c := range counts {
		if byColl[c.Collection] == nil {
			byColl[c.Collection] = map[scheduler.JobState]int{}
		}
		byColl[c.Collection][c.State] += c.Jobs
	}
	p := &overviewPage{NoneVisible: len(colls) == 0, SeesAll: v.seesAll(), ExampleSub: "{subscriptionId}"}
	if pr := v.principal; pr != nil && len(pr.Subscriptions) > 0 {
		p.ExampleSub = pr.Subscriptions[0]
	}
	total := map[scheduler.JobState]int{}
	for _, c := range colls {
		n := byColl[c.Name]
		row := collectionRow{
			Name: c.Name, URL: h.collectionURL(c.Name, nil),
			Plan: string(c.Definition.Plan()), State: string(c.Definition.State()),
			Max: c.Definition.MaxJobCount(), MaxRecurrence: atMost(c.Definition.MaxRecurrence()),
			Enabled: n[scheduler.JobEnabled], Disabled: n[scheduler.JobDisabled], Completed: n[scheduler.JobCompleted], Faulted: n[scheduler.JobFaulted],
		}
		for st, k := range n {
			row.Jobs += k
			total[st] += k
		}
		if row.Max > 0 {
			row.Usage = min(100, row.Jobs*100/row.Max)
		}
		p.Collections = append(p.Collections, row)
	}
	for _, st := range jobStates {
		p.States = append(p.States, stateCount{string(st), total[st], h.url(url.Values{"state": {string(st)}}, "search")})
		p.TotalJobs += total[st]
	}
	q := r.URL.Query()
	key, desc := q.Get("sort"), q.Get("order") == "desc"
	if !validSort(collectionColumns, key) {
		key = "name"
	}
	sortBy(p.Collections, desc, func(a, b *collectionRow) bool {
		switch key {
		case "plan":
			return a.Plan < b.Plan
		case "state":
			return a.State < b.State
		case "jobs":
			return a.Jobs < b.Jobs
		case "faulted":
			return a.Faulted < b.Faulted
		}
		return a.Name < b.Name
	})
	p.Columns = sortLinks(collectionColumns, q, key, desc, func(q url.Values) string { return h.url(q) })

	// The backlog counts every collection's jobs: only for viewers who
	// see them all.
	if v.seesAll() {
		p.ShowBacklog = true
		if p.Backlog, err = h.s.DueCount(ctx); err != nil {
			return "", nil, err
		}
	}
	now := time.Now()
	for _, spec := range []struct {
		title string
		step  time.Duration
		n     int
	}{{"Last hour", time.Minute, 60}, {"Last day", 30 * time.Minute, 48}} {
		end := now.Truncate(spec.step).Add(spec.step)
		from := end.Add(-time.Duration(spec.n) * spec.step)
		hc, err := h.s.HistoryCounts(ctx, from, end, spec.step, &scheduler.HistoryCountsOptions{Collections: only})
		if err != nil {
			return "", nil, err
		}
		p.Charts = append(p.Charts, buildChart(spec.title, from, spec.step, spec.n, hc))
	}
	faulted, err := h.s.RecentHistory(ctx, &scheduler.ListHistoryOptions{Faulted: true, Collections: only, Top: faultedOnOverview})
	if err != nil {
		return "", nil, err
	}
	for _, e := range faulted {
		p.Faulted = append(p.Faulted, h.historyRow(e, nil, true))
	}
	sameClock(p.Faulted, historyEnd, historyExpected)
	return "overview", p, nil
}

// atMost says a collection's maxRecurrence quota: "every minute", "every
// 2 hours".
func atMost(m scheduler.MaxRecurrence) string {
	unit := strings.ToLower(string(m.Frequency))
	if n := max(m.Interval, 1); n > 1 {
		return fmt.Sprintf("every %d %ss", n, unit)
	}
	return "every " + unit
}

func validSort(keys []sortKey, key string) bool {
	for _, k := range keys {
		if k.Key == key {
			return true
		}
	}
	return false
}

// --- Collection ---

type collectionPage struct {
	Name          string
	Plan, State   string
	Location      string
	Tags          []string
	Jobs, Max     int
	MaxRecurrence string
	Limits        []string // the collection's limits in words
	Filters       []filterLink
	Columns       []sortLink
	Rows          []jobRow
	Pager         pager
	PageSizes     []filterLink
	SortedBy      string // the label of the column sorted by, when not the name
	// REST is the collection's path in the REST API; NoREST says why
	// the REST API does not serve it, when it does not.
	REST, NoREST string
	// ActionURL is where its enable, disable and suspend forms post;
	// EditURL and NewJobURL open the editors, DeleteURL the confirmation
	// of its deletion.
	ActionURL, EditURL, NewJobURL, DeleteURL string
}

// restPath returns the path of a collection in the REST API, which serves
// the collections named {subscriptionId}/{resourceGroupName}/{name} with
// the subscription in lower case, or why it is not served.
func restPath(name string) (path, why string) {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) != scheduler.MaxScopeSegments+1:
		return "", "The REST API does not serve this collection: it serves only collections named {subscriptionId}/{resourceGroupName}/{name}, " +
			"and this one, made from Go or by jobclock run (Schedule's collection is named default), has no subscription and resource group in its name. Manage it from Go or here."
	case parts[0] != strings.ToLower(parts[0]):
		return "", "The REST API does not serve this collection: it reads subscription IDs in lower case, and this name, made from Go, has capitals in its subscription. Manage it from Go or here."
	}
	return "/subscriptions/" + parts[0] + "/resourceGroups/" + parts[1] + "/providers/Microsoft.Scheduler/jobCollections/" + parts[2], ""
}

type filterLink struct {
	Label  string
	Count  int
	URL    string
	Active bool
}

type jobRow struct {
	Name, URL string
	State     string
	// Running names the instance whose attempt of the job is in
	// progress now; empty when none is (see running). (A field of its
	// own, not of jobSummary: templates find the fields of an embedded
	// struct by a search that allocates, for each row.)
	Running string
	// Waiting says what the job waits for before its next attempt
	// starts; nil when it waits for nothing the page can tell (see
	// waitingFor).
	Waiting *waitMark
	jobSummary
}

// jobSummary is what the collection's table and the job's page both show
// of a job, from its record alone.
type jobSummary struct {
	Type, Target string
	Schedule     string
	Next         stamp
	LastRun      stamp
	LastStatus   string
	LastClass    string
	Executions   int
	Failures     int
	Faulted      int
	Health       string // OK, Skipped, Stale, Late or Failing
	Paused       string // why and until when a Disabled job is paused, if it says
	Tags         []string
}

// tagList is how a page shows labels (a collection's or a job's tags):
// "name: value" in name order; nil without any.
func tagList(tags map[string]string) []string {
	var l []string
	for k, v := range tags {
		l = append(l, k+": "+v)
	}
	slices.Sort(l)
	return l
}

// summarize returns what the tables and the job's page show of job j, at
// now, in its collection of state coll: while that is not Enabled, no
// occurrence of the job comes due, and its next run is none.
func summarize(j *scheduler.JobRecord, loc *time.Location, now time.Time, coll scheduler.CollectionState) jobSummary {
	s := jobSummary{
		Type: string(j.Job.Action.Type), Target: target(&j.Job.Action),
		Schedule: j.Job.Describe(j.Schedule.Anchor), Next: atPtr(j.Status.NextExecutionTime, loc),
		LastRun: atPtr(j.Status.LastExecutionTime, loc), Executions: j.Status.ExecutionCount,
		Failures: j.Status.FailureCount, Faulted: j.Status.FaultedCount, Health: string(j.Status.Health),
		Tags: tagList(j.Tags),
	}
	if coll != scheduler.CollectionEnabled && !j.State.Final() {
		// None of its occurrences comes due: its record's next run is
		// not one.
		s.Next = stamp{None: "none while its collection is " + string(coll)}
	}
	if d := j.Definition(); d.StateReason != "" || d.ResumeTime != nil {
		s.Paused = "Paused"
		if d.StateReason != "" {
			s.Paused += ": " + d.StateReason
		}
		if d.ResumeTime != nil {
			s.Paused += " (until " + atPtr(d.ResumeTime, loc).Words() + ")"
		}
	}
	return s
}

var jobColumns = []sortKey{{"name", "Job"}, {"state", "State"}, {"next", "Next run"}, {"last", "Last run"}, {"failures", "Failures"}}

func (h *handler) collection(r *http.Request, v *viewer) (string, any, error) {
	ctx := r.Context()
	name := r.PathValue("collection")
	if !v.sees(name) {
		return "", nil, notFound("The collection")
	}
	col, err := h.s.GetCollection(ctx, name)
	if err != nil {
		return "", nil, notFoundAs(err, "The collection")
	}
	q := r.URL.Query()
	state, err := parseState(q.Get("state"))
	if err != nil {
		return "", nil, err
	}
	top, skip, err := parsePage(q)
	if err != nil {
		return "", nil, err
	}
	counts, err := h.s.JobCounts(ctx)
	if err != nil {
		return "", nil, err
	}
	n := map[scheduler.JobState]int{}
	all := 0
	for _, c := range counts {
		if c.Collection == name {
			n[c.State] += c.Jobs
			all += c.Jobs
		}
	}
	total := all
	if state != "" {
		total = n[state]
	}
	key, desc := q.Get("sort"), q.Get("order") == "desc"
	if !validSort(jobColumns, key) {
		key = "name"
	}
	jobs, err := h.sortedJobs(ctx, jobsQuery{collection: name, state: state, key: key, desc: desc, skip: skip, top: top,
		counts: n})
	if err != nil {
		return "", nil, err
	}
	p := &collectionPage{
		Name: name, Plan: string(col.Definition.Plan()), State: string(col.Definition.State()),
		Location: col.Definition.Location, Jobs: all, Max: col.Definition.MaxJobCount(),
		MaxRecurrence: atMost(col.Definition.MaxRecurrence()),
		Limits:        limitList(col.Definition.Properties.Limits),
	}
	p.REST, p.NoREST = restPath(name)
	p.ActionURL = h.collectionURL(name, nil)
	p.EditURL = h.url(url.Values{"name": {name}}, "edit", "collection")
	p.NewJobURL = h.url(url.Values{"collection": {name}}, "edit", "job")
	p.DeleteURL = h.url(nil, "collections", name, "delete")
	p.Tags = tagList(col.Definition.Tags)
	link := func(q url.Values) string { return h.collectionURL(name, q) }
	base := cloneQuery(q)
	base.Del("flash")
	for _, st := range append([]scheduler.JobState{""}, jobStates...) {
		fq := cloneQuery(base)
		fq.Del("skip")
		label, count := "All", all
		if st == "" {
			fq.Del("state")
		} else {
			fq.Set("state", string(st))
			label, count = string(st), n[st]
		}
		p.Filters = append(p.Filters, filterLink{Label: label, Count: count, URL: link(fq), Active: st == state})
	}
	for _, size := range []int{25, 50, 100} {
		sq := cloneQuery(base)
		sq.Del("skip")
		sq.Set("top", itoa(size))
		p.PageSizes = append(p.PageSizes, filterLink{Label: itoa(size), URL: link(sq), Active: size == top})
	}
	now := time.Now()
	for _, j := range jobs {
		row, err := h.jobRow(ctx, j, now, col.Definition.State())
		if err != nil {
			return "", nil, err
		}
		p.Rows = append(p.Rows, row)
	}
	sameClock(p.Rows, func(r *jobRow) *stamp { return &r.Next }, func(r *jobRow) *stamp { return &r.LastRun })
	for _, c := range jobColumns {
		if c.Key == key && key != "name" {
			p.SortedBy = c.Label
		}
	}
	p.Columns = sortLinks(jobColumns, base, key, desc, link)
	p.Pager = h.pager(base, skip, top, len(jobs), total, true, link)
	return "collection", p, nil
}

// jobsQuery asks sortedJobs for a page of a collection's jobs.
type jobsQuery struct {
	collection string
	state      scheduler.JobState // only the jobs in this state; empty: all
	key        string             // the column sorted by (jobColumns)
	desc       bool
	skip, top  int
	// counts are the collection's jobs by state (Scheduler.JobCounts).
	counts map[scheduler.JobState]int
}

// jobOrders are the orders of the store's list by the columns of the
// collection's table that it serves (all but the state).
var jobOrders = map[string]scheduler.JobOrder{
	"name":     scheduler.JobsByName,
	"next":     scheduler.JobsByNextExecution,
	"last":     scheduler.JobsByLastExecution,
	"failures": scheduler.JobsByFailures,
}

// sortedJobs returns the page of the jobs of q.collection (those in
// q.state, or all) from q.skip on, at most q.top, in the order of the
// column q.key, so that the pages follow one order across all of them.
// By name, next run, last run or failures, the page is one ListJobs call
// in that order (descending: the exact reverse, ties by name descending
// too; jobs without a time last in ascending order), which the store
// sorts (by name from its key, whatever the collection's size). By
// state, the page is a call for each state it holds jobs of (counted by
// q.counts), ties by name.
//
// By next run, ListJobs orders by the next runs the rows show, which the
// store's order need not be (see scheduler.ListJobsOptions.OrderBy): a
// collection that is not Enabled shows none, so its jobs are in name
// order; in one with exclusion calendars, ListJobs reads all its jobs.
func (h *handler) sortedJobs(ctx context.Context, q jobsQuery) ([]*scheduler.JobRecord, error) {
	list := func(opts scheduler.ListJobsOptions) ([]*scheduler.JobRecord, error) {
		return h.s.ListJobs(ctx, q.collection, &opts)
	}
	if order, ok := jobOrders[q.key]; ok || q.state != "" {
		return list(scheduler.ListJobsOptions{State: q.state, OrderBy: order, Descending: q.desc && q.key != "state", Skip: q.skip, Top: q.top})
	}
	states := slices.Clone(jobStates)
	slices.Sort(states)
	if q.desc {
		slices.Reverse(states)
	}
	var out []*scheduler.JobRecord
	at := 0 // the place in the whole list of the first job of st
	for _, st := range states {
		from, to := max(q.skip, at), min(q.skip+q.top, at+q.counts[st])
		if from < to {
			jobs, err := list(scheduler.ListJobsOptions{State: st, Skip: from - at, Top: to - from})
			if err != nil {
				return nil, err
			}
			out = append(out, jobs...)
		}
		at += q.counts[st]
	}
	return out, nil
}

// running reports whether an attempt of job j is in progress at now: an
// instance holds the job's lease (JobRecord.LeaseOwner, until
// LeaseUntil) and the job is due. An instance that claims a job ahead of
// its due instant (Config.ClaimAhead) holds its lease a moment before
// the attempt starts: a job leased but not yet due is not running.
func running(j *scheduler.JobRecord, now time.Time) bool {
	return j.LeaseOwner != "" && j.LeaseUntil.After(now) && !j.Schedule.DueAt.After(now)
}

// waitMark is what a job that no attempt of runs waits for before its
// next attempt starts: Label is the badge, Why its tooltip and the job
// page's sentence.
type waitMark struct {
	Label, Why string
}

// waitingFor returns what job j of a collection of state coll waits for
// at now before its next attempt starts, when no attempt of it runs (see
// running) and the record or the Scheduler tells: a permit of its
// collection's limits (its occurrence in progress is Limited: the engine
// releases the lease while it waits, and asks again when the job is due),
// or a worker (the job is due, no instance holds its lease, and every
// worker of this instance is busy: Scheduler.InFlight at
// Config.MaxConcurrency; the loop claims no job it has no free worker
// for). nil otherwise, and while the job or its collection is not
// Enabled (none of its attempts starts then).
func (h *handler) waitingFor(j *scheduler.JobRecord, now time.Time, coll scheduler.CollectionState) *waitMark {
	if j.State != scheduler.JobEnabled || coll != scheduler.CollectionEnabled {
		return nil
	}
	if c := j.Schedule.Current; c != nil && c.Limited != nil {
		why := "Waiting since " + clock(c.Limited.Since.UTC()) + " for a permit of the collection's limits"
		if c.Limited.Key != "" {
			why += " (the " + string(c.Limited.Key) + " limit)"
		}
		if !c.At.IsZero() {
			why += "; it asks again at " + clock(c.At.UTC())
		}
		return &waitMark{Label: "waiting for a limit", Why: why + "."}
	}
	due := j.Schedule.DueAt
	if due.IsZero() || due.After(now) || (j.LeaseOwner != "" && j.LeaseUntil.After(now)) {
		return nil
	}
	n, limit := h.s.InFlight()
	if n < limit {
		return nil
	}
	return &waitMark{Label: "waiting for a worker", Why: fmt.Sprintf(
		"Due since %s; every one of this instance's %d workers is busy (Config.MaxConcurrency), so none has claimed it yet.", clock(due.UTC()), limit)}
}

// jobRow is the line of a job in a collection's table: what the record
// holds, and the outcome of its last run (see lastStatus).
func (h *handler) jobRow(ctx context.Context, j *scheduler.JobRecord, now time.Time, coll scheduler.CollectionState) (jobRow, error) {
	row := jobRow{Name: j.Name, URL: h.jobURL(j.Collection, j.Name, nil), State: string(j.State), jobSummary: summarize(j, j.Job.Location(), now, coll)}
	if running(j, now) {
		row.Running = j.LeaseOwner
	} else {
		row.Waiting = h.waitingFor(j, now, coll)
	}
	var err error
	if row.LastStatus, row.LastClass, err = h.lastStatus(ctx, j, now); err != nil {
		return jobRow{}, err
	}
	return row, nil
}

// inProgress says which attempt of occurrence o is in progress, and
// when: when starts with a comma, or is empty. An attempt that waits for
// a permit of the collection's limits has not started, unless started
// says that it did (the job is running, see running: the permits were
// granted, and the record keeps the wait until the attempt's outcome).
func inProgress(o *scheduler.Occurrence, when string, started bool) string {
	what := "the main action"
	if o.ErrorAction {
		what = "the error action"
	}
	if o.At.IsZero() {
		when = ""
	}
	l := o.Limited
	if l == nil {
		return fmt.Sprintf("Occurrence %d (expected %s) is in progress: attempt %d of %s%s.", o.Number, clock(o.Expected.UTC()), o.Retry+1, what, when)
	}
	var text string
	if started {
		text = fmt.Sprintf("Occurrence %d (expected %s) is in progress: attempt %d of %s, after it waited since %s for a permit of the collection's limits",
			o.Number, clock(o.Expected.UTC()), o.Retry+1, what, clock(l.Since.UTC()))
	} else {
		// A run waiting for its permits is unclaimed: the engine asks
		// for them again at o.At.
		again := ""
		if !o.At.IsZero() {
			again = " (it asks again at " + clock(o.At.UTC()) + ")"
		}
		text = fmt.Sprintf("Occurrence %d (expected %s) is in progress, its attempt %d of %s not started%s: it has waited since %s for a permit of the collection's limits",
			o.Number, clock(o.Expected.UTC()), o.Retry+1, what, again, clock(l.Since.UTC()))
	}
	if l.Key != "" {
		text += " (the " + string(l.Key) + " limit)"
	}
	return text + "."
}

// lastStatus says how the job's last run went, and the class that
// colours it: from the record when it tells (an occurrence in progress,
// the latest finished one failed, or the latest success ended after the
// last attempt started), else from the job's history (a put resets the
// schedule's record of outcomes and drops a pending retry, but keeps the
// status's last attempt). An attempt in progress at now (see running)
// says "running", whether or not the record has its occurrence yet (it
// has it from the first attempt's outcome on); an occurrence whose next
// attempt waits for a permit of the collection's limits, and which no
// attempt of runs, says "waiting for a limit".
func (h *handler) lastStatus(ctx context.Context, j *scheduler.JobRecord, now time.Time) (text, class string, err error) {
	sc := j.Schedule
	switch c := sc.Current; {
	case running(j, now) && c != nil && c.ErrorAction:
		return "running its error action", "running", nil
	case running(j, now) && c != nil && c.Retry > 0:
		return fmt.Sprintf("running retry %d", c.Retry), "running", nil
	case running(j, now):
		return "running", "running", nil
	case c != nil && c.Limited != nil && c.ErrorAction:
		return "its error action waiting for a limit", "waiting", nil
	case c != nil && c.Limited != nil && c.Retry > 0:
		return fmt.Sprintf("retry %d waiting for a limit", c.Retry), "waiting", nil
	case c != nil && c.Limited != nil:
		return "waiting for a limit", "waiting", nil
	case c != nil && c.ErrorAction:
		return "running its error action", "running", nil
	case c != nil && c.Retry > 0:
		return fmt.Sprintf("retrying (retry %d)", c.Retry), "running", nil
	case c != nil:
		return "running", "running", nil
	case sc.Policy != nil && len(sc.Policy.Running) > 0:
		return fmt.Sprintf("%d running side by side", len(sc.Policy.Running)), "running", nil
	case j.Status.LastExecutionTime == nil:
		return "never ran", "never", nil
	case sc.LastFailed:
		return "failed", "failed", nil
	case !sc.LastSucceeded.Before(*j.Status.LastExecutionTime):
		return "succeeded", "succeeded", nil
	}
	hist, err := h.s.ListHistory(ctx, j.Collection, j.Name, &scheduler.ListHistoryOptions{Top: lastRunEntries})
	if err != nil {
		return "", "", err
	}
	for _, e := range hist {
		switch {
		case e.Status == scheduler.StatusFailed, e.Status == scheduler.StatusCompleted && e.ActionName == scheduler.ErrorAction:
			return "failed", "failed", nil
		case e.Status == scheduler.StatusCompleted:
			return "succeeded", "succeeded", nil
		}
	}
	return "ended", "ended", nil // its history no longer holds the attempt
}

// lastRunEntries is how many of a job's latest history entries
// lastStatus reads to find its last attempt among postponed and skipped
// occurrences.
const lastRunEntries = 10

// pager builds the paging links of a table showing n rows from skip.
func (h *handler) pager(q url.Values, skip, top, n, total int, known bool, link func(url.Values) string) pager {
	at := func(s int) string {
		pq := cloneQuery(q)
		if s > 0 {
			pq.Set("skip", itoa(s))
		} else {
			pq.Del("skip")
		}
		return link(pq)
	}
	p := pager{From: skip + 1, To: skip + n, Total: total, Known: known}
	if n == 0 {
		p.From = skip
	}
	switch {
	case skip > 0 && n == 0 && known:
		// Past the end: back to the last page that has rows.
		p.Prev = at(max(0, (total-1)/top*top))
	case skip > 0 && n == 0:
		// Past the end of a list whose length is not known: back to
		// the first page, rather than to another empty one.
		p.Prev = at(0)
	case skip > 0:
		p.Prev = at(max(0, skip-top))
	}
	if known && skip+n < total || !known && n > top {
		p.Next = at(skip + top)
	}
	if !known && n > top {
		p.To = skip + top
	}
	if known {
		p.Pages = pageLinks(skip, top, total, at)
	}
	return p
}

// --- Job ---

type jobPage struct {
	// Flash is the message after an action, said of the job as it is.
	Flash string
	// Failure says in sentences how the job handles failure, RunPolicy
	// what its own run policy does (none: nil), and Limits which of its
	// collection's limits apply to it (none: nil).
	Failure, RunPolicy        []sentence
	Limits                    []string
	Collection, CollectionURL string
	Name                      string
	URL                       string
	State                     string
	Final                     bool
	// Running names the instance whose attempt of the job is in
	// progress now; empty when none is (see running).
	Running    string
	Waiting    *waitMark // see jobRow
	CanRun     bool
	RunBlocked string
	jobSummary
	Zone             string
	StartTime        stamp
	Created, Updated stamp
	Occurrences      int
	Current          string
	Upcoming         upcomingTable
	UpcomingNote     string
	Definition       string
	History          []historyRow
	Filters          []filterLink
	Pager            pager
	DeleteURL        string
	EditURL          string
	ActionURL        string
	MaxBackfill      int
	Chart            *durationChart
}

// upcomingTable is a table of occurrences; Zone is the job's zone, empty
// for UTC.
type upcomingTable struct {
	Zone     string
	Rows     []occurrenceRow
	DST      bool // a daylight saving change touches a row
	Spread   bool // the rows are planned instants of a recurrence with a window
	Calendar bool // an exclusion calendar skipped or moved a row
}

func newUpcoming(zone string, rows []occurrenceRow) upcomingTable {
	sameClock(rows, func(r *occurrenceRow) *stamp { return &r.At }, func(r *occurrenceRow) *stamp { return &r.Scheduled },
		func(r *occurrenceRow) *stamp { return &r.MovedFrom }, func(r *occurrenceRow) *stamp { return &r.Replanned })
	u := upcomingTable{Zone: zone, Rows: rows}
	for _, r := range rows {
		u.DST = u.DST || r.Shifted || r.Repeated || r.Changed
		u.Spread = u.Spread || r.Scheduled.ISO != ""
		u.Calendar = u.Calendar || r.Calendar != ""
	}
	return u
}

type occurrenceRow struct {
	N         int
	At        stamp // the planned instant: when it runs
	Scheduled stamp // with a window, the scheduled instant At is spread from; zero without
	Shifted   bool  // its wall time did not exist: it runs shifted by the gap
	Repeated  bool  // its wall time came round a second time: clocks went back
	Changed   bool  // the zone's offset differs from the previous row's
	Offset    string
	// Calendar names the exclusion calendar when it moved or skipped
	// this occurrence: MovedFrom is the instant it was moved from (zero
	// when not moved); a Skipped row does not run, and More counts the
	// skipped occurrences after it, up to Last; a Merged row runs as the
	// occurrence at Into.
	Calendar  string
	MovedFrom stamp
	Skipped   bool
	More      int
	Last      stamp
	Merged    bool
	Into      stamp
	// Cut is set on the last row of the dropped ones listed before an
	// occurrence when the calendar drops more that are not listed (see
	// maxDroppedRead).
	Cut bool
	// Replanned is the instant the job's record planned this occurrence
	// at under another version of the calendar, which the engine plans
	// again when it comes due; zero when the record has it as listed.
	Replanned stamp
}

type historyRow struct {
	Collection, Job, JobURL string
	End                     stamp
	Expected                stamp
	Duration                string
	Action                  string
	Status                  string
	Retry                   int
	Occurrence              int
	Faulted                 bool
	// Backfill marks the attempts of an occurrence a backfill asked for,
	// Manual those of a run asked for with Run now (RunJob).
	Backfill, Manual bool
	// Message is the whole message, its line breaks as "\n". Long says
	// it is shown folded: Summary, its first line, says how many Lines
	// open from it.
	Message string
	Long    bool
	Summary string
	Lines   int
}

// Messages of at most shortLines lines and shortBytes bytes are shown
// whole; longer ones folded under their first line.
const (
	shortLines = 3
	shortBytes = 300
)

// historyFilters are the choices of the history table's filter; Faulted
// is a flag rather than a status.
var historyFilters = []string{"", "Completed", "Failed", "Postponed", "Skipped", "Faulted"}

func (h *handler) job(r *http.Request, v *viewer) (string, any, error) {
	ctx := r.Context()
	c, name := r.PathValue("collection"), r.PathValue("job")
	if !v.sees(c) {
		return "", nil, notFound("The job")
	}
	rec, err := h.s.GetJob(ctx, c, name)
	if err != nil {
		return "", nil, notFoundAs(err, "The job")
	}
	col, err := h.s.GetCollection(ctx, c)
	if err != nil {
		return "", nil, notFoundAs(err, "The job's collection")
	}
	q := r.URL.Query()
	filter := q.Get("status")
	if !slices.Contains(historyFilters, filter) {
		return "", nil, &statusError{http.StatusBadRequest, fmt.Sprintf("status=%q is not a history filter: use Completed, Failed, Postponed, Skipped or Faulted, or leave it out.", filter)}
	}
	skip, err := parseSkip(q)
	if err != nil {
		return "", nil, err
	}
	opts := &scheduler.ListHistoryOptions{Top: historyPage + 1, Skip: skip}
	if filter == "Faulted" {
		opts.Faulted = true
	} else {
		opts.Status = scheduler.ExecutionStatus(filter)
	}
	hist, err := h.s.ListHistory(ctx, c, name, opts)
	if err != nil {
		return "", nil, err
	}
	job := rec.Job
	loc := job.Location()
	now := time.Now()
	p := &jobPage{
		Collection: c, CollectionURL: h.collectionURL(c, nil), Name: name, URL: h.jobURL(c, name, nil),
		State: string(rec.State), Final: rec.State.Final(), jobSummary: summarize(rec, loc, now, col.Definition.State()),
		StartTime: atPtr(job.StartTime, loc), Created: at(rec.Created, loc), Updated: at(rec.Updated, loc),
		Occurrences: rec.Schedule.Occurrences,
		Definition:  maskedJSON(rec.Definition()),
		DeleteURL:   h.url(url.Values{"etag": {rec.ETag}}, "collections", c, "jobs", name, "delete"),
		EditURL:     h.url(url.Values{"collection": {c}, "job": {name}}, "edit", "job"),
		MaxBackfill: scheduler.MaxBackfill,
		ActionURL:   h.jobURL(c, name, nil),
		Failure:     failureWords(job),
		RunPolicy:   runPolicyWords(job),
		Limits:      limitWords(job, col.Definition.Properties.Limits),
	}
	if p.LastStatus, p.LastClass, err = h.lastStatus(ctx, rec, now); err != nil {
		return "", nil, err
	}
	if loc != time.UTC {
		p.Zone = loc.String()
	}
	switch st := col.Definition.State(); {
	case rec.State.Final():
		p.RunBlocked = "A " + string(rec.State) + " job does not run again; put it anew to reschedule it."
	case st != scheduler.CollectionEnabled:
		p.RunBlocked = "Its collection is " + string(st) + ": no job of it runs."
	default:
		p.CanRun = true
	}
	var progress []string
	if running(rec, now) {
		p.Running = rec.LeaseOwner
	} else if p.Waiting = h.waitingFor(rec, now, col.Definition.State()); p.Waiting != nil && (rec.Schedule.Current == nil || rec.Schedule.Current.Limited == nil) {
		// A wait for a limit is said with the occurrence in progress.
		progress = append(progress, p.Waiting.Why)
	}
	if p.Running != "" && rec.Schedule.Current == nil {
		progress = append(progress, "An attempt is running now, on instance "+p.Running+".")
	}
	if cur := rec.Schedule.Current; cur != nil {
		progress = append(progress, inProgress(cur, ", due "+clock(cur.At.UTC()), p.Running != ""))
	}
	if pol := rec.Schedule.Policy; pol != nil {
		// Occurrences side by side (runPolicy.overlap AllowAll).
		for _, ru := range pol.Running {
			when := ", due " + clock(ru.At.UTC())
			if ru.Owner != "" {
				when = ", running on " + ru.Owner
			}
			progress = append(progress, inProgress(&ru.Occurrence, when, ru.Owner != ""))
		}
	}
	p.Current = strings.Join(progress, " ")
	if op := q.Get("flash"); op != "" {
		p.Flash = jobFlash(op, rec)
	}
	rows, note := upcoming(rec, h.calendarOf(ctx, rec), upcomingOnJobPage)
	if st := col.Definition.State(); st != scheduler.CollectionEnabled && !rec.State.Final() {
		note = "Its collection is " + string(st) + ": none of these runs while it is. Once it is enabled again, " +
			"the job's run policy (missed, catchUpWindow) decides which of the occurrences it missed run."
	}
	p.Upcoming, p.UpcomingNote = newUpcoming(p.Zone, rows), note
	link := func(q url.Values) string { return h.jobURL(c, name, q) }
	base := cloneQuery(q)
	base.Del("flash")
	for _, f := range historyFilters {
		fq := cloneQuery(base)
		fq.Del("skip")
		label := f
		if f == "" {
			fq.Del("status")
			label = "All"
		} else {
			fq.Set("status", f)
		}
		if f == "Faulted" {
			label = "Faulted occurrences"
		}
		p.Filters = append(p.Filters, filterLink{Label: label, URL: link(fq), Active: f == filter})
	}
	for i, e := range hist {
		if i == historyPage {
			break
		}
		p.History = append(p.History, h.historyRow(e, loc, false))
	}
	sameClock(p.History, historyEnd, historyExpected)
	p.Chart = buildDurationChart(hist[:min(len(hist), historyPage)])
	p.Pager = h.pager(base, skip, historyPage, len(hist), 0, false, link)
	return "job", p, nil
}

// calendarOf returns the exclusion calendar the job of rec names,
// compiled; nil when it names none, or its collection no longer has it.
func (h *handler) calendarOf(ctx context.Context, rec *scheduler.JobRecord) *recurrence.Exclusions {
	excl, _ := h.calendar(ctx, rec.Collection, rec.Job.Recurrence.Ext().Calendar)
	return excl
}

// calendar returns the exclusion calendar name of collection, compiled;
// nil for an empty name, and with an error when the collection has no
// such calendar (or it cannot be read or compiled).
func (h *handler) calendar(ctx context.Context, collection, name string) (*recurrence.Exclusions, error) {
	if name == "" {
		return nil, nil
	}
	c, err := h.s.GetCalendar(ctx, collection, name)
	if err != nil {
		return nil, err
	}
	return c.Calendar.CompileStored()
}

// upcoming lists the next n occurrences of a job as its record has them,
// under cal, the calendar it names (nil: none), with a note when they
// will not run as listed.
func upcoming(rec *scheduler.JobRecord, cal *recurrence.Exclusions, n int) ([]occurrenceRow, string) {
	if rec.State.Final() {
		return nil, "The job is " + string(rec.State) + ": it has no further occurrences."
	}
	t, err := rec.Job.TimingUnder(rec.Collection, rec.Name, rec.Schedule.Anchor, cal)
	if err != nil {
		return nil, "Its schedule cannot be computed: " + err.Error()
	}
	planned := rec.Schedule.NextOccurrence
	if planned.IsZero() {
		return nil, "No further occurrence: its count or endTime is reached."
	}
	// The record may hold the occurrence as planned under another version
	// of the calendar: the engine plans it again when it comes due.
	next, scheduled := t.Replan(planned)
	if next.IsZero() {
		return nil, "No further occurrence: its endTime is reached, or calendar “" + t.Calendar() + "” excludes every one left."
	}
	limit := n
	if c := t.Count(); c > 0 {
		limit = min(n, c-rec.Schedule.Counted)
	}
	loc := rec.Job.Location()
	// The occurrences dropped before next: from the one the engine plans
	// again, or those the calendar excludes from now on (a change of the
	// calendar planned it again already, or the occurrences before next
	// are excluded anyway).
	var rows []occurrenceRow
	budget := &droppedBudget{left: maxDroppedRead}
	if from := time.Now(); cal != nil && next.After(from) {
		if !next.Equal(planned) {
			from = scheduled.Add(-time.Nanosecond)
		}
		// Dropped also holds the instants an earlier version of the
		// calendar dropped, and those merged into the occurrence before
		// the first listed (PreviousIncluded): only the ones cal excludes
		// and that do not run as the occurrence before are listed.
		rows = droppedRows(t, budget, t.Dropped(from, next), func(s time.Time, merged bool) bool {
			return (!merged || t.OnExcluded() != recurrence.OnExcludedPreviousIncluded) && cal.Excludes(s)
		}, next, next, loc)
	}
	k := len(rows)
	rows = append(rows, occurrenceRows(t, budget, next, limit, loc)...)
	if !next.Equal(planned) && k < len(rows) {
		rows[k].Calendar, rows[k].Replanned = t.Calendar(), at(planned, loc)
	}
	return rows, disabledNote(rec)
}

func disabledNote(rec *scheduler.JobRecord) string {
	if rec.State != scheduler.JobDisabled {
		return ""
	}
	if t := rec.Definition().ResumeTime; t != nil {
		return "The job is paused until " + atPtr(t, rec.Job.Location()).Words() +
			": the ones before it do not run on time, and its run policy (missed, catchUpWindow) decides which of them run then."
	}
	return "The job is Disabled: these run only once it is enabled again (from then on)."
}

// occurrenceRows lists up to limit occurrences of t from first on, marking
// those a daylight saving change moved or repeated and those after a
// change of the zone's offset. With a window, each row is the planned
// instant and carries the scheduled one it is spread from. Under an
// exclusion calendar, a moved occurrence carries the instant it was
// moved from, and the ones skipped after first get a row of their own
// (not numbered, not counted in limit), as far as budget lasts.
func occurrenceRows(t *scheduler.Timing, budget *droppedBudget, first time.Time, limit int, loc *time.Location) []occurrenceRow {
	var out []occurrenceRow
	var rule *recurrence.Rule
	if t.Rule() != nil {
		rule = t.Rule()
	}
	prevOff, havePrev := 0, false
	n := 0
	for a := first; !a.IsZero() && n < limit; {
		_, off := a.In(loc).Zone()
		n++
		row := occurrenceRow{N: n, At: at(a, loc), Offset: a.In(loc).Format("-07:00")}
		planned := a
		if from, moved := t.Moved(a); moved {
			row.Calendar, row.MovedFrom, planned = t.Calendar(), at(from, loc), from
		}
		if rule != nil && rule.Window() > 0 {
			row.Scheduled = at(rule.Scheduled(planned), loc)
		}
		row.Shifted = rule != nil && rule.Shifted(a)
		row.Repeated = rule != nil && rule.Repeated(a)
		row.Changed = havePrev && off != prevOff
		prevOff, havePrev = off, true
		out = append(out, row)
		next := t.Next(a)
		if !next.After(a) {
			break
		}
		if n < limit {
			out = append(out, droppedRows(t, budget, t.Dropped(a, next), nil, a, next, loc)...)
		}
		a = next
	}
	return out
}

// Bounds of the occurrences a calendar drops that a page lists, so that
// a page costs the same whatever the calendar excludes (a minutely job
// whose calendar excludes a week drops 10,080 of them before its next
// occurrence): a page reads at most maxDroppedRead dropped instants in
// all, and lists at most maxDroppedRows rows of them before an
// occurrence. Where either cuts the list, its last row says that more
// are dropped before the next occurrence.
const (
	maxDroppedRead = 1000
	maxDroppedRows = 10
)

// droppedBudget is what is left to read of maxDroppedRead on a page.
type droppedBudget struct{ left int }

// droppedRows lists dropped, the occurrences t's calendar drops between
// the occurrences prev and next (see [scheduler.Timing.Dropped]): a run
// of skipped ones as one row, each one merged into a neighbouring
// occurrence as its own. Only those keep (nil: all) reports true for are
// listed; each one read, listed or not, takes one of budget (one is read
// when none is left), and the last row is Cut when budget or
// maxDroppedRows ends the list early.
func droppedRows(t *scheduler.Timing, budget *droppedBudget, dropped iter.Seq2[time.Time, bool], keep func(time.Time, bool) bool, prev, next time.Time, loc *time.Location) []occurrenceRow {
	var out []occurrenceRow
	var run *occurrenceRow // the row of the run of skipped ones being read
	cut, read := false, 0
	for s, merged := range dropped {
		// One is read past the budget, to show that there are some.
		if budget.left <= 0 && read > 0 {
			cut = true
			break
		}
		read, budget.left = read+1, budget.left-1
		if keep != nil && !keep(s, merged) {
			continue
		}
		if !merged && run != nil {
			run.More, run.Last = run.More+1, at(s, loc)
			continue
		}
		if len(out) == maxDroppedRows {
			cut = true
			break
		}
		row := occurrenceRow{At: at(s, loc), Offset: s.In(loc).Format("-07:00"), Calendar: t.Calendar(), Skipped: true}
		if merged {
			into := next
			if t.OnExcluded() == recurrence.OnExcludedPreviousIncluded {
				into = prev
			}
			row.Merged, row.Into = true, at(into, loc)
		}
		out = append(out, row)
		run = nil
		if !merged {
			run = &out[len(out)-1]
		}
	}
	if cut && len(out) > 0 {
		out[len(out)-1].Cut = true
	}
	return out
}

func historyEnd(r *historyRow) *stamp      { return &r.End }
func historyExpected(r *historyRow) *stamp { return &r.Expected }

// historyRow is the line of a history entry.
func (h *handler) historyRow(e scheduler.HistoryEntry, loc *time.Location, withJob bool) historyRow {
	row := historyRow{
		End: at(e.EndTime, loc), Expected: at(e.ExpectedExecutionTime, loc),
		Action: string(e.ActionName), Status: string(e.Status), Retry: e.RetryCount, Occurrence: e.RepeatCount,
		Faulted: e.Faulted, Backfill: e.Backfill, Manual: e.Manual,
	}
	// Messages stored by other versions or imported from Azure may break
	// lines with CRLF or CR.
	row.Message = strings.TrimSpace(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(e.Message))
	row.Lines = strings.Count(row.Message, "\n") + 1
	row.Long = row.Lines > shortLines || len(row.Message) > shortBytes
	if row.Long {
		row.Summary = firstLine(row.Message, 120)
	}
	if d := e.EndTime.Sub(e.StartTime); d >= 0 && !e.StartTime.IsZero() && e.Status != scheduler.StatusPostponed {
		row.Duration = d.Round(time.Millisecond).String()
	}
	if withJob {
		row.Collection, row.Job, row.JobURL = e.Collection, e.Job, h.jobURL(e.Collection, e.Job, nil)
	}
	return row
}

// --- Actions ---

// confirmPage asks to confirm a job's deletion. ETag is the job's as the
// job page showed it (its etag parameter), else as this page read it:
// the deletion deletes the job only while it holds it.
type confirmPage struct {
	Collection, Name string
	JobURL           string
	ActionURL        string
	ETag             string
}

func (h *handler) confirmDelete(r *http.Request, v *viewer) (string, any, error) {
	c, name := r.PathValue("collection"), r.PathValue("job")
	if !v.sees(c) {
		return "", nil, notFound("The job")
	}
	rec, err := h.s.GetJob(r.Context(), c, name)
	if err != nil {
		return "", nil, notFoundAs(err, "The job")
	}
	etag := r.URL.Query().Get("etag")
	if etag == "" {
		etag = rec.ETag
	}
	return "confirm", &confirmPage{Collection: c, Name: name, JobURL: h.jobURL(c, name, nil), ActionURL: h.url(nil, "collections", c, "jobs", name, "delete"), ETag: etag}, nil
}

// jobAction runs, enables, disables or deletes a job.
func (h *handler) jobAction(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	ctx := r.Context()
	c, name, op := r.PathValue("collection"), r.PathValue("job"), r.PathValue("op")
	if !v.sees(c) {
		return "", notFound("The job")
	}
	var err error
	switch op {
	case "run":
		_, err = h.s.RunJob(ctx, c, name)
	case "enable":
		_, err = h.s.EnableJob(ctx, c, name)
	case "disable":
		_, err = h.s.DisableJob(ctx, c, name)
	case "pause":
		err = h.pause(r, c, name)
	case "backfill":
		return h.backfill(w, r, v, c, name)
	case "retry":
		return h.retry(r, v, c, name)
	case "delete":
		// Delete the job only as the confirmation showed it: one written
		// since is not deleted, and its page shows it as it is now.
		etag := r.PostForm.Get("etag")
		if r.PostForm.Get("confirm") != "yes" || etag == "" {
			return h.url(nil, "collections", c, "jobs", name, "delete"), nil
		}
		if err = h.s.DeleteJob(ctx, c, name, &scheduler.DeleteJobOptions{IfMatch: etag}); err == nil {
			h.log.Info("dashboard: job deleted", "collection", c, "job", name, "user", v.name())
			return h.collectionURL(c, url.Values{"flash": {"deleted"}, "job": {name}}), nil
		}
		if errors.Is(err, scheduler.ErrPreconditionFailed) {
			// Changed since, or gone: a job that is gone is not found.
			if _, err = h.s.GetJob(ctx, c, name); err == nil {
				h.log.Info("dashboard: job not deleted: it changed since the confirmation", "collection", c, "job", name, "user", v.name())
				return h.jobURL(c, name, url.Values{"flash": {"delete-changed"}}), nil
			}
		}
	default:
		return "", &statusError{http.StatusNotFound, "There is no such action."}
	}
	if err != nil {
		return "", notFoundAs(err, "The job")
	}
	h.log.Info("dashboard: job "+op, "collection", c, "job", name, "user", v.name())
	return h.jobURL(c, name, url.Values{"flash": {op}}), nil
}

// flashes are the messages a page shows after an action, by the flash
// query parameter. A job page says what disable and pause did from the
// job as it is (jobFlash).
var flashes = map[string]string{
	"run":     "Run requested: the job starts in a moment, and its history below shows the outcome.",
	"enable":  "The job is enabled: it runs from its next occurrence on.",
	"disable": "The job is disabled: it runs no more occurrences until it is enabled again.",
	"deleted": "The job was deleted with its history.",
	"delete-changed": "Nothing was deleted: the job changed since its page was shown (it was written again). " +
		"This is the job now; delete it again to delete it.",
	"pause": "The job is paused: it runs no more occurrences until it is resumed.",
	"backfill": "Backfill requested: the occurrences of the range run one at a time while the job is Enabled, " +
		"after its scheduled ones; its history marks them as backfilled.",
	"retry": "Retry requested: the occurrence runs again, once, with its retries and errorAction, while the job is Enabled " +
		"and after what of it is due; its history marks it as backfilled.",
	"retry-none": "Nothing to retry: that occurrence waits to run again already, or is in progress.",
	"collection-enable": "The collection is enabled: its jobs run again, and each job's run policy (missed) decides " +
		"which of the occurrences it missed meanwhile run (by default, once for all of them).",
	"collection-disable": "The collection is disabled: none of its jobs runs until it is enabled again; then each job's " +
		"run policy (missed) decides which of the occurrences it missed run (by default, once for all of them).",
	"collection-suspend": "The collection is suspended: none of its jobs runs until it is enabled again; then each job's " +
		"run policy (missed) decides which of the occurrences it missed run (by default, once for all of them).",
	"collection-deleted":  "The collection was deleted with its jobs and their history.",
	"collection-changed":  "Nothing was deleted: the collection's jobs changed since the confirmation. These are its jobs now; confirm again to delete them.",
	"collection-replaced": "Nothing was deleted: the collection was written again since the confirmation. This is it now; confirm again to delete it.",
	"saved":               "Saved.",
}

// jobFlash is the message of the job page after the action op, said of
// the job as it is now: a disabled job with a resume time is enabled
// again by itself then, and a pause without a reason or a resume time is
// a plain disable. Other actions, and a job no longer Disabled, have the
// message of flashes.
func jobFlash(op string, rec *scheduler.JobRecord) string {
	if (op != "disable" && op != "pause") || rec.State != scheduler.JobDisabled {
		return flashes[op]
	}
	d := rec.Definition()
	switch {
	case d.ResumeTime != nil:
		verb := "paused"
		if op == "disable" {
			verb = "disabled"
		}
		return "The job is " + verb + " until its resume time, " + atPtr(d.ResumeTime, rec.Job.Location()).Words() +
			": then it is enabled again by itself, and its run policy decides which of the occurrences it missed run. Resume enables it now."
	case op == "pause" && d.StateReason == "":
		return "The job is disabled (paused without a reason or a resume time): it runs no more occurrences until it is enabled again."
	}
	return flashes[op]
}

// --- Try a definition ---

type tryPage struct {
	Definition string
	Created    string
	N          int
	Checked    bool
	checkResult
}

type problem struct {
	Path, Value, Reason string
	// Refs are the paths Reason names (see scheduler.ValidationError).
	Refs []string
}

// tryExample fills the try page's form at first.
const tryExample = `{
  "startTime": "2012-08-04T00:00Z",
  "action": {
    "type": "Http",
    "request": {"uri": "https://example.com/report", "method": "POST", "body": "nightly"},
    "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 2}
  },
  "recurrence": {
    "frequency": "Week",
    "schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22], "minutes": [0]},
    "timeZone": "Europe/Berlin"
  }
}`

func (h *handler) try(r *http.Request, v *viewer) (string, any, error) {
	return "try", &tryPage{Definition: tryExample, N: defaultTryOccurrrs}, nil
}

// tryPost checks a definition as jobclock validate and jobclock next do:
// every problem at its JSON path, or the schedule in words and the next
// occurrences of a job created at the time given (now when empty).
func (h *handler) tryPost(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	f := r.PostForm
	p := &tryPage{Definition: f.Get("definition"), Created: strings.TrimSpace(f.Get("created")), N: defaultTryOccurrrs, Checked: true}
	status := http.StatusOK
	created := time.Now().UTC().Truncate(time.Second)
	if p.Created != "" {
		t, err := scheduler.ParseTime(p.Created)
		if err != nil {
			p.Problems = append(p.Problems, problem{Path: "created", Value: strconv.Quote(p.Created), Reason: "is not an ISO 8601 time such as 2026-01-05T09:00Z"})
		}
		created = t
	}
	if s := strings.TrimSpace(f.Get("n")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxTryOccurrences {
			p.Problems = append(p.Problems, problem{Path: "occurrences", Value: strconv.Quote(s), Reason: fmt.Sprintf("is not a number from 1 to %d", maxTryOccurrences)})
		} else {
			p.N = n
		}
	}
	if len(p.Problems) > 0 {
		h.render(w, r, http.StatusBadRequest, "try", v, p)
		return "", nil
	}
	p.checkResult = h.check(r.Context(), []byte(p.Definition), "", "", created, p.N)
	if p.Syntax != "" || len(p.Problems) > 0 {
		status = http.StatusUnprocessableEntity
	} else if p.Created == "" {
		p.Created = created.Format(time.RFC3339)
	}
	h.render(w, r, status, "try", v, p)
	return "", nil
}

// checkResult is what check finds of a job definition.
type checkResult struct {
	Syntax    string
	Problems  []problem
	Schedule  string
	Zone      string
	Upcoming  upcomingTable
	Note      string
	Canonical string
}

// check checks a job definition as the Scheduler will when it is put
// (its own action types, executors and retry floor), as jobclock validate
// and jobclock next do: every problem at its JSON path, or the schedule
// in words and the first n occurrences of job name of collection created
// at created (a recurrence window and cron H fields depend on the names;
// empty for a definition without a job).
//
// A job that names an exclusion calendar is listed under its collection's
// calendar, as its page lists it: a calendar the collection does not have
// is a problem at recurrence.calendar, as when the job is put. Without a
// collection (the try page) it is listed without, and the note says so.
func (h *handler) check(ctx context.Context, def []byte, collection, name string, created time.Time, n int) checkResult {
	var res checkResult
	opts := h.s.ParseOptions()
	opts.Created, opts.Now = created, created
	job, err := scheduler.ParseJob(def, &opts)
	if err != nil {
		var se *scheduler.SyntaxError
		if errors.As(err, &se) {
			res.Syntax = se.Error()
		}
		res.Problems = problemsOf(err)
		if res.Syntax == "" && len(res.Problems) == 0 {
			res.Syntax = err.Error()
		}
		return res
	}
	loc := job.Location()
	if loc != time.UTC {
		res.Zone = loc.String()
	}
	res.Schedule = job.Describe(created)
	res.Canonical = maskedJSON(job)
	var cal *recurrence.Exclusions
	if cname := job.Recurrence.Ext().Calendar; cname != "" && collection != "" {
		if cal, err = h.calendar(ctx, collection, cname); err != nil {
			res.Problems = []problem{{Path: "recurrence.calendar", Value: strconv.Quote(cname),
				Reason: fmt.Sprintf("is not a calendar of collection %q: %v", collection, err)}}
			return res
		}
	}
	t, err := job.TimingUnder(collection, name, created, cal)
	if err != nil {
		res.Note = "Its schedule cannot be computed: " + err.Error()
	} else if first := t.First(); first.IsZero() {
		res.Note = "It never runs: its endTime is before its first occurrence."
	} else {
		limit := n
		if c := t.Count(); c > 0 {
			limit = min(limit, c)
		}
		res.Upcoming = newUpcoming(res.Zone, occurrenceRows(t, &droppedBudget{left: maxDroppedRead}, first, limit, loc))
		if k := len(res.Upcoming.Rows); k < n {
			res.Note = fmt.Sprintf("It runs %d %s in all.", k, plural(k, "time", "times"))
		}
		if job.Recurrence.DependsOnJob() && name == "" {
			// A definition without a job has no names: its window's
			// offsets and its H fields are those of empty names.
			res.Note = strings.TrimSpace(res.Note + " A job's collection and name decide where in its window each occurrence runs and what the H fields of its cron spec stand for: these are the instants of a job without either, and the job's own page lists its own.")
		}
		if cname := job.Recurrence.Ext().Calendar; cname != "" && collection == "" {
			res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" It names the exclusion calendar %q, which its collection holds: these are its occurrences without it, and the job's own page and editor apply it.", cname))
		}
	}
	return res
}

// --- Query parameters ---

func parseState(s string) (scheduler.JobState, error) {
	if s == "" {
		return "", nil
	}
	for _, st := range jobStates {
		if strings.EqualFold(s, string(st)) {
			return st, nil
		}
	}
	return "", &statusError{http.StatusBadRequest, fmt.Sprintf("state=%q is not a job state: use Enabled, Disabled, Completed or Faulted, or leave it out.", s)}
}

// parsePage reads a table's page of jobs: top (25, 50 or 100; 50 by
// default) and skip.
func parsePage(q url.Values) (top, skip int, err error) {
	if top, err = parseChoice(q, "top", defaultJobsPage, 25, 50, 100); err != nil {
		return 0, 0, err
	}
	skip, err = parseSkip(q)
	return top, skip, err
}

func parseSkip(q url.Values) (int, error) {
	s := q.Get("skip")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1_000_000_000 {
		return 0, &statusError{http.StatusBadRequest, fmt.Sprintf("skip=%q is not a number of rows to skip.", s)}
	}
	return n, nil
}

func parseChoice(q url.Values, name string, def int, choices ...int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	for _, c := range choices {
		if err == nil && n == c {
			return n, nil
		}
	}
	return 0, &statusError{http.StatusBadRequest, fmt.Sprintf("%s=%q is not one of %s.", name, s, joinInts(choices))}
}

// notFoundAs turns ErrNotFound into the page's own 404 message.
func notFoundAs(err error, what string) error {
	if errors.Is(err, scheduler.ErrNotFound) {
		return notFound(what)
	}
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }

func joinInts(vals []int) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = itoa(v)
	}
	return strings.Join(s, ", ")
}
