package browsertest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/store/memory"
)

// TestBrowserOperator operates jobs as an operator would: watches a job
// marked running while its attempt is in progress and no longer once it
// ends, retries a faulted occurrence from its history row and sees the
// retry marked backfilled, runs a job now and sees that run marked,
// disables the collection and sees no next run, then deletes the
// collection after a confirmation that names its jobs (a job put in it
// after the confirmation was shown makes the deletion delete nothing and
// show the confirmation again).
func TestBrowserOperator(t *testing.T) {
	release := make(chan struct{})
	exec := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		switch uri := req.Action.Request.URI; {
		case strings.Contains(uri, "slow"):
			select {
			case <-release:
			case <-ctx.Done():
			}
		case strings.Contains(uri, "fail"):
			return &action.Result{Message: "HTTP 503 Service Unavailable"}, errors.New("HTTP 503")
		}
		return &action.Result{Message: "HTTP 200 OK"}, nil
	})
	reg := new(action.Registry)
	reg.Register(action.HTTPS, exec)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "contoso/prod/ops", &scheduler.JobCollection{Location: "West Europe"}, nil); err != nil {
		t.Fatal(err)
	}
	for name, uri := range map[string]string{"export": "https://ops.contoso.example/fail/export", "rebuild": "https://ops.contoso.example/slow/rebuild"} {
		def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "`+uri+`", "method": "POST"}, "retryPolicy": {"retryType": "None"}},
			"recurrence": {"frequency": "Hour"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "contoso/prod/ops", name, def, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	defer close(release)
	mux := http.NewServeMux()
	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Refresh: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	coll := srv.URL + "/ui/collections/contoso%2Fprod%2Fops"

	// The slow job's first attempt is in progress: marked running, in its
	// collection's table and on its page.
	b.do("open the collection", chromedp.Navigate(coll), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	b.waitFor("the running mark in the table", `document.querySelector("table.jobs .badge.running") !== null`)
	b.clickAndLoad("open the running job", `a.job-link[href$="/rebuild"]`)
	b.waitFor("the running mark on the job page", `document.querySelector("#job-state .badge.running") !== null`)
	if s := b.text("#facts"); !strings.Contains(s, "An attempt is running now, on instance") {
		t.Errorf("the job's summary while it runs:\n%s", s)
	}
	b.screenshot("console-running")
	release <- struct{}{}
	b.waitFor("the mark gone once the attempt ended", `document.querySelector("#job-state .badge.running") === null && document.querySelectorAll("#history tr.entry-Completed").length === 1`)

	// The failing job's occurrence faulted: retry it from its row.
	b.do("open the failing job", chromedp.Navigate(coll+"/jobs/export"), chromedp.WaitVisible(chromedp.ID("history")))
	b.waitFor("the faulted row with its Retry", `document.querySelector("#history tr.entry-Failed button.retry") !== null`)
	b.do("retry", chromedp.Click(chromedp.CSS("#history tr.entry-Failed button.retry")))
	b.waitFor("the retry's row, marked backfilled", `document.querySelectorAll("#history tr.entry-Failed").length === 2 && document.querySelector("#history .badge.backfill") !== null`)
	if s := b.text("#flash"); !strings.Contains(s, "Retry requested") {
		t.Errorf("flash after the retry = %q", s)
	}

	// Run it now: that run's row is marked.
	b.do("run now", chromedp.Click(chromedp.ID("run-now")))
	b.waitFor("the run's row, marked run now", `document.querySelectorAll("#history tr.entry-Failed").length === 3 && document.querySelector("#history .badge.manual") !== null`)
	if n := eval[int](b, `document.querySelectorAll("#history .badge.manual").length`); n != 1 {
		t.Errorf("%d rows marked run now, want 1", n)
	}
	b.screenshot("console-retry")

	// Delete it, but the job is written after its page was shown: the
	// confirmed deletion deletes nothing, and the job page says why.
	b.clickAndLoad("delete the job", "#delete")
	if _, err := s.DisableJob(ctx, "contoso/prod/ops", "export"); err != nil {
		t.Fatal(err)
	}
	b.clickAndLoad("confirm, the job changed", "#confirm-delete")
	if s := b.text("#flash"); !strings.Contains(s, "Nothing was deleted: the job changed since its page was shown") {
		t.Errorf("flash after the refused job deletion = %q", s)
	}
	if _, err := s.GetJob(ctx, "contoso/prod/ops", "export"); err != nil {
		t.Errorf("the refused deletion deleted the job: %v", err)
	}
	b.screenshot("console-delete-job-changed")
	if _, err := s.EnableJob(ctx, "contoso/prod/ops", "export"); err != nil {
		t.Fatal(err)
	}

	// Disable the collection: the job has no next run while it is.
	b.do("open the collection", chromedp.Navigate(coll), chromedp.WaitVisible(chromedp.ID("collection-disable")))
	b.clickAndLoad("disable the collection", "#collection-disable")
	if s := b.text("table.jobs"); strings.Count(s, "none while its collection is Disabled") != 2 {
		t.Errorf("the jobs of the disabled collection:\n%s", s)
	}

	// Delete it, after a confirmation that names its jobs.
	b.clickAndLoad("delete", "#collection-delete")
	if got := eval[string](b, `Array.from(document.querySelectorAll("#delete-jobs li"), li => li.textContent).join(",")`); got != "export,rebuild" {
		t.Errorf("the confirmation names %q, want export,rebuild", got)
	}
	b.screenshot("console-delete-collection")
	// A job put in it after the confirmation was shown: the confirmed
	// deletion deletes nothing, and the confirmation names it too.
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "https://ops.contoso.example/late", "method": "POST"}},
		"recurrence": {"frequency": "Hour"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "contoso/prod/ops", "late", def, nil); err != nil {
		t.Fatal(err)
	}
	b.clickAndLoad("confirm, the jobs changed", "#confirm-delete")
	if s := b.text("#flash"); !strings.Contains(s, "Nothing was deleted: the collection's jobs changed since the confirmation.") {
		t.Errorf("flash after the refused deletion = %q", s)
	}
	if got := eval[string](b, `Array.from(document.querySelectorAll("#delete-jobs li"), li => li.textContent).join(",")`); got != "export,late,rebuild" {
		t.Errorf("the confirmation after the change names %q, want export,late,rebuild", got)
	}
	if _, err := s.GetJob(ctx, "contoso/prod/ops", "export"); err != nil {
		t.Errorf("the refused deletion deleted a job: %v", err)
	}
	b.screenshot("console-delete-collection-changed")
	b.clickAndLoad("confirm", "#confirm-delete")
	if s := b.text("#flash"); !strings.Contains(s, "The collection was deleted") {
		t.Errorf("flash after the deletion = %q", s)
	}
	if _, err := s.GetCollection(ctx, "contoso/prod/ops"); err == nil {
		t.Error("the collection is still there")
	}
}

// TestBrowserWaiting: with its one worker busy on an attempt that does
// not end, a second job due meanwhile is marked waiting for a worker in
// its collection's table and on its page, not running, while the first
// is marked running.
func TestBrowserWaiting(t *testing.T) {
	release := make(chan struct{})
	exec := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &action.Result{Message: "HTTP 200 OK"}, nil
	})
	reg := new(action.Registry)
	reg.Register(action.HTTPS, exec)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond, MaxConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "contoso/prod/batch", &scheduler.JobCollection{Location: "West Europe"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"compact", "reindex"} {
		def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "https://batch.contoso.example/`+name+`", "method": "POST"}, "retryPolicy": {"retryType": "None"}},
			"recurrence": {"frequency": "Hour"}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "contoso/prod/batch", name, def, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	defer close(release)
	mux := http.NewServeMux()
	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Refresh: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	coll := srv.URL + "/ui/collections/contoso%2Fprod%2Fbatch"

	b.do("open the collection", chromedp.Navigate(coll), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	b.waitFor("one job running and one waiting", `document.querySelectorAll("table.jobs .badge.running").length === 1 && document.querySelectorAll("table.jobs .badge.waiting").length === 1`)
	if s := b.text("table.jobs .badge.waiting"); s != "waiting for a worker" {
		t.Errorf("the waiting badge says %q", s)
	}
	b.screenshot("console-waiting")
	b.clickAndLoad("open the waiting job", `table.jobs tr:has(.badge.waiting) a.job-link`)
	if n := eval[int](b, `document.querySelectorAll("#job-state .badge.running").length`); n != 0 {
		t.Errorf("the waiting job's page marks it running")
	}
	if s := b.text("#facts"); !strings.Contains(s, "every one of this instance's 1 workers is busy") {
		t.Errorf("the waiting job's summary:\n%s", s)
	}
}
