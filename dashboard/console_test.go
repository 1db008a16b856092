package dashboard_test

import (
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// The console's changes go through the Scheduler's methods with the JSON
// the REST API takes: these tests check each change in the store, and
// that a refused one shows the messages REST gives, at REST's paths.

const restJobs = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/"

// rest sends a request to the REST API over e's Scheduler and returns the
// problems of its error answer as "path: message" lines (none when it
// succeeded).
func (e *env) rest(method, path, body string) []string {
	e.t.Helper()
	h := httpapi.New(e.s, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path+"?api-version=2016-03-01", strings.NewReader(body)))
	if rec.Code < 400 {
		return nil
	}
	var er httpapi.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil {
		e.t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	details := er.Error.Details
	if len(details) == 0 {
		details = []httpapi.ErrorDetail{er.Error}
	}
	var out []string
	for _, d := range details {
		out = append(out, d.Target+" | "+d.Message)
	}
	slices.Sort(out)
	return out
}

var problemPattern = regexp.MustCompile(`<li(?: class="field-error")? data-path="([^"]*)">([^<]*)</li>`)

// problems returns the problems a page lists, as rest does.
func problems(p page) []string {
	var out []string
	for _, m := range problemPattern.FindAllStringSubmatch(p.body, -1) {
		out = append(out, html.UnescapeString(m[1])+" | "+html.UnescapeString(m[2]))
	}
	slices.Sort(out)
	return out
}

// sameProblems checks that the dashboard's page lists the problems REST
// answered, and at least one.
func sameProblems(t *testing.T, what string, p page, rest []string) {
	t.Helper()
	if len(rest) == 0 {
		t.Fatalf("%s: REST accepted it", what)
	}
	if diff := cmp.Diff(rest, problems(p)); diff != "" {
		t.Errorf("%s: the dashboard's problems differ from REST's (-REST +dashboard):\n%s\npage (%d):\n%s", what, diff, p.status, p.body)
	}
}

func TestPauseAndResume(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	path := jobPath("sub/rg/c", "j")
	tok := e.token(path)
	wantIn(t, "job page", e.get(path), `id="pause-form"`, `id="backfill-form"`)

	resume := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	p := e.post(path+"/pause", url.Values{"csrf": {tok}, "reason": {"waiting for the <vendor>"}, "resumeTime": {resume.Format(time.RFC3339)}})
	wantStatus(t, "pause", p, http.StatusSeeOther)
	r, err := e.s.GetJob(ctx, "sub/rg/c", "j")
	if err != nil {
		t.Fatal(err)
	}
	d := r.Definition()
	if r.State != scheduler.JobDisabled || d.StateReason != "waiting for the <vendor>" || d.ResumeTime == nil || !d.ResumeTime.Equal(resume) {
		t.Fatalf("after pause: state %s, reason %q, resumeTime %v", r.State, d.StateReason, d.ResumeTime)
	}
	p = e.get(path)
	wantIn(t, "paused page", p, `id="paused">Paused: waiting for the &lt;vendor&gt; (until `+resume.Format("2006-01-02 15:04:05")+` UTC)`, `id="resume"`)
	wantNotIn(t, "paused page", p, `id="disable"`)

	// A resume time in the past and a reason too long: the Scheduler's
	// messages at REST's paths.
	bad := url.Values{"csrf": {tok}, "reason": {strings.Repeat("x", 300)}, "resumeTime": {"2001-01-01T00:00Z"}}
	p = e.post(path+"/pause", bad)
	wantStatus(t, "pause, bad", p, http.StatusBadRequest)
	sameProblems(t, "pause, bad", p, e.rest("PATCH", restJobs+"j", `{"properties": {"state": "Disabled", "stateReason": "`+strings.Repeat("x", 300)+`", "resumeTime": "2001-01-01T00:00Z"}}`))
	if r2, _ := e.s.GetJob(ctx, "sub/rg/c", "j"); r2.Definition().StateReason != "waiting for the <vendor>" {
		t.Errorf("a refused pause changed the job: reason %q", r2.Definition().StateReason)
	}

	wantStatus(t, "resume", e.post(path+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	r, _ = e.s.GetJob(ctx, "sub/rg/c", "j")
	if d := r.Definition(); r.State != scheduler.JobEnabled || d.StateReason != "" || d.ResumeTime != nil {
		t.Errorf("after resume: state %s, reason %q, resumeTime %v", r.State, d.StateReason, d.ResumeTime)
	}
	wantNotIn(t, "resumed page", e.get(path), `id="paused"`)
}

func TestBackfill(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	start := time.Now().Add(-3 * time.Hour).UTC().Truncate(time.Hour)
	// A job that started three hours ago, made now: the hours before now
	// never ran.
	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+start.Format(time.RFC3339)+`"`)
	path := jobPath("sub/rg/c", "j")
	tok := e.token(path)
	from, to := start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339)

	// The dry run lists the occurrences and runs none.
	p := e.post(path+"/backfill", url.Values{"csrf": {tok}, "from": {from}, "to": {to}, "only": {"All"}, "dry": {"1"}})
	wantStatus(t, "dry run", p, http.StatusOK)
	want, err := e.s.BackfillJob(ctx, "sub/rg/c", "j", start, start.Add(2*time.Hour), &scheduler.BackfillOptions{Only: scheduler.BackfillAll, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, "dry run", p, `id="backfill-count">3 occurrences`, `id="confirm-backfill"`, `name="only" value="All"`)
	for _, at := range want {
		wantIn(t, "dry run", p, `datetime="`+at.Format(time.RFC3339Nano)+`"`)
	}
	time.Sleep(200 * time.Millisecond)
	if h, _ := e.s.ListHistory(ctx, "sub/rg/c", "j", nil); len(h) != 0 {
		t.Fatalf("the dry run ran %d attempts", len(h))
	}

	// Confirmed, they run.
	p = e.post(path+"/backfill", url.Values{"csrf": {tok}, "from": {from}, "to": {to}, "only": {"All"}})
	wantStatus(t, "backfill", p, http.StatusSeeOther)
	h := e.waitHistory("sub/rg/c", "j", 3)
	var got []time.Time
	for _, en := range h {
		if en.Backfill {
			got = append(got, en.ExpectedExecutionTime.UTC())
		}
	}
	slices.SortFunc(got, time.Time.Compare)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backfilled occurrences (-want +got):\n%s", diff)
	}

	// A reversed range and a time that is none: REST's messages.
	p = e.post(path+"/backfill", url.Values{"csrf": {tok}, "from": {to}, "to": {from}, "dry": {"1"}})
	wantStatus(t, "reversed", p, http.StatusBadRequest)
	sameProblems(t, "reversed", p, e.rest("POST", restJobs+"j/backfill", `{"from": "`+to+`", "to": "`+from+`", "dryRun": true}`))
	p = e.post(path+"/backfill", url.Values{"csrf": {tok}, "from": {"yesterday"}, "to": {from}, "dry": {"1"}})
	sameProblems(t, "not a time", p, e.rest("POST", restJobs+"j/backfill", `{"from": "yesterday", "to": "`+from+`", "dryRun": true}`))
}

func TestCollectionStates(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	path := collPath("sub/rg/c")
	tok := e.token(path)
	wantIn(t, "enabled collection", e.get(path), `id="collection-disable"`, `id="collection-suspend"`)
	for _, step := range []struct {
		op   string
		want scheduler.CollectionState
	}{{"suspend", scheduler.CollectionSuspended}, {"enable", scheduler.CollectionEnabled}, {"disable", scheduler.CollectionDisabled}, {"enable", scheduler.CollectionEnabled}} {
		p := e.post(path+"/"+step.op, url.Values{"csrf": {tok}})
		wantStatus(t, step.op, p, http.StatusSeeOther)
		c, err := e.s.GetCollection(ctx, "sub/rg/c")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Definition.State(); got != step.want {
			t.Errorf("after %s: state %s, want %s", step.op, got, step.want)
		}
		wantIn(t, "after "+step.op, e.get(path+"?flash=collection-"+step.op), "The collection is "+strings.ToLower(string(step.want)))
	}
	wantStatus(t, "unknown operation", e.post(path+"/explode", url.Values{"csrf": {tok}}), http.StatusNotFound)
	wantStatus(t, "unknown collection", e.post(collPath("sub/rg/none")+"/disable", url.Values{"csrf": {tok}}), http.StatusNotFound)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// TestReadOnly: a viewer who may only look sees no button that changes
// anything, and every such POST is refused with 403 and changes nothing;
// signing out and trying a definition still work.
func TestReadOnly(t *testing.T) {
	e := newEnv(t, envOptions{auth: true, readOnly: true})
	e.collection("sub-a/rg/c", nil)
	e.job("sub-a/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	e.signIn(limitedToken)
	jp := jobPath("sub-a/rg/c", "j")
	tok := e.token(jp)
	for path, p := range map[string]page{jp: e.get(jp), collPath("sub-a/rg/c"): e.get(collPath("sub-a/rg/c")), "/": e.get("/")} {
		wantStatus(t, path, p, http.StatusOK)
		wantNotIn(t, path, p, `id="run-now"`, `id="disable"`, `id="pause-form"`, `id="backfill-form"`, `id="edit"`, `id="delete"`,
			`id="collection-disable"`, `id="collection-suspend"`, `id="new-job"`, `id="new-collection"`, `id="nav-new-job"`)
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{jp + "/run", nil}, {jp + "/disable", nil}, {jp + "/pause", url.Values{"reason": {"no"}}},
		{jp + "/delete", url.Values{"confirm": {"yes"}}}, {jp + "/backfill", url.Values{"from": {later(-time.Hour)}, "to": {later(-time.Minute)}}},
		{collPath("sub-a/rg/c") + "/suspend", nil},
	} {
		f := cloneValues(post.form)
		f.Set("csrf", tok)
		wantStatus(t, "read-only POST "+post.path, e.post(post.path, f), http.StatusForbidden)
	}
	r, _ := e.s.GetJob(ctx, "sub-a/rg/c", "j")
	c, _ := e.s.GetCollection(ctx, "sub-a/rg/c")
	if r.State != scheduler.JobEnabled || r.Status.ExecutionCount != 0 || c.Definition.State() != scheduler.CollectionEnabled {
		t.Errorf("refused requests changed the store: job %s with %d runs, collection %s", r.State, r.Status.ExecutionCount, c.Definition.State())
	}
	wantStatus(t, "try", e.post("/try", url.Values{"csrf": {tok}, "definition": {"{}"}}), http.StatusUnprocessableEntity)
	wantStatus(t, "sign out", e.post("/logout", url.Values{"csrf": {tok}}), http.StatusSeeOther)

	// The admin token of the same dashboard may change things.
	e.signIn(adminToken)
	wantIn(t, "admin", e.get(jp), `id="run-now"`, `id="pause-form"`)
}

// TestConsoleCSRF: the console's new forms refuse requests without the
// session's token and cross-site ones.
func TestConsoleCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	jp := jobPath("sub/rg/c", "j")
	tok := e.token(jp)
	for _, path := range []string{jp + "/pause", jp + "/enable", jp + "/backfill", collPath("sub/rg/c") + "/suspend"} {
		form := url.Values{"reason": {"x"}}
		wantStatus(t, "no token: "+path, e.post(path, form), http.StatusForbidden)
		form.Set("csrf", tok)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		wantStatus(t, "cross-site: "+path, e.do(req), http.StatusForbidden)
	}
	r, _ := e.s.GetJob(ctx, "sub/rg/c", "j")
	c, _ := e.s.GetCollection(ctx, "sub/rg/c")
	if r.State != scheduler.JobEnabled || c.Definition.State() != scheduler.CollectionEnabled {
		t.Errorf("refused requests changed the store: job %s, collection %s", r.State, c.Definition.State())
	}
}

// TestDurationChart: a job's page charts the attempts of its history
// page, one dot each, failed ones and faulted ones marked.
func TestDurationChart(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	e.job("c", "j", "/fail", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	e.job("c", "ok", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	for i := range 3 {
		if _, err := e.s.RunJob(ctx, "c", "ok"); err != nil {
			t.Fatal(err)
		}
		e.waitHistory("c", "ok", i+1)
	}
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
		t.Fatal(err)
	}
	e.waitHistory("c", "j", 1)
	wantNotIn(t, "one attempt", e.get(jobPath("c", "j")), `id="duration-chart"`)
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
		t.Fatal(err)
	}
	e.waitHistory("c", "j", 2)
	wantIn(t, "failed attempts", e.get(jobPath("c", "j")), `<path class="rings" d="M`, `<path class="dots dot-Failed" d="M`, "2 Failed")
	p := e.get(jobPath("c", "ok"))
	wantIn(t, "chart", p, `id="duration-chart"`, `<path class="dots dot-Completed" d="M`, "3 Completed")
	h, _ := e.s.ListHistory(ctx, "c", "ok", &scheduler.ListHistoryOptions{Top: 50})
	_, fig, _ := strings.Cut(p.body, `id="duration-chart"`)
	fig, _, _ = strings.Cut(fig, "</figure>")
	if n := strings.Count(fig, `h0`); n != len(h) || n != 3 {
		t.Errorf("the chart has %d dots for %d entries, want 3", n, len(h))
	}
}
