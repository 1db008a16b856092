package browsertest_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/retry"
	"github.com/jobclock/scheduler/store/memory"
)

// TestBrowserEditorKeeps opens the editor of a job that recurs every 5
// seconds, with a retry policy whose members the form does not show,
// changes only its URL and saves: the job still recurs every 5 seconds
// and its retry policy is whole. In the JSON editor, a cron recurrence
// turns the form off, as the form would lose it.
func TestBrowserEditorKeeps(t *testing.T) {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler), MinRetryInterval: time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	col, err := scheduler.ParseCollection([]byte(`{"location": "West Europe", "properties": {"sku": {"name": "P20Premium"}, "quota": {"maxRecurrence": {"frequency": "Second", "interval": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "ops", col, nil); err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t)
	if _, err := s.PutJobJSON(ctx, "ops", "fast", []byte(`{"state": "Disabled",
		"action": {"type": "Http", "request": {"method": "POST", "uri": "`+rc.URL+`/a"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2, "maxRetryDuration": "PT10M", "permanentStatusCodes": [400, 404]}},
		"recurrence": {"frequency": "Second", "interval": 5}}`), nil); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: slog.New(slog.DiscardHandler)}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := newBrowser(t)

	b.do("open the editor", chromedp.Navigate(srv.URL+"/ui/edit/job?collection=ops&job=fast"), chromedp.WaitVisible(chromedp.ID("job-editor")))
	b.waitFor("the first check", `document.getElementById("draft-status").textContent === "Valid."`)
	if f := eval[string](b, `document.getElementById("frequency").value`); f != "Second" {
		t.Errorf("the form's frequency = %q, want Second", f)
	}
	if d := eval[string](b, `document.getElementById("definition").value`); !strings.Contains(d, `"maxRetryDuration": "PT10M"`) || !strings.Contains(d, `"permanentStatusCodes"`) {
		t.Errorf("the JSON the form makes lacks the retry policy's members:\n%s", d)
	}
	clear(b, "uri")
	b.do("change the URL", chromedp.SendKeys(chromedp.ID("uri"), rc.URL+"/b"))
	b.waitFor("the check of the new URL", `document.getElementById("definition").value.includes("/b\"") && document.getElementById("draft-status").textContent === "Valid."`)
	b.screenshot("console-editor-seconds")
	b.clickAndLoad("save", "#save")
	r, err := s.GetJob(ctx, "ops", "fast")
	if err != nil {
		t.Fatal(err)
	}
	d := r.Definition()
	if d.Action.Request.URI != rc.URL+"/b" {
		t.Errorf("after the save, uri = %q", d.Action.Request.URI)
	}
	if d.Recurrence == nil || d.Recurrence.Frequency != "Second" || d.Recurrence.Interval != 5 {
		t.Errorf("after the save, recurrence = %+v, want every 5 seconds", d.Recurrence)
	}
	if p := d.Action.RetryPolicy; p == nil || p.MaxRetryDuration != retry.Duration(10*time.Minute) || !slices.Equal(p.PermanentStatusCodes, []int{400, 404}) || p.Retries() != 2 {
		t.Errorf("after the save, retry policy = %+v", p)
	}

	// The JSON editor: a cron recurrence turns the form off, a frequency
	// turns it on again.
	b.do("open the editor again", chromedp.Navigate(srv.URL+"/ui/edit/job?collection=ops&job=fast"), chromedp.WaitVisible(chromedp.ID("job-editor")))
	b.waitFor("the first check", `document.getElementById("draft-status").textContent === "Valid."`)
	b.do("to JSON", chromedp.Click(chromedp.ID("mode-json")))
	def := eval[string](b, `document.getElementById("definition").value`)
	cron := strings.Replace(def, `"frequency": "Second"`, `"cron": "*/5 * * * *"`, 1)
	if cron == def {
		t.Fatalf("no frequency in the JSON editor:\n%s", def)
	}
	eval[bool](b, `(document.getElementById("definition").value = `+jsString(strings.Replace(cron, `"interval": 5`, `"timeZone": "UTC"`, 1))+`, true)`)
	b.do("type", chromedp.SendKeys(chromedp.ID("definition"), " "))
	b.waitFor("the form turned off", `document.getElementById("mode-form").disabled`)
	eval[bool](b, `(document.getElementById("definition").value = `+jsString(def)+`, true)`)
	b.do("type", chromedp.SendKeys(chromedp.ID("definition"), " "))
	b.waitFor("the form turned on", `!document.getElementById("mode-form").disabled`)

	// A frequency the form does not offer (Second, in a collection whose
	// quota does not allow it), typed in the JSON editor, shows in the
	// form as typed: saving it is refused, not turned into a job that
	// runs once.
	if _, err := s.PutCollection(ctx, "std", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobJSON(ctx, "std", "hourly", []byte(`{"action": {"type": "Http", "request": {"method": "POST", "uri": "`+rc.URL+`/h"}},
		"recurrence": {"frequency": "Hour", "interval": 1}, "state": "Disabled"}`), nil); err != nil {
		t.Fatal(err)
	}
	b.do("open the hourly job", chromedp.Navigate(srv.URL+"/ui/edit/job?collection=std&job=hourly"), chromedp.WaitVisible(chromedp.ID("job-editor")))
	b.waitFor("the first check", `document.getElementById("draft-status").textContent === "Valid."`)
	if eval[bool](b, `Array.from(document.getElementById("frequency").options).some(o => o.value === "Second")`) {
		t.Error("the form offers Second in a collection whose quota does not allow it")
	}
	b.do("to JSON", chromedp.Click(chromedp.ID("mode-json")))
	def = eval[string](b, `document.getElementById("definition").value`)
	eval[bool](b, `(document.getElementById("definition").value = `+jsString(strings.Replace(def, `"frequency": "Hour"`, `"frequency": "Second"`, 1))+`, true)`)
	b.do("type", chromedp.SendKeys(chromedp.ID("definition"), " "))
	b.waitFor("the check of the JSON", `!document.getElementById("draft-schedule").textContent.includes("hour") && document.getElementById("draft-status").textContent === "Valid."`)
	b.do("back to the form", chromedp.Click(chromedp.ID("mode-form")))
	if f := eval[string](b, `document.getElementById("frequency").value`); f != "Second" {
		t.Errorf("the form's frequency after the JSON editor = %q, want Second", f)
	}
	b.clickAndLoad("save", "#save")
	if got := b.text("#save-error"); !strings.Contains(got, "Not saved") {
		t.Errorf("saving a recurrence the quota does not allow: %q", got)
	}
	if r, err := s.GetJob(ctx, "std", "hourly"); err != nil || r.Definition().Recurrence == nil || r.Definition().Recurrence.Frequency != "Hour" {
		t.Errorf("the hourly job after the refused save: %v, %v", r, err)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "<", `\u003c`)
	return `"` + r.Replace(s) + `"`
}
