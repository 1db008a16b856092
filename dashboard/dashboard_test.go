package dashboard_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

func TestOverview(t *testing.T) {
	e := newEnv(t, envOptions{prefix: "/ui"})
	e.collection("sub-a/rg/reports", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}})
	e.collection("sub-b/rg/other", nil)
	e.job("sub-a/rg/reports", "ok", "/ok", "")
	e.job("sub-a/rg/reports", "broken", "/fail", "")
	e.job("sub-b/rg/other", "later", "/ok", `"startTime": "`+later(time.Hour)+`"`)
	e.waitHistory("sub-a/rg/reports", "ok", 1)
	e.waitHistory("sub-a/rg/reports", "broken", 1)

	p := e.get("/")
	wantStatus(t, "overview", p, http.StatusOK)
	wantIn(t, "overview", p,
		"sub-a/rg/reports", "Free", "2 / 5", // plan and quota use
		"sub-b/rg/other", "1 / 50",
		`<span class="num">3</span> jobs`, `<span class="num">1</span> Completed`, `<span class="num">1</span> Faulted`,
		"due, not started", // the backlog: every collection is visible
		"Last hour", "Last day", "2 occurrences, 2 attempts", "1 failed", "1 faulted",
		"Latest faulted occurrences", "broken on purpose", // the faulted occurrence, its message
	)
	if n := strings.Count(p.body, `<rect class="occ"`); n != 60+48 {
		t.Errorf("the charts have %d bars, want 60 and 48", n)
	}
	// The cards lead to the jobs they count.
	wantIn(t, "overview cards", p, `<a class="card state-Faulted" href="/ui/search?state=Faulted" id="card-Faulted">`,
		`<a class="card state-Disabled" href="/ui/search?state=Disabled" id="card-Disabled">`, `<a class="card" href="/ui/search" id="card-all">`)
	if f := e.get("/search?state=Faulted"); !strings.Contains(f.body, ">broken<") || strings.Contains(f.body, ">ok<") {
		t.Errorf("the Faulted card's search does not list the faulted job alone:\n%s", f.body)
	}

	// Sorting is in the query string and orders the table.
	p = e.get("/?sort=jobs&order=desc")
	if a, b := strings.Index(p.body, ">sub-a/rg/reports<"), strings.Index(p.body, ">sub-b/rg/other<"); a < 0 || b < 0 || a > b {
		t.Errorf("sorted by jobs, descending: sub-a (2 jobs) at %d, sub-b (1) at %d; want sub-a first", a, b)
	}
	wantIn(t, "sorted", p, `aria-sort="descending"`)
	p = e.get("/?sort=jobs")
	if a, b := strings.Index(p.body, ">sub-a/rg/reports<"), strings.Index(p.body, ">sub-b/rg/other<"); a < b {
		t.Errorf("sorted by jobs, ascending: sub-b should come first")
	}
}

func TestCollectionPage(t *testing.T) {
	e := newEnv(t, envOptions{prefix: "/ui"})
	quota := &scheduler.Quota{MaxJobCount: 200}
	e.collection("c", &scheduler.JobCollection{Location: "West Europe", Tags: map[string]string{"team": "ops"},
		Properties: scheduler.CollectionProperties{Quota: quota}})
	// From the first Monday of January next year, 09:00 in Berlin (CET).
	year := time.Now().Year() + 1
	monday := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	for monday.Weekday() != time.Monday {
		monday = monday.AddDate(0, 0, 1)
	}
	future := `"startTime": "` + monday.Format(time.RFC3339) + `", "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [9], "minutes": [0]}, "timeZone": "Europe/Berlin"}`
	for i := range 120 {
		e.job("c", "job-"+pad(i), "/ok", future)
	}
	if _, err := e.s.DisableJob(ctx, "c", "job-007"); err != nil {
		t.Fatal(err)
	}

	p := e.get(collPath("c"))
	wantStatus(t, "collection", p, http.StatusOK)
	wantIn(t, "collection", p, "West Europe", "team: ops", "120 of at most 200",
		"Jobs 1–50 of 120", "job-000", "job-049",
		"every week on Monday at 09:00 (Europe/Berlin)",                                    // the schedule in words
		monday.Format("2006-01-02")+" 08:00 UTC", monday.Format("2006-01-02")+" 09:00 CET", // the next run in UTC and in the job's zone
		"POST http://127.0.0.1", "never ran",
		`Disabled <span class="count">1</span>`, `Enabled <span class="count">119</span>`)
	wantNotIn(t, "collection", p, "job-050")

	p = e.get(collPath("c") + "?skip=100")
	wantIn(t, "page 3", p, "Jobs 101–120 of 120", "job-100", "job-119", `rel="prev"`)
	wantNotIn(t, "page 3", p, "job-099", `rel="next"`)

	p = e.get(collPath("c") + "?state=Disabled")
	wantIn(t, "filter", p, "Jobs 1–1 of 1", "job-007", `aria-current="true" class="active">Disabled`)
	wantNotIn(t, "filter", p, "job-006")

	// Sorted, the pages follow the order across all the jobs.
	p = e.get(collPath("c") + "?top=25&sort=name&order=desc")
	if a, b := strings.Index(p.body, ">job-119<"), strings.Index(p.body, ">job-095<"); a < 0 || b < 0 || a > b {
		t.Errorf("name descending: job-119 at %d, job-095 at %d; want job-119 first", a, b)
	}
	wantIn(t, "page size", p, "Jobs 1–25 of 120")
	wantNotIn(t, "name descending", p, ">job-094<", ">job-024<")
	p = e.get(collPath("c") + "?top=25&sort=name&order=desc&skip=100")
	if a, b := strings.Index(p.body, ">job-019<"), strings.Index(p.body, ">job-000<"); a < 0 || b < 0 || a > b {
		t.Errorf("name descending, last page: job-019 at %d, job-000 at %d; want job-019 first", a, b)
	}
	wantIn(t, "name descending, last page", p, "Jobs 101–120 of 120")

	for _, bad := range []string{"?state=Sleeping", "?skip=-1", "?top=7", "?skip=x"} {
		wantStatus(t, "collection"+bad, e.get(collPath("c")+bad), http.StatusBadRequest)
	}
	wantStatus(t, "missing collection", e.get(collPath("nope")), http.StatusNotFound)
}

func pad(i int) string { return fmt.Sprintf("%03d", i) }

func TestJobPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	// Daily at 02:30 in New York from 5 March next year: on the second
	// Sunday of March the clocks go forward and 02:30 does not exist.
	year := time.Now().Year() + 1
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	change := time.Date(year, 3, 8, 0, 0, 0, 0, ny)
	for change.Weekday() != time.Sunday {
		change = change.AddDate(0, 0, 1)
	}
	day := func(d time.Time) string { return d.Format("2006-01-02") }
	e.job("c", "nightly", "/ok", fmt.Sprintf(`"startTime": "%d-03-05T00:00:00-05:00", "recurrence": {"frequency": "Day", "schedule": {"hours": [2], "minutes": [30]}, "timeZone": "America/New_York"}`, year))
	p := e.get(jobPath("c", "nightly"))
	wantStatus(t, "job", p, http.StatusOK)
	wantIn(t, "job", p, "Runs every day at 02:30 (America/New_York; 02:30 runs at 03:30 when clocks go forward).",
		fmt.Sprintf("%d-03-05 07:30 UTC", year), fmt.Sprintf("%d-03-05 02:30 EST", year), // first occurrence in both zones
		day(change)+" 07:30 UTC", day(change)+" 03:30 EDT", "moved: its time did not exist that day",
		day(change.AddDate(0, 0, 1))+" 06:30 UTC", day(change.AddDate(0, 0, 1))+" 02:30 EDT",
		`id="run-now"`, `id="disable"`, "No history")
	if n := strings.Count(p.body, `<td class="num">`); n < 20 {
		t.Errorf("job page lists %d numbered cells, want 20 occurrences", n)
	}
	if n := strings.Count(p.body, `class="shifted"`); n != 1 {
		t.Errorf("%d rows marked as moved by daylight saving time, want 1", n)
	}
	// Every 24 hours in elapsed time: after the change the runs are an
	// hour later on the clock, which the table says.
	e.job("c", "elapsed", "/ok", fmt.Sprintf(`"startTime": "%d-03-05T00:30:00-05:00", "recurrence": {"frequency": "Hour", "interval": 24, "timeZone": "America/New_York"}`, year))
	p = e.get(jobPath("c", "elapsed"))
	wantIn(t, "elapsed", p, "Runs every 24 hours at minute 30", day(change.AddDate(0, 0, 1))+" 01:30 EDT", "clocks changed before this run (UTC-04:00)")
	wantNotIn(t, "elapsed", p, `class="shifted"`)

	// Every 30 minutes on the first Sunday of November, when the clocks go
	// back: the cadence goes on through both passes of 01:00-01:59, and
	// the second pass is marked.
	back := time.Date(year, 11, 1, 0, 0, 0, 0, ny)
	for back.Weekday() != time.Sunday {
		back = back.AddDate(0, 0, 1)
	}
	e.job("c", "halfhourly", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Hour", "schedule": {"minutes": [0, 30]}, "timeZone": "America/New_York"}`, back.Format(time.RFC3339)))
	p = e.get(jobPath("c", "halfhourly"))
	wantIn(t, "halfhourly", p, "Runs every 30 minutes (America/New_York).",
		day(back)+" 01:30 EDT", day(back)+" 01:00 EST", day(back)+" 01:30 EST", day(back)+" 02:00 EST",
		"again: clocks went back and this time came round a second time")
	if n := strings.Count(p.body, `class="repeated"`); n != 2 {
		t.Errorf("%d rows marked as repeated, want 2 (01:00 and 01:30 EST)", n)
	}
	wantNotIn(t, "halfhourly", p, `class="shifted"`)

	// Secrets are hidden in the definition; the rest is there.
	e.job("c", "secret", "/ok?sig=s3cr3t-sig&x=1", `"startTime": "`+later(365*24*time.Hour)+`"`)
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "https://example.com/x?code=c0de", "method": "GET",
		"headers": {"Authorization": "Bearer t0ken", "X-Api-Key": "k3y", "Accept": "text/plain"},
		"authentication": {"type": "Basic", "username": "bob", "password": "hunter2"}}}, "startTime": "`+later(365*24*time.Hour)+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A put refuses a uri with a user and password; a job stored with
	// one before that rule has them masked too.
	job.Action.Request.URI = "https://user:pw@example.com/x?code=c0de"
	putRaw(t, e.store, "c", "creds", job)
	p = e.get(jobPath("c", "creds"))
	wantIn(t, "masked definition", p, `&#34;username&#34;: &#34;bob&#34;`, `&#34;Accept&#34;: &#34;text/plain&#34;`, `&#34;password&#34;: &#34;••••••&#34;`, "GET https://example.com/x?…")
	wantNotIn(t, "masked definition", p, "hunter2", "t0ken", "k3y", "c0de", ":pw@")
	p = e.get(jobPath("c", "secret"))
	wantNotIn(t, "masked query", p, "s3cr3t-sig")

	// History, its filter and its messages.
	e.job("c", "flaky", "/fail", "")
	e.waitHistory("c", "flaky", 1)
	p = e.get(jobPath("c", "flaky"))
	wantIn(t, "history", p, `<span class="badge status-Failed">Failed</span> <span class="badge faulted">faulted</span>`,
		"<summary>Failed: 500 Internal Server Error from host", `<pre class="message">`, "broken on purpose\nsecond line of the body")
	wantIn(t, "faulted job", p, "A Faulted job does not run again")
	wantNotIn(t, "faulted job", p, `id="run-now"`, `id="disable"`)
	wantIn(t, "filter Failed", e.get(jobPath("c", "flaky")+"?status=Failed"), "broken on purpose")
	if p := e.get(jobPath("c", "flaky") + "?status=Completed"); !strings.Contains(p.body, "No history") {
		t.Errorf("status=Completed shows entries:\n%s", p.body)
	}
	wantIn(t, "filter Faulted", e.get(jobPath("c", "flaky")+"?status=Faulted"), "broken on purpose")

	// A long message shows whole, folded under its first line, escaped.
	e.job("c", "long", "/long", "")
	e.waitHistory("c", "long", 1)
	p = e.get(jobPath("c", "long"))
	wantIn(t, "long message", p, "<summary>Failed: 500 Internal Server Error from host", "lines)</span></summary>",
		"\nBody: a line of the body, one of forty, 40 bytes\na line of the body", "&lt;b&gt;the last line &amp; END-OF-BODY&lt;/b&gt;")
	wantNotIn(t, "long message", p, "\r", "(truncated)")
	wantStatus(t, "bad filter", e.get(jobPath("c", "flaky")+"?status=Done"), http.StatusBadRequest)
	wantStatus(t, "missing job", e.get(jobPath("c", "nope")), http.StatusNotFound)
	wantStatus(t, "missing collection", e.get(jobPath("nope", "flaky")), http.StatusNotFound)
}

func TestHistoryPaging(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	e.job("c", "busy", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	for i := range 60 {
		if _, err := e.s.RunJob(ctx, "c", "busy"); err != nil {
			t.Fatal(err)
		}
		e.waitHistory("c", "busy", i+1) // one run at a time: each its own entry
	}
	p := e.get(jobPath("c", "busy"))
	if n := strings.Count(p.body, `<tr class="entry-Completed">`); n != 50 {
		t.Errorf("first history page has %d entries, want 50", n)
	}
	wantIn(t, "first page", p, `rel="next"`)
	p = e.get(jobPath("c", "busy") + "?skip=50")
	if n := strings.Count(p.body, `<tr class="entry-Completed">`); n != 10 {
		t.Errorf("second history page has %d entries, want 10", n)
	}
	wantIn(t, "second page", p, `rel="prev"`)
	wantNotIn(t, "second page", p, `rel="next"`)
	// Past the end, "Previous" leads to a page with rows, not to another
	// empty one.
	p = e.get(jobPath("c", "busy") + "?skip=500")
	wantIn(t, "history past the end", p, `id="no-history"`, `<a href="`+jobPath("c", "busy")+`" rel="prev">`)
	for i := range 3 {
		e.job("c", "j"+pad(i), "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	}
	p = e.get(collPath("c") + "?skip=500")
	wantIn(t, "jobs past the end", p, `<a href="`+collPath("c")+`" rel="prev">`)
}

func TestActions(t *testing.T) {
	e := newEnv(t, envOptions{prefix: "/ui"})
	e.collection("c", nil)
	e.job("c", "j", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	tok := e.token(jobPath("c", "j"))

	p := e.post(jobPath("c", "j")+"/run", url.Values{"csrf": {tok}})
	wantStatus(t, "run", p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/ui"+jobPath("c", "j")+"?flash=run" {
		t.Errorf("run redirects to %q", loc)
	}
	e.waitHistory("c", "j", 1)
	wantIn(t, "after run", e.get(jobPath("c", "j")+"?flash=run"), "Run requested", "Completed", "thanks")

	wantStatus(t, "disable", e.post(jobPath("c", "j")+"/disable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	if r, _ := e.s.GetJob(ctx, "c", "j"); r.State != scheduler.JobDisabled {
		t.Errorf("after disable: state %s", r.State)
	}
	wantIn(t, "disabled", e.get(jobPath("c", "j")), `id="enable"`, "The job is Disabled: these run only once it is enabled")
	wantStatus(t, "enable", e.post(jobPath("c", "j")+"/enable", url.Values{"csrf": {tok}}), http.StatusSeeOther)
	if r, _ := e.s.GetJob(ctx, "c", "j"); r.State != scheduler.JobEnabled {
		t.Errorf("after enable: state %s", r.State)
	}

	// Delete asks first: without the confirmation the POST only leads to
	// the question.
	p = e.post(jobPath("c", "j")+"/delete", url.Values{"csrf": {tok}})
	if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.HasSuffix(loc, "/delete") {
		t.Errorf("delete without confirm = %d to %q, want the confirmation page", p.status, loc)
	}
	if _, err := e.s.GetJob(ctx, "c", "j"); err != nil {
		t.Fatalf("the job is gone without a confirmation: %v", err)
	}
	cp := e.get(jobPath("c", "j") + "/delete")
	wantIn(t, "confirm page", cp, "Delete job j?", `name="confirm" value="yes"`)
	p = e.post(jobPath("c", "j")+"/delete", url.Values{"csrf": {tok}, "confirm": {"yes"}, "etag": {formETag(t, cp)}})
	if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui"+collPath("c")) {
		t.Errorf("delete = %d to %q, want the collection", p.status, loc)
	}
	if _, err := e.s.GetJob(ctx, "c", "j"); err == nil {
		t.Error("the job still exists after delete")
	}
	wantStatus(t, "run a deleted job", e.post(jobPath("c", "j")+"/run", url.Values{"csrf": {tok}}), http.StatusNotFound)
	wantStatus(t, "unknown action", e.post(jobPath("c", "j")+"/explode", url.Values{"csrf": {tok}}), http.StatusNotFound)

	// A job of a Disabled collection cannot run: 409 with the reason.
	e.collection("off", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{State: scheduler.CollectionDisabled}})
	e.job("off", "k", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	p = e.post(jobPath("off", "k")+"/run", url.Values{"csrf": {tok}})
	wantStatus(t, "run in a disabled collection", p, http.StatusConflict)
	wantIn(t, "run in a disabled collection", p, "Disabled")
	wantIn(t, "its page", e.get(jobPath("off", "k")), "Its collection is Disabled")
}

func TestCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	e.job("c", "j", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	tok := e.token(jobPath("c", "j"))

	wantStatus(t, "no token", e.post(jobPath("c", "j")+"/delete", url.Values{"confirm": {"yes"}}), http.StatusForbidden)
	wantStatus(t, "wrong token", e.post(jobPath("c", "j")+"/delete", url.Values{"confirm": {"yes"}, "csrf": {tok + "x"}}), http.StatusForbidden)

	// A token of another browser's session does not work in this one.
	other := newEnv(t, envOptions{})
	otherTok := other.token("/try")
	wantStatus(t, "another session's token", e.post(jobPath("c", "j")+"/run", url.Values{"csrf": {otherTok}}), http.StatusForbidden)

	// A cross-site form, even with the right token (say, read by a
	// script of the same browser), is refused.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+jobPath("c", "j")+"/delete", strings.NewReader(url.Values{"csrf": {tok}, "confirm": {"yes"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	wantStatus(t, "cross-site", e.do(req), http.StatusForbidden)
	if _, err := e.s.GetJob(ctx, "c", "j"); err != nil {
		t.Fatalf("a refused request deleted the job: %v", err)
	}
	// GET never changes anything.
	req, _ = http.NewRequest(http.MethodGet, e.srv.URL+jobPath("c", "j")+"/run", nil)
	if p := e.do(req); p.status == http.StatusSeeOther {
		t.Errorf("GET .../run = %d", p.status)
	}
	if h, _ := e.s.ListHistory(ctx, "c", "j", nil); len(h) != 0 {
		t.Errorf("the job ran after refused requests: %v", h)
	}
	wantStatus(t, "with the token", e.post(jobPath("c", "j")+"/delete", url.Values{"csrf": {tok}, "confirm": {"yes"}}), http.StatusSeeOther)
}

func TestEscaping(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", &scheduler.JobCollection{Location: "<b>bold</b>", Tags: map[string]string{"<i>k</i>": "<script>v</script>"}})
	// A name the API refuses, written straight into the store by another
	// program: it must still show as text.
	const evil = `<img src=x onerror=alert(1)>`
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/<svg/onload=alert(3)>?q=\"><script>", "method": "GET",
		"headers": {"X-Note": "</pre><script>alert(4)</script>"}}}, "startTime": "`+later(365*24*time.Hour)+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, e.store, "c", evil, job)
	if _, err := e.s.PutJob(ctx, "c", "markup", job, nil); err != nil {
		t.Fatal(err)
	}
	e.job("c", "echo", "/html", "") // its history message is the markup the receiver answers
	e.waitHistory("c", "echo", 1)

	for _, path := range []string{"/", collPath("c"), jobPath("c", "markup"), jobPath("c", "echo"), jobPath("c", "markup") + "/delete", jobPath("c", evil)} {
		p := e.get(path)
		if path != jobPath("c", evil) {
			wantStatus(t, path, p, http.StatusOK)
		}
		wantNotIn(t, path, p, "<img src=x", "<svg/onload", "<script>alert", "<script>v", "<b>bold", "<i>k")
	}
	wantIn(t, "collection", e.get(collPath("c")), "&lt;img src=x onerror=alert(1)&gt;")
	// The API refuses the name, so its page says so, as text.
	p := e.get(jobPath("c", evil))
	wantStatus(t, "job page of a bad name", p, http.StatusBadRequest)
	wantIn(t, "job page of a bad name", p, "&lt;img src=x onerror=alert(1)&gt;")
	wantIn(t, "job page", e.get(jobPath("c", "markup")), "&lt;/pre&gt;&lt;script&gt;alert(4)", "&lt;svg/onload=alert(3)&gt;")
	wantIn(t, "history message", e.get(jobPath("c", "echo")), "&lt;script&gt;alert(&#34;body&#34;)&lt;/script&gt;")
	wantIn(t, "collection", e.get(collPath("c")), "&lt;b&gt;bold&lt;/b&gt;", "&lt;i&gt;k&lt;/i&gt;: &lt;script&gt;v&lt;/script&gt;")

	// The try page shows what was pasted as text.
	tok := e.token("/try")
	p = e.post("/try", url.Values{"csrf": {tok}, "definition": {`{"action": "</textarea><script>alert(5)</script>"}`}})
	wantNotIn(t, "try", p, "<script>alert(5)")
	wantIn(t, "try", p, "&lt;/textarea&gt;&lt;script&gt;alert(5)")
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, envOptions{prefix: "/ui"})
	e.collection("c", nil)
	e.job("c", "j", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	inlineScript := regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<script>|\son[a-z]+=|javascript:|style=`)
	for _, path := range []string{"/", collPath("c"), jobPath("c", "j"), jobPath("c", "j") + "/delete", "/try", "/nope", "/static/dashboard.css"} {
		p := e.get(path)
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", path, p.header)
		}
		if m := inlineScript.FindString(p.body); m != "" && strings.HasSuffix(path, ".css") == false {
			t.Errorf("GET %s: inline script or style %q", path, m)
		}
	}
	p := e.get("/static/dashboard.js")
	if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("dashboard.js served as %q", ct)
	}
	page := e.get("/")
	m := regexp.MustCompile(`src="(/ui/static/dashboard\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the overview does not load the versioned script")
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+m[1], nil)
	if cc := e.do(req).header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("the versioned script's Cache-Control = %q", cc)
	}
	if cc := page.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a page's Cache-Control = %q, want no-store", cc)
	}
	wantStatus(t, "unknown page", e.get("/nope"), http.StatusNotFound)
}

func TestPrefixes(t *testing.T) {
	for _, prefix := range []string{"", "/ui", "/ops/jobs"} {
		e := newEnv(t, envOptions{prefix: prefix})
		e.collection("c", nil)
		e.job("c", "j", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
		p := e.get("/")
		wantStatus(t, prefix+" overview", p, http.StatusOK)
		wantIn(t, prefix+" overview", p, `href="`+prefix+`/collections/c"`, `href="`+prefix+`/static/dashboard.css?v=`)
		wantIn(t, prefix+" collection", e.get(collPath("c")), `href="`+prefix+`/collections/c/jobs/j"`)
		tok := e.token(jobPath("c", "j"))
		if loc := e.post(jobPath("c", "j")+"/disable", url.Values{"csrf": {tok}}).header.Get("Location"); !strings.HasPrefix(loc, prefix+"/collections/c/jobs/j") {
			t.Errorf("prefix %q: redirect to %q", prefix, loc)
		}
	}
}

func TestTryPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	p := e.get("/try")
	wantStatus(t, "try", p, http.StatusOK)
	wantIn(t, "try", p, "<textarea", "weekDays")
	tok := e.token("/try")
	try := func(def, created, n string) page {
		return e.post("/try", url.Values{"csrf": {tok}, "definition": {def}, "created": {created}, "n": {n}})
	}

	// Every problem at its JSON path.
	p = try(`{"action": {"type": "Http", "request": {"uri": "ftp://x", "method": "FETCH"}}, "recurrence": {"frequency": "Week", "schedule": {"hours": [25], "monthDays": [40]}}}`, "", "")
	wantStatus(t, "invalid", p, http.StatusUnprocessableEntity)
	wantIn(t, "invalid", p, "problems", "<code>action.request.method</code>", "<code>action.request.uri</code>",
		"<code>recurrence.schedule.hours[0]</code>", "is not an hour (0-23)", "<code>recurrence.schedule.monthDays[0]</code>")
	p = try(`{"action": nope}`, "", "")
	wantStatus(t, "not JSON", p, http.StatusUnprocessableEntity)
	wantIn(t, "not JSON", p, "Not JSON", "line 1, column 12")

	// The schedule in words and the occurrences of a job created at the
	// time given: every 3 months from March reaches December.
	quarterly := `{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Month", "interval": 3, "count": 3, "schedule": {"months": [12], "monthDays": [1, 14]}}}`
	p = try(quarterly, "2027-03-11T17:00:00Z", "10")
	wantStatus(t, "valid", p, http.StatusOK)
	wantIn(t, "valid", p, "Runs on the 1st and 14th of every 3rd month that is December at 17:00 (UTC), 3 times.",
		"2027-12-01 17:00 UTC", "2027-12-14 17:00 UTC", "2028-12-01 17:00 UTC", "It runs 3 times in all.")
	p = try(quarterly, "2027-02-11T17:00:00Z", "10")
	wantStatus(t, "never matches", p, http.StatusUnprocessableEntity)
	wantIn(t, "never matches", p, "recurrence.schedule.months", "are February, May, August and November")

	// The checks are the scheduler's own: its retry floor (1 ms here, so
	// 2 s passes where the 15 s default would refuse it), its host action
	// types and their payload checks, its executors.
	fast := `{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT2S", "retryCount": 1}}}`
	p = try(fast, "", "")
	wantStatus(t, "fast retries", p, http.StatusOK)
	p = try(`{"action": {"type": "digest", "custom": {"to": "ops"}}}`, "", "")
	wantStatus(t, "host type", p, http.StatusOK)
	p = try(`{"action": {"type": "Digest", "custom": {"to": 1, "cc": "x"}}}`, "", "")
	wantStatus(t, "host type, bad payload", p, http.StatusUnprocessableEntity)
	wantIn(t, "host type, bad payload", p, "<code>action.custom.to</code>", "<code>action.custom.cc</code>")
	p = try(`{"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "q", "sasToken": "?sv=1&sig=x", "message": "m"}}}`, "", "")
	wantStatus(t, "no executor", p, http.StatusUnprocessableEntity)
	wantIn(t, "no executor", p, "<code>action.type</code>", "azure.Register")

	p = try(quarterly, "yesterday", "0")
	wantStatus(t, "bad fields", p, http.StatusBadRequest)
	wantIn(t, "bad fields", p, "<code>created</code>", "<code>occurrences</code>")
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, envOptions{auth: true, prefix: "/ui", tls: true})
	e.collection("sub-a/rg/mine", nil)
	e.collection("sub-b/rg/theirs", nil)
	e.collection("unscoped", nil)
	e.job("sub-a/rg/mine", "ok", "/ok", "")
	e.job("sub-b/rg/theirs", "secretjob", "/fail", "")
	e.job("sub-b/rg/theirs", "other", "/ok", `"startTime": "`+later(365*24*time.Hour)+`"`)
	e.waitHistory("sub-a/rg/mine", "ok", 1)
	e.waitHistory("sub-b/rg/theirs", "secretjob", 1)

	// Signed out: pages send to the sign-in page, actions are refused.
	p := e.get("/")
	if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login?next=") {
		t.Errorf("signed out: GET / = %d to %q", p.status, loc)
	}
	// The sign-in page offers neither the navigation nor live refresh.
	p = e.get("/login")
	wantIn(t, "sign-in page", p, `id="token"`, `data-refresh="0"`)
	wantNotIn(t, "sign-in page", p, `aria-label="Main"`, "Try a definition", `id="live-toggle"`)
	tok := e.token("/login")
	p = e.post(jobPath("sub-a/rg/mine", "ok")+"/run", url.Values{"csrf": {tok}})
	wantStatus(t, "signed out: run", p, http.StatusUnauthorized)
	wantStatus(t, "signed out: static files are public", e.get("/static/dashboard.css"), http.StatusOK)

	// A wrong token.
	p = e.signIn("wrong-token-0123456789abcdef")
	wantStatus(t, "wrong token", p, http.StatusUnauthorized)
	wantIn(t, "wrong token", p, "That token is not valid.")
	if s := e.get("/"); s.status != http.StatusSeeOther {
		t.Errorf("after a wrong token: GET / = %d, want still signed out", s.status)
	}

	// The limited token: a signed, HttpOnly, SameSite=Strict, Secure cookie.
	p = e.signIn(limitedToken)
	wantStatus(t, "right token", p, http.StatusSeeOther)
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "jobclock_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteStrictMode || cookie.MaxAge <= 0 || cookie.Path != "/ui/" {
		t.Fatalf("session cookie = %+v; want HttpOnly, Secure, SameSite=Strict, expiring, path /ui/", cookie)
	}
	if strings.Contains(cookie.Value, limitedToken) {
		t.Error("the session cookie holds the token")
	}

	// It sees sub-a and nothing of sub-b, on every page.
	p = e.get("/")
	wantStatus(t, "limited overview", p, http.StatusOK)
	wantIn(t, "limited overview", p, "sub-a/rg/mine", "token#2", "1 occurrence,", `aria-label="Main"`, `id="live-toggle"`)
	wantNotIn(t, "limited overview", p, "sub-b", "theirs", "secretjob", "unscoped", "broken on purpose", "due, not started", "1 failed")
	wantStatus(t, "their collection", e.get(collPath("sub-b/rg/theirs")), http.StatusNotFound)
	wantStatus(t, "their job", e.get(jobPath("sub-b/rg/theirs", "secretjob")), http.StatusNotFound)
	wantStatus(t, "their delete page", e.get(jobPath("sub-b/rg/theirs", "other")+"/delete"), http.StatusNotFound)
	wantStatus(t, "unscoped collection", e.get(collPath("unscoped")), http.StatusNotFound)
	tok = e.token("/")
	for _, op := range []string{"run", "disable", "enable", "delete"} {
		wantStatus(t, "their job: "+op, e.post(jobPath("sub-b/rg/theirs", "other")+"/"+op, url.Values{"csrf": {tok}, "confirm": {"yes"}}), http.StatusNotFound)
	}
	if r, err := e.s.GetJob(ctx, "sub-b/rg/theirs", "other"); err != nil || r.State != scheduler.JobEnabled || r.Schedule.RunRequested.IsZero() == false {
		t.Errorf("their job after refused actions: %+v, %v", r, err)
	}
	wantIn(t, "own job", e.get(jobPath("sub-a/rg/mine", "ok")), "thanks")

	// A tampered cookie is no session.
	u, _ := url.Parse(e.srv.URL + "/ui/")
	tampered := *cookie
	tampered.Value = strings.Replace(cookie.Value, ".", "x.", 1)
	e.client.Jar.SetCookies(u, []*http.Cookie{&tampered})
	if s := e.get("/"); s.status != http.StatusSeeOther {
		t.Errorf("tampered cookie: GET / = %d, want the sign-in page", s.status)
	}

	// The admin token sees everything, the backlog too; sign out ends it.
	e.signIn(adminToken)
	wantIn(t, "admin overview", e.get("/"), "sub-b/rg/theirs", "unscoped", "broken on purpose", "due, not started")
	p = e.post("/logout", url.Values{"csrf": {e.token("/")}})
	wantStatus(t, "sign out", p, http.StatusSeeOther)
	if s := e.get("/"); s.status != http.StatusSeeOther {
		t.Errorf("after signing out: GET / = %d", s.status)
	}
	// The sign-in page never sends the browser to another site.
	e.signIn(limitedToken)
	p = e.post("/login", url.Values{"csrf": {e.token("/login")}, "token": {limitedToken}, "next": {"https://evil.example/"}})
	if loc := p.header.Get("Location"); loc != "/ui/" {
		t.Errorf("sign-in with next=https://evil.example/ redirects to %q", loc)
	}
}

func TestSessionExpires(t *testing.T) {
	e := newEnv(t, envOptions{auth: true})
	if p := e.signIn(adminToken); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	wantStatus(t, "signed in", e.get("/"), http.StatusOK)
	short := newEnv(t, envOptions{auth: true, ttl: time.Second})
	short.signIn(adminToken)
	wantStatus(t, "fresh", short.get("/"), http.StatusOK)
	time.Sleep(2100 * time.Millisecond)
	if p := short.get("/"); p.status != http.StatusSeeOther {
		t.Errorf("after the session's TTL: GET / = %d, want the sign-in page", p.status)
	}
}

// later returns the time d from now in RFC 3339, UTC, to the second.
func later(d time.Duration) string {
	return time.Now().Add(d).UTC().Truncate(time.Second).Format(time.RFC3339)
}

// TestPausedJobAndHealth: a paused job's page says why and until when,
// every job shows its health (the collection's table only when it is not
// OK), and the history can be filtered to Skipped entries.
func TestPausedJobAndHealth(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	// Seconds other than zero: the page leaves ":00" seconds out.
	resume := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Minute).Add(30 * time.Second)
	e.job("c", "paused", "/ok", `"recurrence": {"frequency": "Hour"}, "state": "Disabled", "stateReason": "the target <is> down", "resumeTime": "`+resume.Format(time.RFC3339)+`"`)
	e.job("c", "failing", "/fail", "")
	e.waitHistory("c", "failing", 1)
	p := e.get(jobPath("c", "paused"))
	wantStatus(t, "paused job", p, http.StatusOK)
	wantIn(t, "paused job", p, `id="paused">Paused: the target &lt;is&gt; down (until `+resume.Format("2006-01-02 15:04:05")+" UTC)",
		`id="health">OK<`, "The job is paused until "+resume.Format("2006-01-02 15:04:05")+" UTC: the ones before it do not run on time")
	p = e.get(jobPath("c", "failing"))
	wantIn(t, "failing job", p, `id="health">Failing<`)
	p = e.get(collPath("c"))
	wantIn(t, "collection", p, `badge health-Failing">Failing<`)
	wantNotIn(t, "collection", p, `badge health-OK`)
	p = e.get(jobPath("c", "failing") + "?status=Skipped")
	wantStatus(t, "history filtered to Skipped", p, http.StatusOK)
}

// TestWording checks that counts agree with their nouns and that "faulted"
// always says whether it counts jobs or occurrences.
func TestWording(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/one", nil)
	e.job("sub/rg/one", "broken", "/fail", "")
	e.waitHistory("sub/rg/one", "broken", 1)

	p := e.get("/")
	wantIn(t, "overview", p, `<span class="num">1</span> job</a>`, `<span class="num">1</span> Faulted job</a>`,
		`<span class="num">0</span> Enabled jobs</a>`,
		"1 occurrence, 1 attempt,", "1 faulted occurrence</span>", // the charts count occurrences
		">Faulted jobs</a></th>", "Quota: most frequent</th>") // the collections table counts jobs
	wantNotIn(t, "overview", p, "1 jobs", "1 occurrences", "1 attempts", "1 faulted<", ">Faulted</a>", "Most frequent</th>")

	p = e.get(collPath("sub/rg/one"))
	wantIn(t, "collection", p, "<dt>Quota: most frequent</dt>", `<th scope="col" class="wide">Faulted occurrences</th>`)
	wantNotIn(t, "collection", p, ">Faulted</th>", "<dt>Most frequent</dt>")

	p = e.get(jobPath("sub/rg/one", "broken"))
	wantIn(t, "job", p, "<dt>Faulted occurrences</dt><dd>1</dd>", ">Faulted occurrences</a>")
	wantNotIn(t, "job", p, "<dt>Faulted</dt>", ">Faulted</a>")

	// One occurrence is one time, one problem one problem.
	tok := e.token("/try")
	p = e.post("/try", url.Values{"csrf": {tok}, "definition": {`{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}}`}})
	wantIn(t, "try, once", p, "It runs 1 time in all.")
	p = e.post("/try", url.Values{"csrf": {tok}, "definition": {`{"action": {"type": "Http", "request": {"uri": "ftp://x", "method": "GET"}}}`}})
	wantIn(t, "try, one problem", p, "<h2>1 problem</h2>")
}

// TestEmptyOverview checks that an overview without collections says how
// to make one: for a token limited to some subscriptions, in one of them.
func TestEmptyOverview(t *testing.T) {
	e := newEnv(t, envOptions{})
	p := e.get("/")
	wantIn(t, "no collections", p, "No collections.", `<pre class="hint">PUT /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Scheduler/jobCollections/{name}?api-version=2016-03-01`,
		"jobclock run -db", "Scheduler.Schedule", "<code>default</code>")

	e = newEnv(t, envOptions{auth: true})
	e.collection("sub-b/rg/theirs", nil)
	e.collection("unscoped", nil)
	e.signIn(limitedToken)
	p = e.get("/")
	wantIn(t, "none for the token", p, "No collections that your token may see.", "with your token",
		"PUT /subscriptions/sub-a/resourceGroups/", "show only to tokens for every subscription")
	wantNotIn(t, "none for the token", p, "theirs", "unscoped", "Scheduler.Schedule")
}

// TestCollectionOverREST checks that a collection's page gives its REST
// path, or says why the REST API does not serve it.
func TestCollectionOverREST(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub1/rg1/jc1", nil)
	e.collection(scheduler.DefaultCollection, nil)
	e.collection("Sub2/rg/jc", nil)
	wantIn(t, "scoped", e.get(collPath("sub1/rg1/jc1")), `<code id="rest-path">/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1</code>`)
	p := e.get(collPath(scheduler.DefaultCollection))
	wantIn(t, "default", p, `id="no-rest"`, "The REST API does not serve this collection", "{subscriptionId}/{resourceGroupName}/{name}")
	wantNotIn(t, "default", p, `id="rest-path"`)
	wantIn(t, "capitals", e.get(collPath("Sub2/rg/jc")), `id="no-rest"`, "subscription IDs in lower case")

	// The REST API agrees.
	api := httpapi.New(e.s, nil)
	for path, want := range map[string]int{
		"/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1": http.StatusOK,
		"/subscriptions/Sub2/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc":   http.StatusNotFound,
	} {
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("GET", path+"?api-version=2016-03-01", nil))
		if w.Code != want {
			t.Errorf("GET %s = %d, want %d", path, w.Code, want)
		}
	}
}

// TestJobPageWindow lists a spread job's planned instants, each with the
// scheduled instant it is spread from, as the job's rule computes them
// for its collection and name (whose values recurrence's
// TestWindowPinned pins).
func TestJobPageWindow(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	e.job("c", "spread", "/ok", fmt.Sprintf(`"startTime": "%d-01-01T00:00:00Z", "recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M"}`, year))
	p := e.get(jobPath("c", "spread"))
	wantStatus(t, "job", p, http.StatusOK)
	wantIn(t, "job", p, "Runs every hour on the hour, spread over 15 minutes.", "Scheduled (spread from)")
	rec := &recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: []int{0}},
		Extensions: &recurrence.Extensions{Window: retry.Duration(15 * time.Minute)}}
	start := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	rule, err := recurrence.CompileJob(rec, start, "c", "spread")
	if err != nil {
		t.Fatal(err)
	}
	at := start.Add(-time.Nanosecond)
	for range 3 {
		at = rule.Next(at)
		s := rule.Scheduled(at)
		if at.Equal(s) {
			continue // an offset of zero: nothing to tell apart
		}
		// One row: the planned instant, then the scheduled one.
		row := regexp.MustCompile(`<time datetime="` + regexp.QuoteMeta(at.Format(time.RFC3339)) + `">[^<]*</time></td>\s*<td class="scheduled"><time datetime="` + regexp.QuoteMeta(s.Format(time.RFC3339)) + `">`)
		if !row.MatchString(p.body) {
			t.Errorf("job page has no row planned at %v, scheduled at %v", at, s)
		}
	}
	// A job without a window has no such column.
	e.job("c", "plain", "/ok", fmt.Sprintf(`"startTime": "%d-01-01T00:00:00Z", "recurrence": {"frequency": "Hour"}`, year))
	wantNotIn(t, "plain", e.get(jobPath("c", "plain")), "Scheduled (spread from)")

	// H in a cron spec: the job's page says its own minute (18 for
	// reports/nightly, as recurrence's TestCronHashPinned pins); the try
	// page, which has no job, says what decides it.
	e.collection("reports", nil)
	e.job("reports", "nightly", "/ok", `"recurrence": {"cron": "H * * * *"}`)
	p = e.get(jobPath("reports", "nightly"))
	wantIn(t, "H job", p, "Runs every hour at minute 18, by H for this job: minute 18.")
	tok := e.token("/try")
	p = e.post("/try", url.Values{"csrf": {tok}, "definition": {`{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}, "recurrence": {"cron": "H * * * *"}}`}})
	wantStatus(t, "try H", p, http.StatusOK)
	wantIn(t, "try H", p, "Runs as the cron spec &#34;H * * * *&#34; says, with the minute that its H fields give each job by its collection and name.",
		"what the H fields of its cron spec stand for")
}

// TestSideBySide: the job page lists each occurrence in progress beside
// the others (runPolicy.overlap AllowAll), and the collection page says
// how many run.
func TestSideBySide(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Minute)
	e.job("c", "wide", "/ok", `"recurrence": {"frequency": "Day"}, "startTime": "`+at.Add(time.Hour).Format(time.RFC3339)+`", "runPolicy": {"overlap": "AllowAll"}`)
	r, err := e.store.GetJob(ctx, "c", "wide")
	if err != nil {
		t.Fatal(err)
	}
	r.Schedule.Policy = &scheduler.PolicyState{Running: []scheduler.Run{
		{Occurrence: scheduler.Occurrence{Number: 3, Expected: at, At: at}, Owner: "instance-b", Until: at.Add(time.Hour)},
		{Occurrence: scheduler.Occurrence{Number: 4, Expected: at.Add(time.Minute), Retry: 1, At: at.Add(2 * time.Minute)}},
	}}
	if err := e.store.PutJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	p := e.get(jobPath("c", "wide"))
	wantStatus(t, "job page", p, http.StatusOK)
	wantIn(t, "job page", p,
		"Occurrence 3 (expected "+clockText(at)+") is in progress: attempt 1 of the main action, running on instance-b.",
		"Occurrence 4 (expected "+clockText(at.Add(time.Minute))+") is in progress: attempt 2 of the main action, due "+clockText(at.Add(2*time.Minute))+".")
	p = e.get(collPath("c"))
	wantIn(t, "collection page", p, "2 running side by side")
}

// clockText is how the pages write an instant on the minute.
func clockText(t time.Time) string { return t.Format("2006-01-02 15:04 MST") }

// TestJobPageCalendar: the next occurrences of a job that names an
// exclusion calendar mark the ones it skips, moves and merges into a
// neighbouring one, with the calendar's name.
func TestJobPageCalendar(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	e.calendar("c", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-03"]}}`, year))
	day := func(d int) string { return time.Date(year, 1, d, 0, 0, 0, 0, time.UTC).Format(time.RFC3339) }
	e.job("c", "skips", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Day", "calendar": "hol"}`, day(1)))
	p := e.get(jobPath("c", "skips"))
	wantStatus(t, "skips", p, http.StatusOK)
	skipped := regexp.MustCompile(`<tr class="skipped">\s*<td class="num">–</td>\s*<td><time datetime="` + regexp.QuoteMeta(day(3)) + `">[\s\S]*?skipped: excluded by calendar “hol”`)
	if !skipped.MatchString(p.body) {
		t.Errorf("job page has no skipped row at %s naming the calendar", day(3))
	}
	e.job("c", "moves", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Day", "interval": 2, "calendar": "hol", "onExcluded": "NextIncluded"}`, day(1)))
	p = e.get(jobPath("c", "moves"))
	moved := regexp.MustCompile(`<time datetime="` + regexp.QuoteMeta(day(4)) + `">[\s\S]*?moved from <time datetime="` + regexp.QuoteMeta(day(3)) + `">[^<]*</time> by calendar “hol”`)
	if !moved.MatchString(p.body) {
		t.Errorf("job page has no row at %s moved from %s by the calendar", day(4), day(3))
	}
	wantNotIn(t, "moves", p, `class="skipped"`)
	wantIn(t, "moves", p, "Runs every 2 days at 00:00 (UTC), except on the days calendar “hol” excludes (moved to the next day it does not exclude).")
	wantIn(t, "skips", e.get(jobPath("c", "skips")), "except on the days calendar “hol” excludes (skipped).")
	e.job("c", "merges", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Day", "calendar": "hol", "onExcluded": "NextIncluded"}`, day(1)))
	p = e.get(jobPath("c", "merges"))
	merged := regexp.MustCompile(`<tr class="skipped">\s*<td class="num">–</td>\s*<td><time datetime="` + regexp.QuoteMeta(day(3)) + `">[\s\S]*?merged into <time datetime="` + regexp.QuoteMeta(day(4)) + `">`)
	if !merged.MatchString(p.body) {
		t.Errorf("job page has no row at %s merged into %s by the calendar", day(3), day(4))
	}
	// A job without a calendar has no such column.
	e.job("c", "plain", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Day"}`, day(1)))
	wantNotIn(t, "plain", e.get(jobPath("c", "plain")), `<th scope="col">Calendar</th>`)
}

// TestJobPageCalendarChanged: after a change of the calendar a job names,
// its next occurrences show the ones the change skipped (planned again
// by PutCalendar, their history entry not yet recorded), and, when the
// job's record still has its occurrence planned under the old version
// (the engine plans it again when it comes due), where the engine runs it
// and where it was planned.
func TestJobPageCalendarChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	day := func(d int) time.Time { return time.Date(year, 1, d, 0, 0, 0, 0, time.UTC) }
	iso := func(d int) string { return regexp.QuoteMeta(day(d).Format(time.RFC3339)) }
	e.calendar("c", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-20"]}}`, year))
	e.job("c", "j", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Day", "calendar": "hol"}`, day(1).Format(time.RFC3339)))
	e.calendar("c", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-01", "%d-01-02"]}}`, year, year))
	rec, err := e.store.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Schedule.NextOccurrence.Equal(day(3)) {
		t.Fatalf("next occurrence after the calendar change = %v, want %v", rec.Schedule.NextOccurrence, day(3))
	}
	skipped := regexp.MustCompile(`<tr class="skipped">\s*<td class="num">–</td>\s*<td><time datetime="` + iso(1) + `">[\s\S]*?skipped: excluded by calendar “hol”, and 1 more to <time datetime="` + iso(2) + `">[\s\S]*?<td class="num">1</td>\s*<td><time datetime="` + iso(3) + `">`)
	p := e.get(jobPath("c", "j"))
	wantStatus(t, "job", p, http.StatusOK)
	if !skipped.MatchString(p.body) {
		t.Errorf("job page after PutCalendar planned it again: no row skipping %s and %s before occurrence 1 at %s:\n%s", day(1), day(2), day(3), p.body)
	}

	// The record as planned under the old version (the engine may have
	// written it since: it records the Skipped entry the change left).
	for try := 0; ; try++ {
		rec, err := e.store.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		rec.Schedule.NextOccurrence, rec.Schedule.Policy = day(1), nil
		if err = e.store.PutJob(ctx, rec); err == nil {
			break
		} else if !errors.Is(err, scheduler.ErrConflict) || try == 10 {
			t.Fatal(err)
		}
	}
	p = e.get(jobPath("c", "j"))
	if !skipped.MatchString(p.body) {
		t.Errorf("job page of a record planned under the old calendar: no row skipping %s and %s before occurrence 1 at %s:\n%s", day(1), day(2), day(3), p.body)
	}
	replanned := regexp.MustCompile(`<td class="num">1</td>\s*<td><time datetime="` + iso(3) + `">[^<]*</time></td>\s*<td><span class="calendar replanned">planned for <time datetime="` + iso(1) + `">[^<]*</time> before calendar “hol” changed`)
	if !replanned.MatchString(p.body) {
		t.Errorf("job page of a record planned under the old calendar: occurrence 1 at %s does not say it was planned for %s:\n%s", day(3), day(1), p.body)
	}
}

// TestJobPageCalendarDroppedCut: a minutely job whose calendar excludes a
// week drops 10,080 occurrences before its next one; the job page reads at
// most 1,000 of them and lists at most 10 rows of them before an
// occurrence, its last row saying that more are dropped, whether they come
// before the next occurrence or between two listed ones.
func TestJobPageCalendarDroppedCut(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	at := func(d, m int) time.Time { return time.Date(year, 1, d, 0, m, 0, 0, time.UTC) }
	iso := func(t time.Time) string { return regexp.QuoteMeta(t.Format(time.RFC3339)) }
	e.calendar("c", "wk", fmt.Sprintf(`{"properties": {"ranges": [{"start": "%d-01-01T00:05:00", "end": "%d-01-08T00:00:00"}]}}`, year, year))
	const cut = `; more before the next occurrence are not listed`
	skipped := regexp.MustCompile(`<tr class="skipped">`)

	// Skipped, between listed occurrences: one row for the run, cut after
	// 1,000 read; occurrence 6 runs at the end of the week.
	e.job("c", "skips", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Minute", "calendar": "wk"}`, at(1, 0).Format(time.RFC3339)))
	p := e.get(jobPath("c", "skips"))
	wantStatus(t, "skips", p, http.StatusOK)
	run := regexp.MustCompile(`<td><time datetime="` + iso(at(1, 5)) + `">[\s\S]*?skipped: excluded by calendar “wk”, and 999 more to <time datetime="` + iso(at(1, 5).Add(999*time.Minute)) +
		`">[^<]*</time></span><span class="calendar cut">` + regexp.QuoteMeta(cut) + `</span>[\s\S]*?<td class="num">6</td>\s*<td><time datetime="` + iso(at(8, 0)) + `">`)
	if !run.MatchString(p.body) {
		t.Errorf("job page: no row skipping %v and 999 more, cut, before occurrence 6 at %v:\n%s", at(1, 5), at(8, 0), p.body)
	}
	if n := len(skipped.FindAllString(p.body, -1)); n != 1 {
		t.Errorf("job page lists %d skipped rows, want 1", n)
	}

	// Merged, before the next occurrence (the end of the week, as the job
	// starts in the excluded week): each its own row, at most 10 of them.
	e.job("c", "merges", "/ok", fmt.Sprintf(`"startTime": "%s", "recurrence": {"frequency": "Minute", "calendar": "wk", "onExcluded": "NextIncluded"}`, at(1, 5).Format(time.RFC3339)))
	p = e.get(jobPath("c", "merges"))
	wantStatus(t, "merges", p, http.StatusOK)
	if n := len(skipped.FindAllString(p.body, -1)); n != 10 {
		t.Errorf("job page lists %d merged rows, want 10", n)
	}
	last := regexp.MustCompile(`<td><time datetime="` + iso(at(1, 14)) + `">[\s\S]*?merged into <time datetime="` + iso(at(8, 0)) + `">[^<]*</time> by calendar “wk”</span><span class="calendar cut">` + regexp.QuoteMeta(cut))
	if !last.MatchString(p.body) {
		t.Errorf("job page: the 10th merged row (%v) does not say that more are merged:\n%s", at(1, 14), p.body)
	}
}
