package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

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
	held := `<span class="note held">none while its collection is Disabled</span>`
	p := e.get(jobPath("sub/rg/c", "j"))
	wantIn(t, "job page", p, `<dd id="next-run">`+held+`</dd>`, `id="health">`+string(rec.Status.Health)+`<`,
		"Its collection is Disabled: none of these runs while it is.")
	p = e.get("/collections/sub%2Frg%2Fc")
	wantIn(t, "collection page", p, held)
	wantNotIn(t, "collection page", p, stamp)
}
