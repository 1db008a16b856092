package browsertest_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// hourlyWords is the schedule in words of an hourly job without a
// startTime, whose runs keep the minute and second of its creation.
var hourlyWords = regexp.MustCompile(`^Runs (at second [1-9][0-9]? of )?every hour at minute [0-9]+\b`)

// receiver is a loopback HTTP server that records the requests jobs send
// it.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	paths  []string
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, string(b))
		rc.paths = append(rc.paths, r.Method+" "+r.URL.Path)
		rc.mu.Unlock()
		w.Write([]byte("received"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) calls() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.paths...)
}

// clear empties the fields with the IDs.
func clear(b *browser, ids ...string) {
	b.t.Helper()
	for _, id := range ids {
		eval[bool](b, `(document.getElementById("`+id+`").value = "", true)`)
	}
}

// TestBrowserConsole operates the dashboard as a person would: creates a
// collection and a job through the forms (the live check showing a
// problem at its field, then the schedule in words and the next
// occurrences), watches the job call a loopback HTTP receiver, pauses it
// with a reason, sees the reason, resumes it, labels it over REST and finds
// it by search, by a part of its name and by its tag.
func TestBrowserConsole(t *testing.T) {
	st := memory.New()
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), MinRetryInterval: time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	mux := http.NewServeMux()
	mux.Handle("/subscriptions/", httpapi.New(s, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)}))
	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Refresh: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rc := newReceiver(t)
	b := newBrowser(t)

	// A collection, through its form.
	b.do("open the overview", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.ID("no-collections")))
	b.clickAndLoad("new collection", "#new-collection")
	b.do("name it", chromedp.SendKeys(chromedp.ID("collection-name"), "contoso/prod/ops"), chromedp.SendKeys(chromedp.ID("location"), "West Europe"))
	b.clickAndLoad("create the collection", "#save")
	if got := b.text("h1"); got != "contoso/prod/ops" {
		t.Fatalf("after creating the collection: h1 = %q", got)
	}

	// A job, through the form; the check runs as the user types.
	b.clickAndLoad("new job", "#new-job")
	b.waitFor("the first check", `document.getElementById("draft-schedule").textContent !== ""`)
	clear(b, "uri", "interval")
	b.do("fill the form",
		chromedp.SendKeys(chromedp.ID("job-name-input"), "ping-receiver"),
		chromedp.SendKeys(chromedp.ID("uri"), rc.URL+"/hook"),
		chromedp.SendKeys(chromedp.ID("body"), "hello from the console"),
		chromedp.SendKeys(chromedp.ID("interval"), "x"))
	b.waitFor("the problem at its field", `document.getElementById("interval").getAttribute("aria-invalid") === "true"`)
	if s := b.text("#draft-problems"); !strings.Contains(s, "properties.recurrence.interval") {
		t.Errorf("problems while the interval is x:\n%s", s)
	}
	b.screenshot("console-editor-problem")
	clear(b, "interval")
	b.do("fix the interval", chromedp.SendKeys(chromedp.ID("interval"), "1"))
	b.waitFor("no problem left", `document.querySelectorAll("#draft-problems li").length === 0 && document.getElementById("draft-status").textContent === "Valid."`)
	// A job without a startTime counts its hours from its creation, to
	// the second: the words name the second unless it is 0.
	if s := b.text("#draft-schedule"); !hourlyWords.MatchString(s) {
		t.Errorf("schedule in words = %q", s)
	}
	if n := eval[int](b, `document.querySelectorAll("#draft-next li").length`); n != 5 {
		t.Errorf("%d next occurrences, want 5", n)
	}
	if s := eval[string](b, `document.getElementById("definition").value`); !strings.Contains(s, rc.URL+"/hook") {
		t.Errorf("the JSON editor does not follow the form:\n%s", s)
	}
	b.screenshot("console-editor")
	b.clickAndLoad("create the job", "#save")
	if got := b.text("#job-name"); got != "ping-receiver" {
		t.Fatalf("after creating the job: %q", got)
	}

	// Its first occurrence is now: it calls the receiver, and the history
	// shows it without a reload.
	b.waitFor("the run's history row", `document.querySelectorAll("#history tr.entry-Completed").length >= 1`)
	if calls := rc.calls(); len(calls) == 0 || calls[0] != "POST /hook" {
		t.Errorf("the receiver got %v", calls)
	}
	if s := b.text("#history"); !strings.Contains(s, "Completed: 200 OK from host '127.0.0.1") {
		t.Errorf("history:\n%s", s)
	}

	// Pause it with a reason.
	b.do("open the pause form", chromedp.Click(chromedp.CSS("#pause-box summary")))
	b.do("give a reason", chromedp.SendKeys(chromedp.ID("pause-reason"), "vendor maintenance until Monday"))
	b.clickAndLoad("pause", "#pause")
	if s := b.text("#paused"); s != "Paused: vendor maintenance until Monday" {
		t.Errorf("paused = %q", s)
	}
	if s := b.text("#job-state"); s != "Disabled" {
		t.Errorf("state after pause = %q", s)
	}
	if r, _ := s.GetJob(ctx, "contoso/prod/ops", "ping-receiver"); r.State != scheduler.JobDisabled || r.Definition().StateReason != "vendor maintenance until Monday" {
		t.Errorf("stored after pause: %s, %q", r.State, r.Definition().StateReason)
	}
	b.screenshot("console-paused")

	// Resume it: the page's script sends the form, the live parts follow.
	b.do("resume", chromedp.Click(chromedp.ID("resume")), chromedp.WaitVisible(chromedp.ID("disable")))
	if s := b.text("#job-state"); s != "Enabled" {
		t.Errorf("state after resume = %q", s)
	}

	// Label it over REST, then find it by a part of its name and its tag.
	ref := httpapi.CollectionRef{Subscription: "contoso", ResourceGroup: "prod", Collection: "ops"}
	if _, err := httpapi.NewClient(srv.URL, nil).PatchJob(ctx, ref, "ping-receiver", []byte(`{"tags": {"team": "ops"}}`), nil); err != nil {
		t.Fatalf("PATCH the job's tags: %v", err)
	}
	b.clickAndLoad("search", "#nav-search")
	b.do("type a name and a tag", chromedp.SendKeys(chromedp.ID("search-name"), "PING"), chromedp.SendKeys(chromedp.ID("search-tag"), "team=ops"))
	b.clickAndLoad("search", "#search")
	if s := b.text("#search-results"); !strings.Contains(s, "ping-receiver") || !strings.Contains(s, "contoso/prod/ops") || !strings.Contains(s, "team: ops") {
		t.Errorf("search results:\n%s", s)
	}
	if got := eval[string](b, `document.getElementById("search-tag").value`); got != "team=ops" {
		t.Errorf("the tag box after the search = %q, want team=ops", got)
	}
	b.screenshot("console-search-tag")
	b.clickAndLoad("open it", `#search-results a.job-link`)
	if got := b.text("#job-name"); got != "ping-receiver" {
		t.Errorf("the search's link leads to %q", got)
	}
	if got := b.text("#tags"); got != "team: ops" {
		t.Errorf("the job page's tags = %q, want team: ops", got)
	}

	// Another value of the tag finds nothing.
	b.clickAndLoad("search", "#nav-search")
	b.do("type another value", chromedp.SendKeys(chromedp.ID("search-tag"), "team=web"))
	b.clickAndLoad("search", "#search")
	if s := b.text("#results"); !strings.Contains(s, "No job matches.") {
		t.Errorf("search by team=web:\n%s", s)
	}
}
