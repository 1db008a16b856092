package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	wantIn(t, "job page", e.get(path), `id="pause-form"`, `id="backfill-form"`, `id="edit"`)

	resume := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Minute)
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
	wantIn(t, "paused page", p, `id="paused">Paused: waiting for the &lt;vendor&gt; (until `+resume.Format("2006-01-02 15:04")+` UTC)`, `id="resume"`)
	wantNotIn(t, "paused page", p, `id="disable"`)

	// A resume time in the past and a reason too long: the Scheduler's
	// messages at REST's paths.
	bad := url.Values{"csrf": {tok}, "reason": {strings.Repeat("x", 300)}, "resumeTime": {"2001-01-01T00:00Z"}}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path+"/pause", strings.NewReader(bad.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Referer", e.srv.URL+path)
	p = e.do(req)
	wantStatus(t, "pause, bad", p, http.StatusBadRequest)
	wantIn(t, "pause, bad", p, `<a href="`+path+`" id="back">`)
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

// TestOperatingMessages: what the pages say after an action matches what
// the Scheduler does: a disabled collection's jobs run their missed
// occurrences under their run policy once it is enabled again; a job
// paused, or disabled, with a resume time is enabled again by itself at
// that time, which the message gives in UTC and in the job's zone; a
// pause with a reason but no resume time mentions none; a pause with
// neither is a disable, with the Enable button.
func TestOperatingMessages(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	cp := collPath("sub/rg/c")
	tok := e.token(cp)
	for _, op := range []string{"disable", "suspend"} {
		wantStatus(t, op, e.post(cp+"/"+op, url.Values{"csrf": {tok}}), http.StatusSeeOther)
		p := e.get(cp + "?flash=collection-" + op)
		wantIn(t, "collection "+op, p, "none of its jobs runs until it is enabled again", "decides which of the occurrences it missed run")
		wantNotIn(t, "collection "+op, p, "no occurrence is made up")
		wantStatus(t, "enable", e.post(cp+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	}

	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour", "timeZone": "Europe/Berlin"}, "startTime": "`+later(time.Hour)+`"`)
	path := jobPath("sub/rg/c", "j")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	resume := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Minute)
	both := resume.Format("2006-01-02 15:04") + " UTC (" + resume.In(berlin).Format("2006-01-02 15:04 MST") + ", Europe/Berlin)"
	wantStatus(t, "pause", e.post(path+"/pause", url.Values{"csrf": {tok}, "reason": {"vendor"}, "resumeTime": {resume.Format(time.RFC3339)}}), http.StatusSeeOther)
	p := e.get(path + "?flash=pause")
	wantIn(t, "paused with a resume time", p, "The job is paused until its resume time, "+both+": then it is enabled again by itself",
		`id="paused">Paused: vendor (until `+both+`)`, "The job is paused until "+both, `id="resume"`)
	wantStatus(t, "disable a paused job", e.post(path+"/disable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	if r, _ := e.s.GetJob(ctx, "sub/rg/c", "j"); r.Definition().ResumeTime == nil {
		t.Fatal("disabling a paused job dropped its resume time; the test expects it kept")
	}
	p = e.get(path + "?flash=disable")
	wantIn(t, "disabled with a resume time", p, "The job is disabled until its resume time, "+both+": then it is enabled again by itself")
	wantNotIn(t, "disabled with a resume time", p, "runs no more occurrences until")

	wantStatus(t, "resume", e.post(path+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	wantStatus(t, "pause with a reason only", e.post(path+"/pause", url.Values{"csrf": {tok}, "reason": {"vendor"}}), http.StatusSeeOther)
	p = e.get(path + "?flash=pause")
	wantIn(t, "paused with a reason only", p, "The job is paused: it runs no more occurrences until it is resumed.", `id="resume"`)
	wantNotIn(t, "paused with a reason only", p, "its resume time")

	wantStatus(t, "resume", e.post(path+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	wantStatus(t, "pause with nothing", e.post(path+"/pause", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	p = e.get(path + "?flash=pause")
	wantIn(t, "paused with nothing", p, "The job is disabled (paused without a reason or a resume time): it runs no more occurrences until it is enabled again.", `id="enable"`)
	wantNotIn(t, "paused with nothing", p, "resume time,", "until it is resumed", `id="resume"`)
}

// TestPauseInJobZone: the pause form of a job in Europe/Berlin says that
// its resume time is read in that zone and reads one without an offset
// there; one with an offset is that instant. A job in UTC says UTC.
func TestPauseInJobZone(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "berlin", "/ok", `"recurrence": {"frequency": "Hour", "timeZone": "Europe/Berlin"}, "startTime": "`+later(time.Hour)+`"`)
	e.job("sub/rg/c", "utc", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	wantIn(t, "Berlin job", e.get(jobPath("sub/rg/c", "berlin")), `id="pause-zone">Europe/Berlin<`, "in Europe/Berlin, the job's zone")
	wantIn(t, "UTC job", e.get(jobPath("sub/rg/c", "utc")), `id="pause-zone">UTC<`)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	day := time.Now().AddDate(0, 0, 3).In(berlin)
	wall := time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, berlin)
	tok := e.token(jobPath("sub/rg/c", "berlin"))
	for _, tc := range []struct {
		job, typed string
		want       time.Time
	}{
		{"berlin", wall.Format("2006-01-02T15:04"), wall},
		{"berlin", wall.Format("2006-01-02T15:04") + "Z", time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC)},
		{"utc", wall.Format("2006-01-02T15:04"), time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC)},
	} {
		path := jobPath("sub/rg/c", tc.job)
		wantStatus(t, "pause "+tc.typed, e.post(path+"/pause", url.Values{"csrf": {tok}, "resumeTime": {tc.typed}}), http.StatusSeeOther)
		r, err := e.s.GetJob(ctx, "sub/rg/c", tc.job)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Definition().ResumeTime; got == nil || !got.Equal(tc.want) {
			t.Errorf("%s job paused with resume time %q: resumeTime %v, want %v", tc.job, tc.typed, got, tc.want.UTC())
		}
		wantStatus(t, "resume", e.post(path+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	}
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
	// The history marks them, as the message after the backfill says.
	if n := strings.Count(e.get(path).body, `<span class="badge backfill"`); n != len(want) {
		t.Errorf("the job page marks %d history rows as backfilled, want %d", n, len(want))
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
	wantIn(t, "enabled collection", e.get(path), `id="collection-disable"`, `id="collection-suspend"`, `id="collection-edit"`, `id="new-job"`)
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

// formJob is the form of the job editor for an hourly POST at minute 15,
// with a fixed retry.
func formJob(tok, coll, name, uri string) url.Values {
	return url.Values{"csrf": {tok}, "collection": {coll}, "job": {name}, "mode": {"form"}, "definition": {""},
		"method": {"POST"}, "uri": {uri}, "headers": {"X-Team: billing\nAuthorization: Bearer s3cret"}, "body": {"hello"},
		"frequency": {"Hour"}, "interval": {"2"}, "minutes": {"15"}, "startTime": {"2026-01-05T09:00Z"},
		"retryType": {"Fixed"}, "retryInterval": {"PT1M"}, "retryCount": {"2"}}
}

func TestJobEditor(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	tok := e.token("/edit/job?collection=sub%2Frg%2Fc")
	wantIn(t, "new job page", e.get("/edit/job?collection=sub%2Frg%2Fc"), `id="job-editor"`, `<option selected>sub/rg/c</option>`, `data-refresh="0"`)

	// The form makes the definition REST would put from the same JSON.
	p := e.post("/edit/job", formJob(tok, "sub/rg/c", "j", e.recv.URL+"/ok"))
	wantStatus(t, "create", p, http.StatusSeeOther)
	got, err := e.s.GetJob(ctx, "sub/rg/c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if errs := e.rest("PUT", restJobs+"k", `{"properties": {"startTime": "2026-01-05T09:00Z",
		"action": {"type": "Http", "request": {"method": "POST", "uri": "`+e.recv.URL+`/ok", "body": "hello", "headers": {"X-Team": "billing", "Authorization": "Bearer s3cret"}},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}},
		"recurrence": {"frequency": "Hour", "interval": 2, "schedule": {"minutes": [15]}}}}`); errs != nil {
		t.Fatal(errs)
	}
	want, _ := e.s.GetJob(ctx, "sub/rg/c", "k")
	if diff := cmp.Diff(want.Definition(), got.Definition()); diff != "" {
		t.Errorf("the form's job differs from REST's (-REST +form):\n%s", diff)
	}

	// The same name again is refused, not overwritten.
	p = e.post("/edit/job", formJob(tok, "sub/rg/c", "j", e.recv.URL+"/other"))
	wantStatus(t, "create again", p, http.StatusConflict)
	wantIn(t, "create again", p, `already exists in sub/rg/c`)

	// Bad values: REST's messages at REST's paths, and what was typed
	// stays in the form.
	bad := formJob(tok, "sub/rg/c", "bad", "ftp://example.com/x")
	bad.Set("interval", "two")
	bad.Set("minutes", "15, 75")
	bad.Set("retryInterval", "soon")
	p = e.post("/edit/job", bad)
	wantStatus(t, "bad form", p, http.StatusBadRequest)
	sameProblems(t, "bad form", p, e.rest("PUT", restJobs+"bad", `{"properties": {"startTime": "2026-01-05T09:00Z",
		"action": {"type": "Http", "request": {"method": "POST", "uri": "ftp://example.com/x", "body": "hello", "headers": {"X-Team": "billing", "Authorization": "Bearer s3cret"}},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "soon", "retryCount": 2}},
		"recurrence": {"frequency": "Hour", "interval": "two", "schedule": {"minutes": [15, 75]}}}}`))
	wantIn(t, "bad form", p, `value="two"`, `value="15, 75"`)
	if _, err := e.s.GetJob(ctx, "sub/rg/c", "bad"); err == nil {
		t.Error("a refused job was stored")
	}

	// Editing: the secret shows hidden and, left so, keeps its value;
	// the JSON editor's members the form does not cover are kept.
	edit := e.get("/edit/job?collection=sub%2Frg%2Fc&job=j")
	wantIn(t, "edit page", edit, "Authorization: ••••••", `name="etag" value="`+got.ETag+`"`)
	wantNotIn(t, "edit page", edit, "s3cret", `aria-current="page" id="nav-new-job"`)
	wantIn(t, "new job page", e.get("/edit/job"), `aria-current="page" id="nav-new-job"`)
	f := formJob(tok, "sub/rg/c", "j", e.recv.URL+"/ok")
	f.Set("etag", got.ETag)
	f.Set("headers", "X-Team: billing\nAuthorization: ••••••")
	f.Set("interval", "3")
	f.Set("definition", `{"action": {"type": "Http", "request": {"uri": "x"}, "errorAction": {"type": "Http", "request": {"uri": "`+e.recv.URL+`/err", "method": "POST"}}},
		"recurrence": {"frequency": "Hour", "timeZone": "Europe/Berlin"}}`)
	p = e.post("/edit/job", f)
	wantStatus(t, "edit", p, http.StatusSeeOther)
	after, _ := e.s.GetJob(ctx, "sub/rg/c", "j")
	a := after.Definition()
	if a.Action.Request.Headers["Authorization"] != "Bearer s3cret" || a.Recurrence.Interval != 3 || a.Action.ErrorAction == nil || a.Recurrence.TimeZone != "Europe/Berlin" {
		t.Errorf("after edit: headers %v, interval %d, errorAction %v, timeZone %q", a.Action.Request.Headers, a.Recurrence.Interval, a.Action.ErrorAction, a.Recurrence.TimeZone)
	}

	// A stale ETag: somebody saved in between.
	p = e.post("/edit/job", f)
	wantStatus(t, "stale", p, http.StatusConflict)
	wantIn(t, "stale", p, "The job changed since you opened it")

	// The JSON editor alone.
	j := url.Values{"csrf": {tok}, "collection": {"sub/rg/c"}, "job": {"raw"}, "mode": {"json"},
		"definition": {`{"action": {"type": "Http", "request": {"uri": "` + e.recv.URL + `/ok", "method": "GET"}}, "recurrence": {"frequency": "Day", "schedule": {"hours": [25]}}}`}}
	p = e.post("/edit/job", j)
	sameProblems(t, "JSON editor", p, e.rest("PUT", restJobs+"raw", `{"properties": `+j.Get("definition")+`}`))
	j.Set("definition", strings.Replace(j.Get("definition"), `"hours": [25]`, `"hours": [5]`, 1))
	wantStatus(t, "JSON editor, fixed", e.post("/edit/job", j), http.StatusSeeOther)
	if r, err := e.s.GetJob(ctx, "sub/rg/c", "raw"); err != nil || r.Definition().Recurrence.Schedule.Hours[0] != 5 {
		t.Errorf("the JSON editor's job: %v, %v", r, err)
	}
}

// TestJobEditorKeepsTags: saving the editor's form keeps the job's tags,
// which it does not show; the JSON editor given a whole resource with
// "tags" replaces them.
func TestJobEditorKeepsTags(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	job := e.job("sub/rg/c", "j", "/ok", "").Job
	r, err := e.s.PutJob(ctx, "sub/rg/c", "j", job, &scheduler.PutJobOptions{Tags: map[string]string{"team": "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := e.token("/edit/job?collection=sub%2Frg%2Fc&job=j")
	f := formJob(tok, "sub/rg/c", "j", e.recv.URL+"/ok")
	f.Set("etag", r.ETag)
	wantStatus(t, "edit", e.post("/edit/job", f), http.StatusSeeOther)
	after, err := e.s.GetJob(ctx, "sub/rg/c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "ops"}, after.Tags); diff != "" || after.Definition().Recurrence == nil {
		t.Errorf("tags after saving the form (-want +got):\n%s", diff)
	}
	j := url.Values{"csrf": {tok}, "collection": {"sub/rg/c"}, "job": {"j"}, "mode": {"json"}, "etag": {after.ETag},
		"definition": {`{"tags": {"team": "web"}, "properties": {"action": {"type": "Http", "request": {"uri": "` + e.recv.URL + `/ok", "method": "GET"}}}}`}}
	wantStatus(t, "JSON edit", e.post("/edit/job", j), http.StatusSeeOther)
	if after, _ := e.s.GetJob(ctx, "sub/rg/c", "j"); !maps.Equal(after.Tags, map[string]string{"team": "web"}) {
		t.Errorf("tags after the JSON editor's resource = %v, want team: web", after.Tags)
	}
}

func TestDraft(t *testing.T) {
	e := newEnv(t, envOptions{})
	tok := e.token("/edit/job")
	draft := func(f url.Values) map[string]any {
		t.Helper()
		f.Set("csrf", tok)
		p := e.post("/draft", f)
		wantStatus(t, "draft", p, http.StatusOK)
		var out map[string]any
		if err := json.Unmarshal([]byte(p.body), &out); err != nil {
			t.Fatalf("draft answers %s: %v", p.body, err)
		}
		return out
	}
	a := draft(url.Values{"mode": {"json"}, "definition": {`{"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}},
		"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [9], "minutes": [30]}}}`}})
	next, _ := a["next"].([]any)
	if a["schedule"] != "every week on Monday at 09:30 (UTC)" || len(next) != 5 || !strings.HasSuffix(next[4].(map[string]any)["utc"].(string), " 09:30 UTC") {
		t.Errorf("draft of a valid job: %v", a)
	}
	if f, _ := a["form"].(map[string]any); f == nil || f["Hours"] != "9" || f["Frequency"] != "Week" || f["Method"] != "GET" {
		t.Errorf("draft's form fields: %v", a["form"])
	}
	a = draft(url.Values{"mode": {"form"}, "uri": {"http://x/"}, "method": {"GET"}, "frequency": {"Day"}, "hours": {"9, 99"}, "headers": {"no colon here"}})
	var paths []string
	for _, p := range a["problems"].([]any) {
		paths = append(paths, p.(map[string]any)["path"].(string))
	}
	slices.Sort(paths)
	if diff := cmp.Diff([]string{"properties.action.request.headers", "properties.recurrence.schedule.hours[1]"}, paths); diff != "" {
		t.Errorf("draft problems' paths (-want +got):\n%s", diff)
	}
	if d, _ := a["definition"].(string); !strings.Contains(d, `"hours": [`) {
		t.Errorf("draft definition: %q", d)
	}
	a = draft(url.Values{"mode": {"json"}, "definition": {`{"action": `}})
	if ps := a["problems"].([]any); len(ps) != 1 || !strings.Contains(ps[0].(map[string]any)["message"].(string), "is not valid JSON") {
		t.Errorf("draft of broken JSON: %v", a)
	}
}

func TestCollectionEditor(t *testing.T) {
	e := newEnv(t, envOptions{auth: true})
	e.signIn(limitedToken)
	tok := e.token("/edit/collection")
	form := url.Values{"csrf": {tok}, "name": {"sub-a/rg/new"}, "location": {"West Europe"}, "plan": {"P10Premium"}, "state": {"Enabled"},
		"maxJobCount": {"7"}, "maxRecurrenceFrequency": {"Minute"}, "maxRecurrenceInterval": {"5"}}
	wantStatus(t, "create", e.post("/edit/collection", form), http.StatusSeeOther)
	c, err := e.s.GetCollection(ctx, "sub-a/rg/new")
	if err != nil {
		t.Fatal(err)
	}
	if c.Definition.Plan() != scheduler.SKUP10Premium || c.Definition.MaxJobCount() != 7 || c.Definition.MaxRecurrence().Interval != 5 || c.Definition.Location != "West Europe" {
		t.Errorf("created collection: %+v", c.Definition)
	}
	// Outside the token's subscriptions: refused, nothing made.
	other := cloneValues(form)
	other.Set("name", "sub-b/rg/new")
	p := e.post("/edit/collection", other)
	wantStatus(t, "other subscription", p, http.StatusForbidden)
	if _, err := e.s.GetCollection(ctx, "sub-b/rg/new"); err == nil {
		t.Error("a collection outside the token's subscriptions was made")
	}
	// Bad values: the Scheduler's messages at their paths.
	bad := cloneValues(form)
	bad.Set("name", "sub-a/rg/bad")
	bad.Set("plan", "Gold")
	bad.Set("maxJobCount", "-3")
	p = e.post("/edit/collection", bad)
	wantStatus(t, "bad", p, http.StatusBadRequest)
	_, perr := scheduler.ParseCollection([]byte(`{"location": "West Europe", "properties": {"sku": {"name": "Gold"}, "state": "Enabled", "quota": {"maxJobCount": -3, "maxRecurrence": {"frequency": "Minute", "interval": 5}}}}`))
	var want []string
	for _, ve := range scheduler.ValidationErrors(perr) {
		want = append(want, ve.Path+" | "+ve.Path+": "+strings.TrimSpace(ve.Value+" "+ve.Reason))
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, problems(p)); len(want) == 0 || diff != "" {
		t.Errorf("bad collection's problems (-ParseCollection +dashboard):\n%s", diff)
	}
	// Editing keeps the tags and limits it does not show.
	if _, err := e.s.PatchCollection(ctx, "sub-a/rg/new", []byte(`{"tags": {"team": "billing"}, "properties": {"limits": [{"key": "host", "maxConcurrent": 2}]}}`), nil); err != nil {
		t.Fatal(err)
	}
	c, _ = e.s.GetCollection(ctx, "sub-a/rg/new")
	edit := e.get("/edit/collection?name=sub-a%2Frg%2Fnew")
	wantIn(t, "edit page", edit, `value="7"`, `<option selected>P10Premium</option>`)
	form.Set("etag", c.ETag)
	form.Set("state", "Suspended")
	wantStatus(t, "edit", e.post("/edit/collection", form), http.StatusSeeOther)
	c, _ = e.s.GetCollection(ctx, "sub-a/rg/new")
	if c.Definition.State() != scheduler.CollectionSuspended || c.Definition.Tags["team"] != "billing" {
		t.Errorf("after edit: state %s, tags %v", c.Definition.State(), c.Definition.Tags)
	}
	if want := []scheduler.Limit{{Key: scheduler.LimitHost, MaxConcurrent: 2}}; !slices.Equal(c.Definition.Properties.Limits, want) {
		t.Errorf("after edit: limits %v, want %v kept", c.Definition.Properties.Limits, want)
	}
	// A quota below what the collection holds: refused in words, without
	// the Go error's prefix.
	for _, name := range []string{"a", "b"} {
		e.job("sub-a/rg/new", name, "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	}
	form.Set("etag", c.ETag)
	form.Set("maxJobCount", "1")
	p = e.post("/edit/collection", form)
	wantStatus(t, "quota below the jobs", p, http.StatusConflict)
	wantIn(t, "quota below the jobs", p, "Not saved: the collection sub-a/rg/new would exceed its maxJobCount quota (1): ")
	wantNotIn(t, "quota below the jobs", p, "scheduler:")
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// TestReadOnly: a viewer who may only look (by Options.ReadOnly, or by
// its token's mark in the token list) sees no button that changes
// anything, and every such POST is refused with 403 and changes nothing;
// signing out, trying a definition and the draft check still work.
func TestReadOnly(t *testing.T) {
	for name, o := range map[string]envOptions{
		"Options.ReadOnly":            {auth: true, readOnly: true},
		"read-only in the token list": {auth: true, readOnlyToken: true},
	} {
		t.Run(name, func(t *testing.T) { testReadOnly(t, o) })
	}
}

func testReadOnly(t *testing.T, o envOptions) {
	e := newEnv(t, o)
	e.collection("sub-a/rg/c", nil)
	e.job("sub-a/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	e.signIn(limitedToken)
	jp := jobPath("sub-a/rg/c", "j")
	tok := e.token(jp)
	for path, p := range map[string]page{jp: e.get(jp), collPath("sub-a/rg/c"): e.get(collPath("sub-a/rg/c")), "/": e.get("/")} {
		wantStatus(t, path, p, http.StatusOK)
		wantNotIn(t, path, p, `id="run-now"`, `id="disable"`, `id="pause-form"`, `id="backfill-form"`, `id="edit"`, `id="delete"`,
			`id="collection-disable"`, `id="collection-suspend"`, `id="collection-delete"`, `id="new-job"`, `id="new-collection"`, `id="nav-new-job"`)
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{jp + "/run", nil}, {jp + "/disable", nil}, {jp + "/pause", url.Values{"reason": {"no"}}},
		{jp + "/delete", url.Values{"confirm": {"yes"}}}, {jp + "/backfill", url.Values{"from": {later(-time.Hour)}, "to": {later(-time.Minute)}}},
		{jp + "/retry", url.Values{"expected": {later(-time.Hour)}}}, {jp + "/retry", url.Values{"manual": {"1"}}},
		{collPath("sub-a/rg/c") + "/delete", url.Values{"confirm": {"yes"}}},
		{collPath("sub-a/rg/c") + "/suspend", nil}, {"/edit/job", formJob("", "sub-a/rg/c", "new", e.recv.URL)},
		{"/edit/collection", url.Values{"name": {"sub-a/rg/d"}, "plan": {"Standard"}}},
	} {
		f := cloneValues(post.form)
		f.Set("csrf", tok)
		wantStatus(t, "read-only POST "+post.path, e.post(post.path, f), http.StatusForbidden)
	}
	wantStatus(t, "read-only editor", e.get("/edit/job"), http.StatusForbidden)
	r, _ := e.s.GetJob(ctx, "sub-a/rg/c", "j")
	c, _ := e.s.GetCollection(ctx, "sub-a/rg/c")
	if r.State != scheduler.JobEnabled || r.Status.ExecutionCount != 0 || c.Definition.State() != scheduler.CollectionEnabled {
		t.Errorf("refused requests changed the store: job %s with %d runs, collection %s", r.State, r.Status.ExecutionCount, c.Definition.State())
	}
	if _, err := e.s.GetJob(ctx, "sub-a/rg/c", "new"); err == nil {
		t.Error("a read-only viewer created a job")
	}
	wantStatus(t, "draft", e.post("/draft", url.Values{"csrf": {tok}, "mode": {"json"}, "definition": {"{}"}}), http.StatusOK)
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
	for _, path := range []string{jp + "/pause", jp + "/enable", jp + "/backfill", jp + "/retry", collPath("sub/rg/c") + "/suspend", collPath("sub/rg/c") + "/delete", "/edit/job", "/edit/collection", "/draft"} {
		form := formJob("", "sub/rg/c", "other", e.recv.URL)
		form.Set("name", "sub/rg/d")
		form.Set("reason", "x")
		form.Set("confirm", "yes")
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
	for _, name := range []string{"other"} {
		if _, err := e.s.GetJob(ctx, "sub/rg/c", name); err == nil {
			t.Errorf("a refused request created job %s", name)
		}
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/d"); err == nil {
		t.Error("a refused request created a collection")
	}
}

var searchRowPattern = regexp.MustCompile(`class="job-link">([^<]+)</a>[^\n]*</td>\s*<td><a href="[^"]+">([^<]+)</a>`)

// found returns the "collection/job" rows of a search page.
func found(p page) []string {
	var out []string
	for _, m := range searchRowPattern.FindAllStringSubmatch(p.body, -1) {
		out = append(out, html.UnescapeString(m[2])+" "+html.UnescapeString(m[1]))
	}
	return out
}

func TestSearch(t *testing.T) {
	e := newEnv(t, envOptions{auth: true})
	for _, c := range []string{"sub-a/rg/one", "sub-a/rg/two", "sub-b/rg/three"} {
		e.collection(c, nil)
	}
	future := `"recurrence": {"frequency": "Hour"}, "startTime": "` + later(time.Hour) + `"`
	for i := range 30 {
		e.job("sub-a/rg/one", "report-"+pad(i), "/ok", future)
		e.job("sub-a/rg/two", "Report-"+pad(i), "/ok", future)
	}
	e.job("sub-a/rg/two", "cleanup", "/ok", future)
	e.job("sub-a/rg/two", "paused-report", "/ok", future+`, "state": "Disabled", "stateReason": "vendor down"`)
	e.job("sub-b/rg/three", "report-b", "/ok", future)
	e.job("sub-a/rg/one", "failing-report", "/fail", "")
	e.waitHistory("sub-a/rg/one", "failing-report", 1)

	e.signIn(adminToken)
	p := e.get("/search?name=REPORT&top=25")
	wantStatus(t, "search", p, http.StatusOK)
	rows := found(p)
	if len(rows) != 25 || rows[0] != "sub-a/rg/one failing-report" || rows[1] != "sub-a/rg/one report-000" {
		t.Errorf("first page: %d rows %v", len(rows), rows)
	}
	wantIn(t, "first page", p, `rel="next"`)
	var all []string
	for skip := 0; ; skip += 25 {
		p := e.get("/search?name=REPORT&top=25&skip=" + strconv.Itoa(skip))
		all = append(all, found(p)...)
		if !strings.Contains(p.body, `rel="next"`) {
			break
		}
	}
	if len(all) != 63 || all[62] != "sub-b/rg/three report-b" || slices.Contains(all, "sub-a/rg/two cleanup") {
		t.Errorf("every page: %d rows, last %q", len(all), all[len(all)-1])
	}
	if got := found(e.get("/search?name=report&state=Disabled")); !slices.Equal(got, []string{"sub-a/rg/two paused-report"}) {
		t.Errorf("Disabled: %v", got)
	}
	wantIn(t, "Disabled", e.get("/search?state=Disabled"), "Paused: vendor down")
	if got := found(e.get("/search?health=Failing")); !slices.Equal(got, []string{"sub-a/rg/one failing-report"}) {
		t.Errorf("Failing: %v", got)
	}
	wantStatus(t, "bad health", e.get("/search?health=Sick"), http.StatusBadRequest)
	p = e.get("/search?name=nothing-like-it")
	wantIn(t, "nothing", p, `id="no-results"`, `data-refresh="0"`)

	// A token for sub-a finds nothing of sub-b.
	e.signIn(limitedToken)
	if got := found(e.get("/search?name=report-b")); len(got) != 0 {
		t.Errorf("the sub-a token found %v", got)
	}
}

// TestSearchByTag: the tag parameter (name, or name=value) keeps the jobs
// with that tag in every collection the viewer sees, the store filtering
// them; rows and job pages show the tags, and the form keeps the filter.
func TestSearchByTag(t *testing.T) {
	e := newEnv(t, envOptions{auth: true})
	for _, c := range []string{"sub-a/rg/one", "sub-b/rg/three"} {
		e.collection(c, nil)
	}
	future := `"recurrence": {"frequency": "Hour"}, "startTime": "` + later(time.Hour) + `"`
	tagged := func(coll, name string, tags map[string]string) {
		t.Helper()
		job := e.job(coll, name, "/ok", future).Job
		if _, err := e.s.PutJob(ctx, coll, name, job, &scheduler.PutJobOptions{Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	tagged("sub-a/rg/one", "nightly", map[string]string{"team": "ops", "tier": "gold"})
	tagged("sub-a/rg/one", "hourly", map[string]string{"team": "web"})
	tagged("sub-a/rg/one", "adhoc", map[string]string{"manual": ""})
	e.job("sub-a/rg/one", "untagged", "/ok", future)
	tagged("sub-b/rg/three", "b-nightly", map[string]string{"team": "ops"})

	e.signIn(adminToken)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"by name", "tag=team", []string{"sub-a/rg/one hourly", "sub-a/rg/one nightly", "sub-b/rg/three b-nightly"}},
		{"by value", "tag=team%3Dops", []string{"sub-a/rg/one nightly", "sub-b/rg/three b-nightly"}},
		{"spaces dropped", "tag=+team+%3D+ops+", []string{"sub-a/rg/one nightly", "sub-b/rg/three b-nightly"}},
		{"an empty value found by the name", "tag=manual", []string{"sub-a/rg/one adhoc"}},
		{"a value is exact", "tag=team%3DOps", nil},
		{"with a name", "name=b-&tag=team%3Dops", []string{"sub-b/rg/three b-nightly"}},
		{"with a state", "state=Enabled&tag=tier%3Dgold", []string{"sub-a/rg/one nightly"}},
	} {
		if got := found(e.get("/search?" + tc.query)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: /search?%s found %v, want %v", tc.name, tc.query, got, tc.want)
		}
	}
	p := e.get("/search?tag=team%3Dops")
	wantIn(t, "a tag search", p, `id="search-tag" value="team=ops"`, `<span class="tag">team: ops</span> <span class="tag">tier: gold</span>`)
	wantIn(t, "job page", e.get(jobPath("sub-a/rg/one", "nightly")), `<dd id="tags"><span class="tag">team: ops</span> <span class="tag">tier: gold</span>`)
	wantNotIn(t, "an untagged job's page", e.get(jobPath("sub-a/rg/one", "untagged")), `id="tags"`)

	p = e.get("/search?tag=%3Dops")
	wantStatus(t, "a value without a name", p, http.StatusBadRequest)
	wantIn(t, "a value without a name", p, `tag=&#34;=ops&#34; names no tag`)

	// A token for sub-a finds nothing of sub-b.
	e.signIn(limitedToken)
	if got := found(e.get("/search?tag=team%3Dops")); !slices.Equal(got, []string{"sub-a/rg/one nightly"}) {
		t.Errorf("the sub-a token found %v", got)
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

// TestDraftCalendar: the editor's draft of a job naming an exclusion
// calendar lists its next occurrences under its collection's calendar
// (the excluded day left out), refuses a calendar the collection does not
// have at recurrence.calendar, and the try page, which has no collection,
// says the calendar is not applied.
func TestDraftCalendar(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	e.calendar("c", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-03"]}}`, year))
	tok := e.token("/edit/job")
	def := func(calendar string) string {
		return fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}}, "startTime": "%d-01-01T00:00:00Z",
			"recurrence": {"frequency": "Day", "calendar": %q}}`, year, calendar)
	}
	draft := func(calendar string) map[string]any {
		t.Helper()
		p := e.post("/draft", url.Values{"csrf": {tok}, "collection": {"c"}, "job": {"j"}, "mode": {"json"}, "definition": {def(calendar)}})
		wantStatus(t, "draft", p, http.StatusOK)
		var out map[string]any
		if err := json.Unmarshal([]byte(p.body), &out); err != nil {
			t.Fatalf("draft answers %s: %v", p.body, err)
		}
		return out
	}
	var days []string
	for _, n := range draft("hol")["next"].([]any) {
		days = append(days, n.(map[string]any)["utc"].(string)[:10])
	}
	d := func(n int) string { return fmt.Sprintf("%d-01-%02d", year, n) }
	if diff := cmp.Diff([]string{d(1), d(2), d(4), d(5), d(6)}, days); diff != "" {
		t.Errorf("draft's next days under the calendar (-want +got):\n%s", diff)
	}
	ps, _ := draft("nope")["problems"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["path"] != "properties.recurrence.calendar" {
		t.Errorf("draft naming a calendar the collection does not have: problems %v, want one at properties.recurrence.calendar", ps)
	}
	p := e.post("/try", url.Values{"csrf": {e.token("/try")}, "definition": {def("hol")}})
	wantStatus(t, "try", p, http.StatusOK)
	wantIn(t, "try", p, "these are its occurrences without it")
}

// TestDraftOtherTenant: the draft check of a viewer whose token reaches
// sub-a only answers 404 for a collection of sub-b, whether it exists or
// not, as every page does: it neither lists occurrences under sub-b's
// calendar nor tells which of its collections exist.
func TestDraftOtherTenant(t *testing.T) {
	e := newEnv(t, envOptions{auth: true})
	e.collection("sub-a/rg/c", nil)
	e.collection("sub-b/rg2/priv", nil)
	year := time.Now().Year() + 1
	e.calendar("sub-b/rg2/priv", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-03"]}}`, year))
	e.signIn(limitedToken)
	tok := e.token("/edit/job")
	def := fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}}, "startTime": "%d-01-01T00:00:00Z",
		"recurrence": {"frequency": "Day", "calendar": "hol"}}`, year)
	draft := func(collection string) page {
		return e.post("/draft", url.Values{"csrf": {tok}, "collection": {collection}, "job": {"secret"}, "mode": {"json"}, "definition": {def}})
	}
	priv, none := draft("sub-b/rg2/priv"), draft("sub-b/rg2/nonexist")
	wantStatus(t, "draft in another tenant's collection", priv, http.StatusNotFound)
	wantStatus(t, "draft in another tenant's missing collection", none, http.StatusNotFound)
	wantNotIn(t, "draft in another tenant's collection", priv, `"next"`, fmt.Sprintf("%d-01-02", year))
	wantNotIn(t, "draft in another tenant's missing collection", none, "not found", "is not a calendar")
	mainOf := func(p page) string {
		_, m, _ := strings.Cut(p.body, "<main")
		m, _, _ = strings.Cut(m, "</main>")
		return m
	}
	if a, b := mainOf(priv), mainOf(none); a == "" || a != b {
		t.Errorf("the answers for an existing and a missing collection of another tenant differ:\n%s\n---\n%s", a, b)
	}
	// The viewer's own collection and no collection at all still answer.
	wantStatus(t, "draft in the viewer's collection", draft("sub-a/rg/c"), http.StatusOK)
	wantStatus(t, "draft without a collection", draft(""), http.StatusOK)
}

// TestLastRunAfterPut: a job whose last attempt failed, with its retry
// dropped by a put of a changed definition, shows that run as failed on
// its page and in its collection's table, not as succeeded: the outcome
// comes from the history, not from the schedule the put reset.
func TestLastRunAfterPut(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	def := []byte(`{"action": {"type": "Http", "request": {"uri": "` + e.recv.URL + `/fail", "method": "POST"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1H", "retryCount": 3}},
		"recurrence": {"frequency": "Hour", "interval": 1}, "startTime": "` + later(time.Hour) + `"}`)
	if _, err := e.s.PutJobJSON(ctx, "c", "j", def, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
		t.Fatal(err)
	}
	e.waitHistory("c", "j", 1)
	for {
		r, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Schedule.Current; c != nil && c.Retry > 0 {
			break // the first attempt ended, its retry is pending
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantIn(t, "job page while retrying", e.get(jobPath("c", "j")), `class="last-running">retrying (retry 1)`)
	changed := bytes.Replace(def, []byte(`"retryCount": 3`), []byte(`"retryCount": 2`), 1)
	if _, err := e.s.PutJobJSON(ctx, "c", "j", changed, nil); err != nil {
		t.Fatal(err)
	}
	for what, p := range map[string]page{"job page": e.get(jobPath("c", "j")), "collection page": e.get(collPath("c"))} {
		wantIn(t, what+" after the put", p, `class="last-failed">failed`)
		wantNotIn(t, what+" after the put", p, `class="last-succeeded"`)
	}
}
