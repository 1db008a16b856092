package dashboard_test

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
)

// TestManualRunMarked: the history row of a run asked for with Run now
// is marked "run now"; the row of the scheduled occurrence is not.
func TestManualRunMarked(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}`) // its first occurrence is now
	e.waitHistory("sub/rg/c", "j", 1)
	path := jobPath("sub/rg/c", "j")
	wantStatus(t, "run now", e.post(path+"/run", url.Values{"csrf": {e.token(path)}}), http.StatusSeeOther)
	h := e.waitHistory("sub/rg/c", "j", 2)
	if !h[0].Manual || h[1].Manual {
		t.Errorf("Manual of the entries, newest first: %v, %v; want true, false", h[0].Manual, h[1].Manual)
	}
	if n := strings.Count(e.get(path).body, `<span class="badge manual"`); n != 1 {
		t.Errorf("the job page marks %d history rows as run now, want 1", n)
	}
}

// TestRunningShown: while an attempt of a job is in progress, its page
// and its collection's table say that it is running, and on which
// instance; once it ends, they no longer do.
func TestRunningShown(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	started, release := make(chan struct{}, 1), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))
	defer slow.Close()
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+slow.URL+`/", "method": "POST"}, "retryPolicy": {"retryType": "None"}},
		"recurrence": {"frequency": "Hour"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PutJob(ctx, "sub/rg/c", "j", def, nil); err != nil {
		t.Fatal(err)
	}
	<-started // its first occurrence is now
	path := jobPath("sub/rg/c", "j")
	rec, err := e.s.GetJob(ctx, "sub/rg/c", "j")
	if err != nil {
		t.Fatal(err)
	}
	badge := `<span class="badge running" title="An attempt is in progress on instance ` + rec.LeaseOwner + `">running</span>`
	p := e.get(path)
	wantIn(t, "job page while the attempt runs", p, badge, `<span class="last-running">running</span>`, "An attempt is running now, on instance "+rec.LeaseOwner+".")
	wantIn(t, "collection page while the attempt runs", e.get("/collections/sub%2Frg%2Fc"), badge)
	close(release)
	e.waitHistory("sub/rg/c", "j", 1)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(e.get(path).body, `class="badge running"`) {
		if time.Now().After(deadline) {
			t.Fatal("the job page still says running 10s after the attempt ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantNotIn(t, "collection page after the attempt", e.get("/collections/sub%2Frg%2Fc"), `class="badge running"`)
}

// TestDisabledCollectionJob: a job of a Disabled collection whose record
// names a past next run shows no next run, saying why, on its page and in
// its collection's table, and the health the Scheduler gives it.
func TestDisabledCollectionJob(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	if _, err := e.s.DisableCollection(ctx, "sub/rg/c"); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * time.Minute).UTC().Truncate(time.Second)
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+e.recv.URL+`/ok", "method": "POST"}},
		"recurrence": {"frequency": "Hour"}, "startTime": "`+past.Add(-time.Hour).Format(time.RFC3339)+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// As the record is once the collection was disabled before its due
	// instant: due, and not claimed.
	if err := e.store.PutJob(ctx, &scheduler.JobRecord{Collection: "sub/rg/c", Name: "j", Job: def, State: scheduler.JobEnabled,
		Created: past.Add(-time.Hour), Updated: past.Add(-time.Hour), Status: scheduler.JobStatus{NextExecutionTime: &past},
		Schedule: scheduler.JobSchedule{Anchor: past.Add(-time.Hour), DueAt: past, NextOccurrence: past}}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.s.GetJob(ctx, "sub/rg/c", "j")
	if err != nil {
		t.Fatal(err)
	}
	stamp := `datetime="` + past.Format(time.RFC3339Nano) + `"`
	held := `<span class="none held">none while its collection is Disabled</span>`
	p := e.get(jobPath("sub/rg/c", "j"))
	wantIn(t, "job page", p, `<dd id="next-run">`+held+`</dd>`, `id="health">`+string(rec.Status.Health)+`<`,
		"Its collection is Disabled: none of these runs while it is.")
	p = e.get("/collections/sub%2Frg%2Fc")
	wantIn(t, "collection page", p, held)
	wantNotIn(t, "collection page", p, stamp)
}

// retryForm matches the retry button's form of a history row: its
// expected time and whether it is a run now's.
var retryForm = regexp.MustCompile(`<form method="post" action="[^"]*/retry" class="retry-form" data-async><input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="expected" value="([^"]*)">(<input type="hidden" name="manual" value="1">)?`)

// TestRetryFromHistory: the row of a faulted occurrence has a Retry
// button; sent, it runs that occurrence again, once, as a backfill of
// its expected time (a run now's as another run now). Rows of
// occurrences that succeeded have none.
func TestRetryFromHistory(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "ok", "/ok", `"recurrence": {"frequency": "Hour"}`)
	e.job("sub/rg/c", "j", "/fail", `"recurrence": {"frequency": "Hour"}`) // its first occurrence is now, and faults
	h := e.waitHistory("sub/rg/c", "j", 1)
	if !h[0].Faulted {
		t.Fatalf("first entry %+v, want a faulted one", h[0])
	}
	e.waitHistory("sub/rg/c", "ok", 1)
	wantNotIn(t, "the job that succeeded", e.get(jobPath("sub/rg/c", "ok")), `class="retry-form"`)
	path := jobPath("sub/rg/c", "j")
	p := e.get(path)
	m := retryForm.FindAllStringSubmatch(p.body, -1)
	if len(m) != 1 || m[0][1] != h[0].ExpectedExecutionTime.UTC().Format(time.RFC3339Nano) || m[0][2] != "" {
		t.Fatalf("retry forms on the job page: %q, want one for the occurrence expected at %v", m, h[0].ExpectedExecutionTime)
	}
	res := e.post(path+"/retry", url.Values{"csrf": {e.token(path)}, "expected": {m[0][1]}})
	wantStatus(t, "retry", res, http.StatusSeeOther)
	if loc := res.header.Get("Location"); !strings.HasSuffix(loc, "?flash=retry") {
		t.Errorf("retry leads to %q, want the job with flash=retry", loc)
	}
	h = e.waitHistory("sub/rg/c", "j", 2)
	if !h[0].Backfill || !h[0].ExpectedExecutionTime.Equal(h[1].ExpectedExecutionTime) {
		t.Errorf("the retry's entry %+v: want a backfilled attempt of the occurrence expected at %v", h[0], h[1].ExpectedExecutionTime)
	}

	// A run now that faults: its retry is another run now.
	wantStatus(t, "run now", e.post(path+"/run", url.Values{"csrf": {e.token(path)}}), http.StatusSeeOther)
	e.waitHistory("sub/rg/c", "j", 3)
	m = retryForm.FindAllStringSubmatch(e.get(path).body, -1)
	if len(m) != 3 || m[0][2] == "" {
		t.Fatalf("retry forms after a faulted run now: %q, want three, the newest a run now's", m)
	}
	wantStatus(t, "retry the run now", e.post(path+"/retry", url.Values{"csrf": {e.token(path)}, "expected": {m[0][1]}, "manual": {"1"}}), http.StatusSeeOther)
	h = e.waitHistory("sub/rg/c", "j", 4)
	if !h[0].Manual {
		t.Errorf("the run now's retry %+v: want a run now", h[0])
	}
}

// TestDeleteCollection: the collection's Delete leads to a confirmation
// that names the jobs it removes; a post without the confirmation leads
// there too, and the confirmed one deletes the collection with its jobs.
func TestDeleteCollection(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.collection("sub/rg/keep", nil)
	for _, name := range []string{"b-job", "a-job"} {
		e.job("sub/rg/c", name, "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	}
	e.job("sub/rg/keep", "other", "/ok", `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	cp := collPath("sub/rg/c")
	wantIn(t, "collection page", e.get(cp), `<a href="`+cp+`/delete" class="button danger" id="collection-delete">`)
	p := e.get(cp + "/delete")
	wantStatus(t, "confirmation", p, http.StatusOK)
	wantIn(t, "confirmation", p, `its 2 jobs and their whole history`, `<ul class="delete-jobs" id="delete-jobs"><li>a-job</li><li>b-job</li></ul>`, `id="confirm-delete"`)
	tok := e.token(cp + "/delete")
	res := e.post(cp+"/delete", url.Values{"csrf": {tok}})
	wantStatus(t, "delete without confirm", res, http.StatusSeeOther)
	if loc := res.header.Get("Location"); loc != cp+"/delete" {
		t.Errorf("delete without confirm leads to %q, want the confirmation", loc)
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/c"); err != nil {
		t.Fatalf("a delete without confirm deleted the collection: %v", err)
	}
	res = e.post(cp+"/delete", url.Values{"csrf": {tok}, "confirm": {"yes"}, "jobs": {seenJobs(t, p)}, "etag": {formETag(t, p)}})
	wantStatus(t, "delete", res, http.StatusSeeOther)
	if loc := res.header.Get("Location"); loc != "/?flash=collection-deleted" {
		t.Errorf("delete leads to %q, want the overview", loc)
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/c"); err == nil {
		t.Error("the collection is still there")
	}
	if _, err := e.s.GetJob(ctx, "sub/rg/c", "a-job"); err == nil {
		t.Error("its job is still there")
	}
	if _, err := e.s.GetJob(ctx, "sub/rg/keep", "other"); err != nil {
		t.Errorf("the other collection's job: %v", err)
	}
	wantIn(t, "overview after", e.get("/?flash=collection-deleted"), "The collection was deleted with its jobs and their history.")
	wantStatus(t, "confirmation of a deleted collection", e.get(cp+"/delete"), http.StatusNotFound)
}

// seenPattern finds what a collection's deletion confirmation says of the
// jobs it showed.
var seenPattern = regexp.MustCompile(`<input type="hidden" name="jobs" value="([0-9a-f]+)">`)

// etagPattern finds the ETag a deletion's confirmation deletes.
var etagPattern = regexp.MustCompile(`<input type="hidden" name="etag" value="([^"]+)">`)

// formETag returns the ETag the confirmation p deletes.
func formETag(t *testing.T, p page) string {
	t.Helper()
	m := etagPattern.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the confirmation has no field for the ETag it deletes:\n%s", p.body)
	}
	return m[1]
}

// seenJobs returns what the confirmation p says of the jobs it showed.
func seenJobs(t *testing.T, p page) string {
	t.Helper()
	m := seenPattern.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the confirmation has no field for the jobs it shows:\n%s", p.body)
	}
	return m[1]
}

// TestDeleteCollectionChanged: a confirmed deletion deletes only the
// jobs the confirmation showed. When a job was put in the collection
// since, or one of its jobs was deleted and created again under its
// name, nothing is deleted and the confirmation shows the jobs as they
// are now, saying why; confirming that one deletes the collection.
func TestDeleteCollectionChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	hourly := `"recurrence": {"frequency": "Hour"}, "startTime": "` + later(time.Hour) + `"`
	e.job("sub/rg/c", "a-job", "/ok", hourly)
	cp := collPath("sub/rg/c")
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"a job put since", func() { e.job("sub/rg/c", "b-job", "/ok", hourly) }},
		{"a job created again since", func() {
			if err := e.s.DeleteJob(ctx, "sub/rg/c", "a-job", nil); err != nil {
				t.Fatal(err)
			}
			e.job("sub/rg/c", "a-job", "/ok", hourly)
		}},
	} {
		p := e.get(cp + "/delete")
		seen := seenJobs(t, p)
		tok := e.token(cp + "/delete")
		change.do()
		res := e.post(cp+"/delete", url.Values{"csrf": {tok}, "confirm": {"yes"}, "jobs": {seen}, "etag": {formETag(t, p)}})
		wantStatus(t, change.name, res, http.StatusSeeOther)
		if loc, want := res.header.Get("Location"), cp+"/delete?flash=collection-changed"; loc != want {
			t.Errorf("%s: the delete leads to %q, want %q", change.name, loc, want)
		}
		if _, err := e.s.GetJob(ctx, "sub/rg/c", "a-job"); err != nil {
			t.Fatalf("%s: the delete deleted the collection's jobs: %v", change.name, err)
		}
		p = e.get(cp + "/delete?flash=collection-changed")
		wantIn(t, change.name, p, "Nothing was deleted: the collection&#39;s jobs changed since the confirmation.")
		if seenJobs(t, p) == seen {
			t.Errorf("%s: the confirmation says the same of the jobs as before the change", change.name)
		}
	}
	p := e.get(cp + "/delete")
	wantIn(t, "confirmation", p, `<ul class="delete-jobs" id="delete-jobs"><li>a-job</li><li>b-job</li></ul>`)
	res := e.post(cp+"/delete", url.Values{"csrf": {e.token(cp + "/delete")}, "confirm": {"yes"}, "jobs": {seenJobs(t, p)}, "etag": {formETag(t, p)}})
	if loc := res.header.Get("Location"); loc != "/?flash=collection-deleted" {
		t.Errorf("the delete confirmed again leads to %q, want the overview", loc)
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/c"); err == nil {
		t.Error("the collection confirmed again is still there")
	}
}

// TestSortAcrossPages: sorted by next run, the first page holds the jobs
// that run first of the whole collection, not the first page of names
// sorted, and the pages go on in that order; so do pages sorted by
// state.
func TestSortAcrossPages(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 100}}})
	base := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	// job-00 runs last, job-59 first.
	for i := range 60 {
		start := base.Add(time.Duration(59-i) * time.Minute)
		e.job("sub/rg/c", fmt.Sprintf("job-%02d", i), "/ok", `"recurrence": {"frequency": "Day"}, "startTime": "`+start.Format(time.RFC3339)+`"`)
	}
	order := func(p page) []string {
		var names []string
		for _, m := range jobLink.FindAllStringSubmatch(p.body, -1) {
			names = append(names, m[1])
		}
		return names
	}
	want := func(from, to int) []string { // job-from down to job-to
		var out []string
		for i := from; i >= to; i-- {
			out = append(out, fmt.Sprintf("job-%02d", i))
		}
		return out
	}
	cp := collPath("sub/rg/c")
	if diff := cmp.Diff(want(59, 35), order(e.get(cp+"?top=25&sort=next"))); diff != "" {
		t.Errorf("first page by next run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(34, 10), order(e.get(cp+"?top=25&sort=next&skip=25"))); diff != "" {
		t.Errorf("second page by next run (-want +got):\n%s", diff)
	}
	p := e.get(cp + "?top=25&sort=next&order=desc&skip=50")
	var last []string // the ones that run first, the last of them first
	for i := 50; i <= 59; i++ {
		last = append(last, fmt.Sprintf("job-%02d", i))
	}
	if diff := cmp.Diff(last, order(p)); diff != "" {
		t.Errorf("last page by next run, descending (-want +got):\n%s", diff)
	}
	wantIn(t, "last page by next run, descending", p, "Jobs 51–60 of 60", "pages follow the order of Next run across all of them")

	// By state: the Disabled jobs come before the Enabled ones, each in
	// name order.
	for i := 55; i < 60; i++ {
		if _, err := e.s.DisableJob(ctx, "sub/rg/c", fmt.Sprintf("job-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	names := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("job-%02d", i))
		}
		return out
	}
	if diff := cmp.Diff(append(names(55, 59), names(0, 19)...), order(e.get(cp+"?top=25&sort=state"))); diff != "" {
		t.Errorf("first page by state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(names(20, 44), order(e.get(cp+"?top=25&sort=state&skip=25"))); diff != "" {
		t.Errorf("second page by state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(names(50, 54), names(55, 59)...), order(e.get(cp+"?top=25&sort=state&order=desc&skip=50"))); diff != "" {
		t.Errorf("last page by state, descending (-want +got):\n%s", diff)
	}
}

// jobLink matches the link of a job in a table, with its name.
var jobLink = regexp.MustCompile(`class="job-link">([^<]*)</a>`)

// TestSortTiesAndNone: sorted by next run, jobs that run at one instant
// are in name order and a job without a next run comes last; descending,
// the exact reverse. A collection that is not Enabled shows no next run,
// so its jobs sorted by next run are in name order.
func TestSortTiesAndNone(t *testing.T) {
	e := newEnv(t, envOptions{})
	base := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	at := func(d time.Duration) string {
		return `"recurrence": {"frequency": "Day"}, "startTime": "` + base.Add(d).Format(time.RFC3339) + `"`
	}
	order := func(p page) []string {
		var names []string
		for _, m := range jobLink.FindAllStringSubmatch(p.body, -1) {
			names = append(names, m[1])
		}
		return names
	}
	for _, coll := range []string{"sub/rg/on", "sub/rg/off"} {
		def := &scheduler.JobCollection{}
		if coll == "sub/rg/off" {
			def.Properties.State = scheduler.CollectionDisabled
		}
		e.collection(coll, def)
		e.job(coll, "d", "/ok", at(time.Minute))
		e.job(coll, "c", "/ok", at(0))
		e.job(coll, "b", "/ok", at(-time.Minute)+`, "state": "Disabled"`)
		e.job(coll, "a", "/ok", at(0))
	}
	for _, tt := range []struct {
		coll, query string
		want        []string
	}{
		{"sub/rg/on", "?sort=next", []string{"a", "c", "d", "b"}},
		{"sub/rg/on", "?sort=next&order=desc", []string{"b", "d", "c", "a"}},
		{"sub/rg/on", "?sort=next&top=25&skip=0&state=Enabled&order=desc", []string{"d", "c", "a"}},
		{"sub/rg/off", "?sort=next", []string{"a", "b", "c", "d"}},
		{"sub/rg/off", "?sort=next&order=desc", []string{"d", "c", "b", "a"}},
	} {
		if diff := cmp.Diff(tt.want, order(e.get(collPath(tt.coll)+tt.query))); diff != "" {
			t.Errorf("%s%s (-want +got):\n%s", tt.coll, tt.query, diff)
		}
	}
}

// TestWaitingForWorkerShown: with one worker busy on an attempt that does
// not end, a second job due meanwhile is not claimed; its page and its
// collection's table say that it waits for a worker, not that it runs,
// while the first job is marked running.
func TestWaitingForWorkerShown(t *testing.T) {
	e := newEnv(t, envOptions{maxConcurrency: 1})
	e.collection("c", nil)
	started, release := make(chan struct{}, 2), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))
	defer slow.Close()
	defer close(release)
	for _, name := range []string{"a", "b"} {
		def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+slow.URL+`/", "method": "POST"}, "retryPolicy": {"retryType": "None"}},
			"recurrence": {"frequency": "Hour"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutJob(ctx, "c", name, def, nil); err != nil {
			t.Fatal(err)
		}
	}
	<-started // the one worker is busy from now on
	runs, waits := "", ""
	for _, name := range []string{"a", "b"} {
		rec, err := e.s.GetJob(ctx, "c", name)
		if err != nil {
			t.Fatal(err)
		}
		if rec.LeaseOwner != "" {
			runs = name
		} else {
			waits = name
		}
	}
	if runs == "" || waits == "" {
		t.Fatalf("one job should hold a lease and the other not: running %q, waiting %q", runs, waits)
	}
	p := e.get(jobPath("c", waits))
	wantIn(t, "the waiting job's page", p, `<span class="badge waiting" title="Due since `, `>waiting for a worker</span>`,
		"every one of this instance&#39;s 1 workers is busy (Config.MaxConcurrency), so none has claimed it yet.")
	wantNotIn(t, "the waiting job's page", p, `class="badge running"`, `class="last-running"`)
	wantIn(t, "the running job's page", e.get(jobPath("c", runs)), `class="badge running"`)
	wantNotIn(t, "the running job's page", e.get(jobPath("c", runs)), `class="badge waiting"`)
	c := e.get(collPath("c"))
	if n := strings.Count(c.body, `class="badge waiting"`); n != 1 {
		t.Errorf("the collection page marks %d jobs waiting, want 1", n)
	}
	if n := strings.Count(c.body, `class="badge running"`); n != 1 {
		t.Errorf("the collection page marks %d jobs running, want 1", n)
	}
}

// TestSortByShownNextWithCalendar: in a collection whose jobs name an
// exclusion calendar or none, sorted by next run, the rows are in the
// order of the next runs they show, also for a job whose record holds an
// occurrence planned under an older version of its calendar (which the
// list shows where the calendar now places it), in either direction and
// from a page's first row on.
func TestSortByShownNextWithCalendar(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	year := time.Now().Year() + 1
	day := func(d, h int) time.Time { return time.Date(year, 1, d, h, 0, 0, 0, time.UTC) }
	from := func(t time.Time) string {
		return `"startTime": "` + t.Format(time.RFC3339) + `", "recurrence": {"frequency": "Day"`
	}
	e.calendar("c", "hol", fmt.Sprintf(`{"properties": {"dates": ["%d-01-03"]}}`, year))
	e.job("c", "cal", "/ok", from(day(3, 0))+`, "calendar": "hol"}`) // runs on the 4th
	e.job("c", "plain", "/ok", from(day(3, 12))+"}")
	e.job("c", "later", "/ok", from(day(5, 0))+"}")
	// As an instance that held the calendar before it excluded the 3rd
	// planned it: the record's next execution is the 3rd.
	for try := 0; ; try++ {
		rec, err := e.store.GetJob(ctx, "c", "cal")
		if err != nil {
			t.Fatal(err)
		}
		stale := day(3, 0)
		rec.Schedule.NextOccurrence, rec.Schedule.DueAt, rec.Status.NextExecutionTime = stale, stale, &stale
		if err = e.store.PutJob(ctx, rec); err == nil {
			break
		} else if !errors.Is(err, scheduler.ErrConflict) || try == 10 {
			t.Fatal(err)
		}
	}
	order := func(p page) []string {
		var names []string
		for _, m := range jobLink.FindAllStringSubmatch(p.body, -1) {
			names = append(names, m[1])
		}
		return names
	}
	cp := collPath("c")
	p := e.get(cp + "?sort=next")
	wantIn(t, "sorted by next run", p, `<time datetime="`+day(4, 0).Format(time.RFC3339)+`">`)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"?sort=next", []string{"plain", "cal", "later"}},
		{"?sort=next&order=desc", []string{"later", "cal", "plain"}},
		{"?sort=next&skip=1", []string{"cal", "later"}},
		{"?sort=next&order=desc&skip=2", []string{"plain"}},
	} {
		if diff := cmp.Diff(c.want, order(e.get(cp+c.query))); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", c.query, diff)
		}
	}
}

// deleteLinkPattern finds the Delete link of a job page.
var deleteLinkPattern = regexp.MustCompile(`<a href="([^"]+)" class="button danger" id="delete">`)

// TestDeleteJobChanged: a job's deletion deletes the job only as its page
// showed it. When the job was written since (before the confirmation page
// or after it), nothing is deleted and the job's page shows the job as it
// is now, saying why; deleting from that page deletes it. A job deleted
// meanwhile is not found.
func TestDeleteJobChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	hourly := func(path string) {
		e.job("c", "j", path, `"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"`)
	}
	hourly("/one")
	jp := jobPath("c", "j")
	// confirmation follows the job page's Delete link and returns the
	// confirmation.
	confirmation := func() page {
		m := deleteLinkPattern.FindStringSubmatch(e.get(jp).body)
		if m == nil {
			t.Fatalf("the job page has no Delete link")
		}
		link, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		return e.get(strings.TrimPrefix(link.RequestURI(), e.prefix))
	}
	for _, tt := range []struct {
		name   string
		before bool   // written before the confirmation page, after the job page
		path   string // of the job as written since
	}{
		{"written after the confirmation", false, "/two"},
		{"written after the job page", true, "/three"},
	} {
		var p page
		if tt.before {
			m := deleteLinkPattern.FindStringSubmatch(e.get(jp).body)
			if m == nil {
				t.Fatalf("the job page has no Delete link")
			}
			hourly(tt.path)
			link, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			p = e.get(strings.TrimPrefix(link.RequestURI(), e.prefix))
		} else {
			p = confirmation()
			hourly(tt.path)
		}
		wantStatus(t, tt.name, p, http.StatusOK)
		res := e.post(jp+"/delete", url.Values{"csrf": {e.token(jp)}, "confirm": {"yes"}, "etag": {formETag(t, p)}})
		wantStatus(t, tt.name, res, http.StatusSeeOther)
		if loc, want := res.header.Get("Location"), jp+"?flash=delete-changed"; loc != want {
			t.Errorf("%s: the delete leads to %q, want %q", tt.name, loc, want)
		}
		if _, err := e.s.GetJob(ctx, "c", "j"); err != nil {
			t.Fatalf("%s: the delete deleted the job: %v", tt.name, err)
		}
		wantIn(t, tt.name, e.get(jp+"?flash=delete-changed"), "Nothing was deleted: the job changed since its page was shown", tt.path+"</span>")
	}
	p := confirmation()
	res := e.post(jp+"/delete", url.Values{"csrf": {e.token(jp)}, "confirm": {"yes"}, "etag": {formETag(t, p)}})
	if loc, want := res.header.Get("Location"), collPath("c")+"?flash=deleted&job=j"; loc != want {
		t.Errorf("the delete from the job as it is leads to %q, want %q", loc, want)
	}
	if _, err := e.s.GetJob(ctx, "c", "j"); err == nil {
		t.Error("the job is still there after its delete from the job as it is")
	}
	// Deleted meanwhile: not found.
	hourly("/again")
	p = confirmation()
	if err := e.s.DeleteJob(ctx, "c", "j", nil); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "a job deleted meanwhile", e.post(jp+"/delete", url.Values{"csrf": {e.token(collPath("c"))}, "confirm": {"yes"}, "etag": {formETag(t, p)}}), http.StatusNotFound)
	// Without the ETag, the post leads to the confirmation.
	hourly("/more")
	res = e.post(jp+"/delete", url.Values{"csrf": {e.token(jp)}, "confirm": {"yes"}})
	if loc := res.header.Get("Location"); res.status != http.StatusSeeOther || loc != jp+"/delete" {
		t.Errorf("delete without the ETag = %d to %q, want the confirmation", res.status, loc)
	}
	if _, err := e.s.GetJob(ctx, "c", "j"); err != nil {
		t.Errorf("a delete without the ETag deleted the job: %v", err)
	}
}

// TestDeleteCollectionReplaced: a collection written again since its
// deletion's confirmation (here: its quota changed; its jobs, none, are
// the same) is not deleted, and the confirmation shows it again saying
// why; confirming that one deletes it.
func TestDeleteCollectionReplaced(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	cp := collPath("sub/rg/c")
	p := e.get(cp + "/delete")
	tok := e.token(cp + "/delete")
	e.collection("sub/rg/c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 7}}})
	res := e.post(cp+"/delete", url.Values{"csrf": {tok}, "confirm": {"yes"}, "jobs": {seenJobs(t, p)}, "etag": {formETag(t, p)}})
	wantStatus(t, "delete of a collection written since", res, http.StatusSeeOther)
	if loc, want := res.header.Get("Location"), cp+"/delete?flash=collection-replaced"; loc != want {
		t.Errorf("the delete of a collection written since leads to %q, want %q", loc, want)
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/c"); err != nil {
		t.Fatalf("the delete deleted the collection written since: %v", err)
	}
	p = e.get(cp + "/delete?flash=collection-replaced")
	wantIn(t, "confirmation again", p, "Nothing was deleted: the collection was written again since the confirmation.")
	res = e.post(cp+"/delete", url.Values{"csrf": {e.token(cp + "/delete")}, "confirm": {"yes"}, "jobs": {seenJobs(t, p)}, "etag": {formETag(t, p)}})
	if loc := res.header.Get("Location"); loc != "/?flash=collection-deleted" {
		t.Errorf("the delete confirmed again leads to %q, want the overview", loc)
	}
	if _, err := e.s.GetCollection(ctx, "sub/rg/c"); err == nil {
		t.Error("the collection confirmed again is still there")
	}
}
