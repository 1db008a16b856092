package browsertest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// The browser tests drive headless Chromium (Debian's chromium package)
// through the dashboard as a person would. Without a browser they skip,
// and fail when CI=true. -update-screenshots rewrites the PNG files that
// README shows; otherwise the screenshots go to a temporary directory.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the browser tests' screenshots to ../../docs/screenshots")

// chromiumPath finds the browser.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH; scripts/test.sh installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH; install it (apt-get install chromium) or run scripts/test.sh")
	return ""
}

// browser is a headless Chromium tab that records what must not happen:
// dialogs (a script injected through data would open one), uncaught
// exceptions and Content-Security-Policy violations.
type browser struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	dialogs []string
	errs    []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.WindowSize(1280, 900),
	)
	// Chromium now and then crashes as it starts (seen in CI: "chrome
	// failed to start", a crashpad report and no page served): it is
	// started again, with a new profile, up to three times.
	var ctx context.Context
	var err error
	for try := 1; try <= 3; try++ {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		c, cancel := chromedp.NewContext(alloc)
		if err = chromedp.Do(c); err == nil { // starts the browser
			ctx = c
			t.Cleanup(func() {
				cancel()
				cancelAlloc()
			})
			break
		}
		cancel()
		cancelAlloc()
		t.Logf("start chromium, try %d of 3: %v", try, err)
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &browser{t: t, ctx: ctx}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}); err != nil {
		t.Fatal(err)
	}
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	entries := chromedp.Events(ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.errs = append(b.errs, (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
			b.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if txt := ev.Entry.Text; strings.Contains(txt, "Content Security Policy") || strings.Contains(txt, "Refused to") {
				b.mu.Lock()
				b.errs = append(b.errs, txt)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(b.clean)
	return b
}

// clean fails the test for every dialog, exception and CSP violation
// seen.
func (b *browser) clean() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.dialogs {
		b.t.Errorf("a dialog opened: %q (a script from the data ran)", d)
	}
	for _, e := range b.errs {
		b.t.Errorf("browser error: %s", e)
	}
	b.dialogs, b.errs = nil, nil
}

// do runs steps, failing the test with what when one fails or takes more
// than 20s.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text returns the text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.t.Fatalf("%s: %s never held: %v", what, cond, err)
	}
}

// clickAndLoad clicks sel and waits for the page it leads to.
func (b *browser) clickAndLoad(what, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(cdppage.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		b.t.Fatalf("%s: click %s: %v", what, sel, err)
	}
}

// screenshot saves what the window shows as name.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if !*updateScreenshots {
		dir = filepath.Join(os.TempDir(), "jobclock-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// demo is a scheduler with the jobs of an operations team and a day of
// history, served by the dashboard. Its actions go to a fake executor:
// URIs containing "fail" answer 503, others 200.
type demo struct {
	store *memory.Store
	s     *scheduler.Scheduler
	url   string // the dashboard's root, ending in /ui
}

func newDemo(t *testing.T, auth bool) *demo {
	t.Helper()
	d := &demo{store: memory.New()}
	exec := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		if strings.Contains(req.Action.Request.URI, "fail") {
			return &action.Result{Message: "HTTP 503 Service Unavailable: upstream is down for maintenance"}, errors.New("HTTP 503")
		}
		return &action.Result{Message: "HTTP 200 OK: {\"ok\": true}"}, nil
	})
	reg := new(action.Registry)
	reg.Register(action.HTTP, exec)
	reg.Register(action.HTTPS, exec)
	s, err := scheduler.New(d.store, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler),
		MinRetryInterval: time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.s = s
	d.seed(t)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	opts := &dashboard.Options{Prefix: "/ui", Refresh: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	if auth {
		a, err := httpapi.NewTokenAuth(adminToken + " *\n" + limitedToken + " contoso\n")
		if err != nil {
			t.Fatal(err)
		}
		opts.Authenticator = a
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", dashboard.New(s, opts))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d.url = srv.URL + "/ui"
	return d
}

// seed puts the demo's collections and jobs, and a day of history
// recorded straight into the store, before the scheduler starts.
func (d *demo) seed(t *testing.T) {
	t.Helper()
	colls := []struct {
		name string
		def  scheduler.JobCollection
	}{
		{"contoso/prod/billing", scheduler.JobCollection{Location: "West Europe", Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium}}}},
		{"contoso/prod/reports", scheduler.JobCollection{Location: "West Europe"}},
		{"contoso/staging/smoke", scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}, State: scheduler.CollectionSuspended}}},
		{"fabrikam/ops/backups", scheduler.JobCollection{Location: "North Europe"}},
	}
	for _, c := range colls {
		if _, err := d.s.PutCollection(ctx, c.name, &c.def, nil); err != nil {
			t.Fatal(err)
		}
	}
	jobs := []struct{ coll, name, def string }{
		{"contoso/prod/billing", "nightly-invoices", `{"action": {"type": "Https", "request": {"uri": "https://billing.contoso.example/api/invoices/run?code=abc", "method": "POST",
			"headers": {"Authorization": "Bearer secret-token"}, "authentication": {"type": "Basic", "username": "scheduler", "password": "hunter2"}},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT5M", "retryCount": 3}},
			"recurrence": {"frequency": "Day", "schedule": {"hours": [2], "minutes": [30]}, "timeZone": "Europe/Berlin"}}`},
		{"contoso/prod/billing", "sync-crm", `{"action": {"type": "Https", "request": {"uri": "https://crm.contoso.example/sync", "method": "POST"}},
			"recurrence": {"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}}}`},
		{"contoso/prod/billing", "month-end-close", `{"action": {"type": "Https", "request": {"uri": "https://billing.contoso.example/api/close", "method": "POST"}},
			"recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}], "hours": [5], "minutes": [15]}, "timeZone": "Europe/Berlin"}}`},
		{"contoso/prod/billing", "legacy-export", `{"action": {"type": "Http", "request": {"uri": "http://legacy.contoso.example/fail/export", "method": "GET"},
			"retryPolicy": {"retryType": "None"}}}`},
		{"contoso/prod/reports", "weekly-digest", `{"action": {"type": "Https", "request": {"uri": "https://reports.contoso.example/digest", "method": "POST"}},
			"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22], "minutes": [0]}, "timeZone": "America/New_York"}}`},
		{"contoso/prod/reports", "cache-warmup", `{"action": {"type": "Https", "request": {"uri": "https://reports.contoso.example/warm", "method": "GET"}},
			"recurrence": {"frequency": "Hour", "interval": 2}, "state": "Disabled"}`},
		{"contoso/staging/smoke", "ping", `{"action": {"type": "Https", "request": {"uri": "https://staging.contoso.example/ping", "method": "GET"}},
			"recurrence": {"frequency": "Hour"}}`},
		{"fabrikam/ops/backups", "snapshot", `{"action": {"type": "Https", "request": {"uri": "https://ops.fabrikam.example/snapshot", "method": "POST"}},
			"recurrence": {"frequency": "Day", "schedule": {"hours": [1], "minutes": [0]}}}`},
	}
	for _, j := range jobs {
		job, err := scheduler.ParseJob([]byte(j.def), nil)
		if err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		if _, err := d.s.PutJob(ctx, j.coll, j.name, job, nil); err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
	}
	// A day of history for sync-crm (every 15 minutes, a bad hour in the
	// morning) and nightly-invoices; recorded as the Scheduler would.
	now := time.Now().UTC()
	history := map[string][]scheduler.HistoryEntry{}
	add := func(coll, job string, h scheduler.HistoryEntry) {
		h.Collection, h.Job = coll, job
		history[coll+"/"+job] = append(history[coll+"/"+job], h)
	}
	start := now.Truncate(15 * time.Minute).Add(-24 * time.Hour)
	n := 0
	for at := start; at.Before(now.Add(-time.Minute)); at = at.Add(15 * time.Minute) {
		n++
		e := scheduler.HistoryEntry{ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: at,
			StartTime: at, EndTime: at.Add(420 * time.Millisecond), RepeatCount: n, Message: "HTTP 200 OK: {\"synced\": 214}"}
		if h := at.Sub(start); h > 6*time.Hour && h < 7*time.Hour || h > 22*time.Hour && h < 22*time.Hour+30*time.Minute {
			e.Status, e.Message = scheduler.StatusFailed, "HTTP 502 Bad Gateway: crm.contoso.example did not answer\r\nContent-Type: text/html\r\nServer: nginx\r\n\r\n<html><body>upstream timed out</body></html>"
			add("contoso/prod/billing", "sync-crm", e)
			e.RetryCount, e.StartTime, e.EndTime = 1, at.Add(30*time.Second), at.Add(31*time.Second)
			if h < 7*time.Hour {
				e.Faulted = true
			} else {
				e.Status, e.Message = scheduler.StatusCompleted, "HTTP 200 OK: {\"synced\": 3}"
			}
		}
		add("contoso/prod/billing", "sync-crm", e)
	}
	night := now.Add(-24 * time.Hour).Truncate(24 * time.Hour).Add(90 * time.Minute)
	add("contoso/prod/billing", "nightly-invoices", scheduler.HistoryEntry{ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		ExpectedExecutionTime: night, StartTime: night, EndTime: night.Add(3 * time.Second), RepeatCount: 1, Message: "HTTP 200 OK: 1,482 invoices"})
	claimed, err := d.store.ClaimDue(ctx, now.Add(400*24*time.Hour), "seed", now.Add(401*24*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range claimed {
		h := history[j.ID()]
		if len(h) == 0 {
			if err := d.store.Record(ctx, "seed", j, nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, e := range h {
			j.Status.ExecutionCount++
			if e.Status == scheduler.StatusFailed {
				j.Status.FailureCount++
			}
			if e.Faulted {
				j.Status.FaultedCount++
			}
			st := e.StartTime
			j.Status.LastExecutionTime = &st
		}
		j.Schedule.Occurrences = h[len(h)-1].RepeatCount
		if err := d.store.Record(ctx, "seed", j, h); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserWalk walks overview → collection → job, runs the job and
// sees its history row appear, disables a job, deletes one after the
// confirmation, and saves screenshots on the way.
func TestBrowserWalk(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)

	b.do("open the overview", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.CSS("table.collections")))
	if got := b.text("h1"); got != "Overview" {
		t.Errorf("h1 = %q", got)
	}
	b.waitFor("faulted list", `document.querySelector("#faulted").textContent.includes("sync-crm")`)
	b.screenshot("overview")

	b.clickAndLoad("open the collection", `a[href="/ui/collections/contoso%2Fprod%2Fbilling"]`)
	if got := b.text("h1"); got != "contoso/prod/billing" {
		t.Fatalf("collection page h1 = %q", got)
	}
	rows := eval[int](b, `document.querySelectorAll("table.jobs tbody tr").length`)
	if rows != 4 {
		t.Errorf("the collection lists %d jobs, want 4", rows)
	}
	if s := b.text("table.jobs tbody"); !strings.Contains(s, "every 15 minutes") || !strings.Contains(s, "on the last Friday of every month at 05:15 (Europe/Berlin)") {
		t.Errorf("schedules in words missing from the table:\n%s", s)
	}
	// Sorting by failures, descending, puts sync-crm first; the order is in
	// the address.
	b.clickAndLoad("sort by failures", `th a[href*="sort=failures"]`)
	b.clickAndLoad("sort descending", `th a[href*="sort=failures"][href*="order=desc"]`)
	if first := b.text("table.jobs tbody tr td a"); first != "sync-crm" {
		t.Errorf("sorted by failures, descending: first job %q, want sync-crm", first)
	}
	if loc := eval[string](b, "location.search"); !strings.Contains(loc, "sort=failures") || !strings.Contains(loc, "order=desc") {
		t.Errorf("the sort is not in the address: %q", loc)
	}
	b.screenshot("collection")

	b.clickAndLoad("open the job", `a.job-link[href$="/jobs/month-end-close"]`)
	if got := b.text("#job-name"); got != "month-end-close" {
		t.Fatalf("job page for %q", got)
	}
	if s := b.text("#schedule"); s != "Runs on the last Friday of every month at 05:15 (Europe/Berlin)." {
		t.Errorf("schedule = %q", s)
	}
	if n := eval[int](b, `document.querySelectorAll("table.upcoming tbody tr").length`); n != 20 {
		t.Errorf("%d upcoming occurrences, want 20", n)
	}
	if eval[int](b, `document.querySelectorAll("#history table tbody tr").length`) != 0 {
		t.Fatal("the job has history before it ran")
	}
	// Run now: the form is sent by the page's script, and the live refresh
	// brings the new history row without a reload.
	b.do("run now", chromedp.Click(chromedp.ID("run-now")))
	b.waitFor("the run's history row", `document.querySelectorAll("#history tr.entry-Completed").length == 1`)
	if s := b.text("#history"); !strings.Contains(s, "HTTP 200 OK") {
		t.Errorf("history after run now:\n%s", s)
	}
	if s := b.text("#flash"); !strings.Contains(s, "Run requested") {
		t.Errorf("flash after run now = %q", s)
	}

	// The job page of sync-crm has history to show, with a filter.
	b.do("open sync-crm", chromedp.EmulateViewport(1280, 1500), chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Fbilling/jobs/sync-crm"),
		chromedp.WaitVisible(chromedp.CSS("#history table")))
	b.screenshot("job")
	b.do("back to a laptop's window", chromedp.EmulateViewport(1280, 900))
	b.clickAndLoad("filter failed", `nav.filters a[href$="status=Failed"]`)
	if n := eval[int](b, `document.querySelectorAll("#history tbody tr").length`); n == 0 || n != eval[int](b, `document.querySelectorAll("#history tbody tr.entry-Failed").length`) {
		t.Errorf("the Failed filter shows %d rows, not all Failed", n)
	}
	// Open the full message of an attempt.
	b.do("open a message", chromedp.Click(chromedp.CSS("#history details summary")))
	// Read in the page, in one go: a live refresh may replace the history
	// (keeping the message open) between finding the node and reading it.
	want := "did not answer\nContent-Type: text/html\nServer: nginx\n\n<html><body>upstream timed out</body></html>"
	full := `(document.querySelector("#history details[open] pre") || {}).textContent || ""`
	got := eval[string](b, full)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(got, want) && time.Now().Before(deadline); got = eval[string](b, full) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(got, want) {
		t.Errorf("full message = %q, want it whole, one line of it a line", got)
	}
	if s := b.text("#history details[open] summary"); !strings.HasSuffix(s, "(whole message: 5 lines)") {
		t.Errorf("summary = %q, want it to say the message has 5 lines", s)
	}
	// A short message shows whole, unfolded.
	b.clickAndLoad("filter completed", `nav.filters a[href$="status=Completed"]`)
	if s := b.text("#history tbody tr:first-child span.message"); !strings.HasPrefix(s, "HTTP 200 OK: {") {
		t.Errorf("short message = %q", s)
	}

	// Disable a job.
	b.do("open nightly-invoices", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Fbilling/jobs/nightly-invoices"), chromedp.WaitVisible(chromedp.ID("disable")))
	if s := b.text("#definition"); strings.Contains(s, "hunter2") || strings.Contains(s, "secret-token") || !strings.Contains(s, "••••••") {
		t.Errorf("definition shows secrets:\n%s", s)
	}
	b.do("disable", chromedp.Click(chromedp.ID("disable")), chromedp.WaitVisible(chromedp.ID("enable")))
	if s := b.text("#job-state"); s != "Disabled" {
		t.Errorf("state after disable = %q", s)
	}
	if r, _ := d.s.GetJob(ctx, "contoso/prod/billing", "nightly-invoices"); r.State != scheduler.JobDisabled {
		t.Errorf("stored state after disable = %s", r.State)
	}

	// Delete one after confirming.
	b.clickAndLoad("delete", "#delete")
	if s := b.text("h1"); s != "Delete job nightly-invoices?" {
		t.Fatalf("confirmation page h1 = %q", s)
	}
	if _, err := d.s.GetJob(ctx, "contoso/prod/billing", "nightly-invoices"); err != nil {
		t.Fatalf("deleted before the confirmation: %v", err)
	}
	b.clickAndLoad("confirm", "#confirm-delete")
	if s := b.text("#flash"); !strings.Contains(s, "deleted") {
		t.Errorf("flash after delete = %q", s)
	}
	if s := b.text("table.jobs"); strings.Contains(s, "nightly-invoices") {
		t.Errorf("the deleted job is still listed:\n%s", s)
	}
	if _, err := d.s.GetJob(ctx, "contoso/prod/billing", "nightly-invoices"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob after delete: %v, want ErrNotFound", err)
	}
}

// TestBrowserLooks saves the overview in dark mode and a job on a phone,
// and checks that the dark colours apply and that the phone page does not
// scroll sideways as a whole.
func TestBrowserLooks(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	b.do("overview, dark", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.CSS("table.collections")))
	if bg := eval[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(18, 22, 29)" {
		t.Errorf("dark background = %s", bg)
	}
	b.screenshot("overview-dark")

	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}); err != nil {
		t.Fatal(err)
	}
	b.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Fbilling/jobs/sync-crm"), chromedp.WaitVisible(chromedp.CSS("#history table")))
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the job page is %dpx wide on a 390px phone", w)
	}
	b.screenshot("job-phone")
}

// TestBrowserWithoutJavaScript reads the pages and disables a job with
// scripts turned off: plain links and forms.
func TestBrowserWithoutJavaScript(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	b.do("overview", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.CSS("table.collections")))
	b.clickAndLoad("collection", `a[href="/ui/collections/contoso%2Fprod%2Freports"]`)
	b.clickAndLoad("job", `a.job-link[href$="/jobs/weekly-digest"]`)
	if s := b.text("#schedule"); s != "Runs every week on Monday, Wednesday and Friday at 10:00 and 22:00 (America/New_York)." {
		t.Errorf("schedule = %q", s)
	}
	b.clickAndLoad("disable", "#disable")
	if s := b.text("#flash"); !strings.Contains(s, "disabled") {
		t.Errorf("flash after disable without scripts = %q", s)
	}
	if r, _ := d.s.GetJob(ctx, "contoso/prod/reports", "weekly-digest"); r.State != scheduler.JobDisabled {
		t.Errorf("state after disable = %s", r.State)
	}
	b.clickAndLoad("try page", `nav a[href="/ui/try"]`)
	b.do("check", chromedp.SetValue(chromedp.ID("definition"), `{"action": {"type": "Http"}}`))
	b.clickAndLoad("check", "#check")
	if s := b.text("table.problems"); !strings.Contains(s, "action.request") {
		t.Errorf("problems without scripts:\n%s", s)
	}
}

// TestBrowserTry pastes a broken definition and a valid one.
func TestBrowserTry(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)
	b.do("try page", chromedp.Navigate(d.url+"/try"), chromedp.WaitVisible(chromedp.ID("definition")))
	b.do("paste", chromedp.SetValue(chromedp.ID("definition"), `{
  "action": {"type": "Http", "request": {"uri": "not a uri", "method": "GET"}, "retryPolicy": {"retryType": "Fixed", "retryCount": 99}},
  "recurrence": {"frequency": "Week", "interval": 0, "schedule": {"hours": [24], "weekDays": ["Funday"]}}
}`))
	b.clickAndLoad("check", "#check")
	problems := b.text("table.problems")
	for _, want := range []string{"action.request.uri", "action.retryPolicy.retryCount", "recurrence.interval", "recurrence.schedule.hours[0]", "recurrence.schedule.weekDays[0]"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %s:\n%s", want, problems)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("table.problems tbody tr").length`); n < 5 {
		t.Errorf("%d problems listed, want every one", n)
	}
	b.screenshot("try-errors")
	b.do("paste a valid one", chromedp.SetValue(chromedp.ID("definition"), `{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [2], "minutes": [30]}, "timeZone": "Europe/Berlin"}}`),
		chromedp.SetValue(chromedp.CSS(`input[name="created"]`), fmt.Sprintf("%d-03-20T00:00:00Z", time.Now().Year()+1)))
	b.clickAndLoad("check", "#check")
	if s := b.text("#schedule"); !strings.HasPrefix(s, "Runs every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward") {
		t.Errorf("schedule = %q", s)
	}
	if n := eval[int](b, `document.querySelectorAll("table.upcoming tr.shifted").length`); n != 1 {
		t.Errorf("%d occurrences marked as moved by daylight saving time, want 1", n)
	}
}

// TestBrowserSignIn signs in with a wrong token, then with one limited to
// subscription contoso, which sees contoso and not fabrikam.
func TestBrowserSignIn(t *testing.T) {
	d := newDemo(t, true)
	b := newBrowser(t)
	b.do("open", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	if s := b.text("h1"); s != "Sign in" {
		t.Fatalf("h1 = %q, want the sign-in page", s)
	}
	if n := eval[int](b, `document.querySelectorAll("header nav, #live-toggle").length`); n != 0 {
		t.Errorf("the sign-in page shows %d of the navigation and the Live toggle, want none", n)
	}
	b.do("wrong token", chromedp.SendKeys(chromedp.ID("token"), "not-a-real-token-0123456789"))
	b.clickAndLoad("submit", `form.login button[type="submit"]`)
	if s := b.text("#login-error"); s != "That token is not valid." {
		t.Errorf("error after a wrong token = %q", s)
	}
	b.do("right token", chromedp.SendKeys(chromedp.ID("token"), limitedToken))
	b.clickAndLoad("submit", `form.login button[type="submit"]`)
	if s := b.text("h1"); s != "Overview" {
		t.Fatalf("after signing in: h1 = %q", s)
	}
	if !eval[bool](b, `!!document.querySelector("header nav") && !document.querySelector("label.live").hidden`) {
		t.Error("after signing in: no navigation or no Live toggle")
	}
	body := b.text("main")
	if !strings.Contains(body, "contoso/prod/billing") || strings.Contains(body, "fabrikam") {
		t.Errorf("a token of contoso sees:\n%s", body)
	}
	// The session cookie is not readable by scripts.
	if c := eval[string](b, "document.cookie"); strings.Contains(c, "jobclock_session") {
		t.Errorf("document.cookie shows the session: %q", c)
	}
	b.do("fabrikam's collection", chromedp.Navigate(d.url+"/collections/fabrikam%2Fops%2Fbackups"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if s := b.text("h1"); s != "Not Found" {
		t.Errorf("fabrikam's collection for a contoso token: h1 = %q", s)
	}
	b.do("home", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.CSS("form.signout")))
	b.clickAndLoad("sign out", "form.signout button")
	if s := b.text("h1"); s != "Sign in" {
		t.Errorf("after signing out: h1 = %q", s)
	}
}

// TestBrowserEscapes checks that markup in a job's name (written into the
// store by another program), its URI and its history messages shows as
// text: no dialog opens, no element is made from it.
func TestBrowserEscapes(t *testing.T) {
	d := newDemo(t, false)
	const evil = `<img src=x onerror=alert(1)>`
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/<svg onload=alert(2)>", "method": "GET"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, d.store, "contoso/prod/reports", evil, job)
	b := newBrowser(t)
	b.do("collection", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Freports"), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	time.Sleep(300 * time.Millisecond) // an injected image would fail to load and fire onerror by now
	if n := eval[int](b, `document.querySelectorAll("main img, main svg, main script").length`); n != 0 {
		t.Errorf("%d elements made from data", n)
	}
	names := eval[[]string](b, `Array.from(document.querySelectorAll("a.job-link")).map(a => a.textContent)`)
	found := false
	for _, n := range names {
		found = found || n == evil
	}
	if !found {
		t.Errorf("job names shown: %q; want %q as text", names, evil)
	}
	b.do("the same page in a second refresh", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Freports?sort=state"), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	time.Sleep(700 * time.Millisecond) // two live refreshes
	b.clean()
}

var ctx = context.Background()

// Tokens of the tests' authenticator: one for every collection, one for
// the contoso collections only.
const (
	adminToken   = "admin-token-0123456789abcdef"
	limitedToken = "limited-token-0123456789abc"
)

// putRaw writes a job straight into the store, as another program sharing
// it might, bypassing the Scheduler's checks of names.
func putRaw(t *testing.T, st scheduler.Store, coll, name string, job *scheduler.Job) {
	t.Helper()
	now := time.Now()
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: coll, Name: name, Job: job, State: scheduler.JobEnabled,
		Created: now, Updated: now, Schedule: scheduler.JobSchedule{Anchor: now}}); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserCalendarChanged: the job page of a job whose record still
// has its occurrence planned under an earlier version of its calendar (a
// Disabled job) shows, in the browser, the occurrences the calendar now skips and
// where the occurrence was planned; its durations read in words, their
// ISO 8601 text in the title.
func TestBrowserCalendarChanged(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)
	year := time.Now().Year() + 1
	day := func(n int) time.Time { return time.Date(year, 1, n, 6, 0, 0, 0, time.UTC) }
	coll := "contoso/prod/reports"
	put := func(def string) {
		t.Helper()
		c, err := scheduler.ParseCalendar([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.s.PutCalendar(ctx, coll, "holidays", c, nil); err != nil {
			t.Fatal(err)
		}
	}
	put(fmt.Sprintf(`{"properties": {"dates": ["%d-02-01"]}}`, year))
	job, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"action": {"type": "Https", "timeout": "PT90S", "request": {"uri": "https://reports.contoso.example/daily", "method": "POST"}},
		"state": "Disabled", "startTime": %q, "recurrence": {"frequency": "Day", "calendar": "holidays"}}`, day(1).Format(time.RFC3339))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.s.PutJob(ctx, coll, "daily-digest", job, nil); err != nil {
		t.Fatal(err)
	}
	// A Disabled job keeps its occurrence as planned under the earlier
	// version: the change of the calendar plans only Enabled jobs again.
	put(fmt.Sprintf(`{"properties": {"dates": ["%d-01-01", "%d-01-02"]}}`, year, year))
	if rec, err := d.s.GetJob(ctx, coll, "daily-digest"); err != nil || !rec.Schedule.NextOccurrence.Equal(day(1)) {
		t.Fatalf("the Disabled job's record: %v, %v; want its occurrence still planned at %v", rec, err, day(1))
	}

	b.do("open the job", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Freports/jobs/daily-digest"),
		chromedp.WaitVisible(chromedp.CSS("table.upcoming")))
	if s := b.text("table.upcoming tbody tr.skipped"); !strings.Contains(s, "skipped: excluded by calendar “holidays”, and 1 more to") {
		t.Errorf("first row: %q, want the two skipped days", s)
	}
	want := fmt.Sprintf("planned for %d-01-01 06:00 UTC before calendar “holidays” changed", year)
	if s := b.text("table.upcoming tbody tr:nth-child(2)"); !strings.Contains(s, fmt.Sprintf("%d-01-03 06:00 UTC", year)) || !strings.Contains(s, want) {
		t.Errorf("occurrence 1: %q, want %d-01-03 06:00 UTC, %q", s, year, want)
	}
	if s := b.text("#schedule"); !strings.Contains(s, "except on the days calendar “holidays” excludes (skipped)") {
		t.Errorf("schedule = %q, want what the calendar does", s)
	}
	if got := eval[string](b, `document.querySelector("#failure span.duration").textContent + " / " + document.querySelector("#failure span.duration").title`); got != "1 minute and 30 seconds / PT1M30S" {
		t.Errorf("the timeout reads %q, want 1 minute and 30 seconds / PT1M30S", got)
	}
}

// TestBrowserCalendarDroppedCut: the job page of a minutely job whose
// calendar excludes a week lists, in the browser, one row for the
// minutes it skips, cut after the ones the page reads, and says that more
// are skipped before the next occurrence.
func TestBrowserCalendarDroppedCut(t *testing.T) {
	d := newDemo(t, false)
	b := newBrowser(t)
	year := time.Now().Year() + 1
	coll := "contoso/prod/reports"
	c, err := scheduler.ParseCalendar([]byte(fmt.Sprintf(`{"properties": {"ranges": [{"start": "%d-01-01T00:05:00", "end": "%d-01-08T00:00:00"}]}}`, year, year)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.s.PutCalendar(ctx, coll, "freeze-week", c, nil); err != nil {
		t.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"action": {"type": "Https", "request": {"uri": "https://reports.contoso.example/tick", "method": "POST"}},
		"startTime": "%d-01-01T00:00:00Z", "recurrence": {"frequency": "Minute", "calendar": "freeze-week"}}`, year)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.s.PutJob(ctx, coll, "ticker", job, nil); err != nil {
		t.Fatal(err)
	}

	b.do("open the job", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Freports/jobs/ticker"),
		chromedp.WaitVisible(chromedp.CSS("table.upcoming tr.skipped")))
	want := fmt.Sprintf("skipped: excluded by calendar “freeze-week”, and 999 more to %d-01-01 16:44 UTC; more before the next occurrence are not listed", year)
	if s := b.text("table.upcoming tbody tr.skipped"); !strings.Contains(s, want) {
		t.Errorf("skipped row: %q, want %q", s, want)
	}
	if n := eval[int](b, `document.querySelectorAll("table.upcoming tbody tr.skipped").length`); n != 1 {
		t.Errorf("%d skipped rows, want 1", n)
	}
	if s := b.text("table.upcoming tbody tr:nth-child(7)"); !strings.Contains(s, fmt.Sprintf("%d-01-08 00:00 UTC", year)) {
		t.Errorf("occurrence 6: %q, want %d-01-08 00:00 UTC", s, year)
	}
}

// TestBrowserPageGone: a job page whose job is deleted meanwhile says so
// at its next refresh and hides its actions; a page whose session ends
// (its cookie gone, as when it expires or is signed out elsewhere) says
// that the session has ended, links to the sign-in page and hides its
// actions, instead of going on showing what it showed.
func TestBrowserPageGone(t *testing.T) {
	d := newDemo(t, true)
	b := newBrowser(t)
	b.do("open", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do("token", chromedp.SendKeys(chromedp.ID("token"), adminToken))
	b.clickAndLoad("sign in", `form.login button[type="submit"]`)

	b.do("job page", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Fbilling/jobs/sync-crm"), chromedp.WaitVisible(chromedp.ID("run-now")))
	if err := d.s.DeleteJob(ctx, "contoso/prod/billing", "sync-crm", nil); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the notice that the job is gone", `!!document.getElementById("page-ended")`)
	if s := b.text("#page-ended"); !strings.Contains(s, "This job no longer exists: it was deleted") || !strings.Contains(s, "Back to the overview") {
		t.Errorf("notice after the job was deleted = %q", s)
	}
	if n := eval[int](b, `Array.from(document.querySelectorAll("#main form, #main button, #main a.button")).filter(e => e.offsetParent !== null).length`); n != 0 {
		t.Errorf("%d forms, buttons or button links still show after the job was deleted, want none", n)
	}
	if s := b.text("#job-name"); s != "sync-crm" {
		t.Errorf("the page no longer shows the job as it was: %q", s)
	}
	b.clean()

	b.do("another job", chromedp.Navigate(d.url+"/collections/contoso%2Fprod%2Fbilling/jobs/month-end-close"), chromedp.WaitVisible(chromedp.ID("run-now")))
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the notice that the session ended", `!!document.getElementById("page-ended")`)
	if s := b.text("#page-ended"); !strings.Contains(s, "Your session has ended") || !strings.Contains(s, "Sign in again") {
		t.Errorf("notice after the session ended = %q", s)
	}
	if href := eval[string](b, `document.querySelector("#page-ended a").getAttribute("href")`); !strings.HasPrefix(href, "/ui/login") && !strings.Contains(href, "/ui/login") {
		t.Errorf("the notice links to %q, want the sign-in page", href)
	}
	if n := eval[int](b, `Array.from(document.querySelectorAll("#main form, #main button, #main a.button")).filter(e => e.offsetParent !== null).length`); n != 0 {
		t.Errorf("%d forms, buttons or button links still show after the session ended, want none", n)
	}
	b.clean()
}

// TestBrowserLongNames: a job whose name has 100 characters (the most a
// name may have) and whose URI is 400 characters long does not stretch
// the tables of the collection, search and job pages: at 1280 pixels
// wide no table is wider than its box, and at 1280 and at 390 no cell is
// wider than 26rem (the name and the URI wrap). The page itself is never
// wider than the window; on a phone a table of several columns scrolls
// inside its box, as it does with short names.
func TestBrowserLongNames(t *testing.T) {
	d := newDemo(t, false)
	name := "a" + strings.Repeat("very-long-job-name-", 6)[:99]
	uri := "https://reports.contoso.example/" + strings.Repeat("segment-of-a-long-path/", 16) + "?q=" + strings.Repeat("x", 20)
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "`+uri+`", "method": "GET"}},
		"recurrence": {"frequency": "Hour"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.s.PutJob(ctx, "contoso/prod/reports", name, job, nil); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	for _, width := range []int64{1280, 390} {
		if _, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: width, Height: 900, DeviceScaleFactor: 1, Mobile: width < 500}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/collections/contoso%2Fprod%2Freports", "/search?name=very-long", "/collections/contoso%2Fprod%2Freports/jobs/" + name} {
			b.do("open "+path, chromedp.Navigate(d.url+path), chromedp.WaitVisible(chromedp.CSS("h1")))
			if width > 1000 {
				over := eval[[]string](b, `Array.from(document.querySelectorAll("table")).filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.className + " " + t.scrollWidth + ">" + t.parentElement.clientWidth)`)
				if len(over) > 0 {
					t.Errorf("%d px, %s: tables wider than their box: %v", width, path, over)
				}
			}
			wide := eval[[]string](b, `Array.from(document.querySelectorAll("td")).filter(td => td.getBoundingClientRect().width > 26 * parseFloat(getComputedStyle(document.documentElement).fontSize)).map(td => Math.round(td.getBoundingClientRect().width) + "px: " + td.textContent.slice(0, 40))`)
			if len(wide) > 0 {
				t.Errorf("%d px, %s: cells wider than 26rem: %v", width, path, wide)
			}
			if w := eval[int](b, `document.documentElement.scrollWidth`); w > int(width) {
				t.Errorf("%d px, %s: the page is %d px wide", width, path, w)
			}
		}
		if width == 390 {
			b.screenshot("long-names-phone")
		}
	}
	b.clean()
}
