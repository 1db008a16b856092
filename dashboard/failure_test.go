package dashboard_test

import (
	"net/http"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestJobPageFailureHandling: the job page says in words how the job
// handles failure: its timeout, retry policy, Retry-After, and its
// errorAction, which carries the failure document when it has no body;
// and what its own run policy does. Durations are in words, their ISO
// 8601 text in the title.
func TestJobPageFailureHandling(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	put := func(name, def string) {
		t.Helper()
		job, err := scheduler.ParseJob([]byte(def), &scheduler.ParseOptions{MinRetryInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutJob(ctx, "c", name, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("full", `{"state": "Disabled", "action": {"type": "Http", "timeout": "PT30S",
		"request": {"uri": "https://example.com/hook", "method": "GET"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3, "maxRetryDuration": "PT1H", "permanentStatusCodes": [400, 404]},
		"errorAction": {"type": "Http", "timeout": "PT10S", "request": {"uri": "https://example.com/dead-letter", "method": "POST"},
			"retryPolicy": {"retryType": "None"}}}}`)
	p := e.get(jobPath("c", "full"))
	wantStatus(t, "full", p, http.StatusOK)
	wantIn(t, "full", p, `<h2 id="failure-h">When it fails</h2>`,
		"<li>Each attempt may take <span class=\"duration\" title=\"PT30S\">30 seconds</span> (its own timeout); past it, its context is cancelled and the attempt fails.</li>",
		"<li>A failed attempt is retried 3 times, <span class=\"duration\" title=\"PT1M\">1 minute</span> after the previous attempt ended.</li>",
		"<li>No retry starts later than <span class=\"duration\" title=\"PT1H\">1 hour</span> after the occurrence&#39;s expected time (maxRetryDuration).</li>",
		"<li>An answer with status 400, 404 is permanent: it is not retried and the occurrence faults at once.</li>",
		"<li>A 429 or 503 answer&#39;s Retry-After delays the next retry until the time it names, by at most <span class=\"duration\" title=\"PT1H\">1 hour</span>.</li>",
		"<li>When the last attempt fails, the occurrence faults and its errorAction runs: Http POST https://example.com/dead-letter, carrying the failure document",
		"since it has no body or message of its own. Each of its attempts may take <span class=\"duration\" title=\"PT10S\">10 seconds</span> (its own timeout).</li>",
		"<li>A failed attempt of the errorAction is not retried.</li>")

	put("plain", `{"state": "Disabled", "action": {"type": "Http", "request": {"uri": "https://example.com/hook", "method": "GET"},
		"errorAction": {"type": "Http", "request": {"uri": "https://example.com/alert", "method": "POST", "body": "down"}}}}`)
	p = e.get(jobPath("c", "plain"))
	wantIn(t, "plain", p,
		"<li>Each attempt may take the Scheduler&#39;s action timeout, <span class=\"duration\" title=\"PT1M\">1 minute</span> unless the program that runs the Scheduler sets another (an action&#39;s own &#34;timeout&#34; sets its own); past it, its context is cancelled and the attempt fails.</li>",
		"<li>A failed attempt is retried 4 times, <span class=\"duration\" title=\"PT30S\">30 seconds</span> after the previous attempt ended (the default policy).</li>",
		"errorAction runs: Http POST https://example.com/alert. Each of its attempts",
		"<li>A failed attempt of the errorAction is retried 4 times")
	wantNotIn(t, "plain", p, "failure document", "maxRetryDuration", "permanent:", "When it cannot run on time", "Config.ActionTimeout")

	// Without retries, Retry-After delays nothing.
	put("once", `{"state": "Disabled", "action": {"type": "Http", "request": {"uri": "https://example.com/hook", "method": "GET"},
		"retryPolicy": {"retryType": "None"}}}`)
	p = e.get(jobPath("c", "once"))
	wantIn(t, "once", p, "<li>A failed attempt is not retried.</li>")
	wantNotIn(t, "once", p, "Retry-After", "next retry")

	put("late", `{"state": "Disabled", "action": {"type": "Http", "request": {"uri": "https://example.com/hook", "method": "GET"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1.5S", "retryCount": 2, "maxRetryDuration": "P1DT2H30M"}},
		"runPolicy": {"missed": "RunAll", "catchUpWindow": "PT90M", "overlap": "Skip", "pauseAfterFaults": 3}}`)
	p = e.get(jobPath("c", "late"))
	wantIn(t, "late", p,
		"No retry starts later than "+`<span class="duration" title="P1DT2H30M">1 day, 2 hours and 30 minutes</span>`,
		`retried 2 times, <span class="duration" title="PT1.5S">1.5 seconds</span> after the previous attempt ended.`,
		`<h2 id="runpolicy-h">When it cannot run on time</h2>`,
		"each run, one after the other (missed RunAll).</li>",
		`<li>An occurrence found later than <span class="duration" title="PT1H30M">1 hour and 30 minutes</span> after its expected time is skipped (catchUpWindow).</li>`,
		"<li>An occurrence that comes due while the previous one is in progress: overlap Skip.</li>",
		"<li>The job is disabled after 3 consecutive faulted occurrences (pauseAfterFaults).</li>")
	wantNotIn(t, "late", p, ">PT")
}

// TestLimitsInWords: the collection page says its limits in words, and the
// job page which of them apply to the job and toward which target (its
// errorAction's own); a collection without limits shows none.
func TestLimitsInWords(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Limits: []scheduler.Limit{
		{Key: scheduler.LimitHost, MaxConcurrent: 5, RatePerMinute: 120}, {Key: scheduler.LimitJob, MaxConcurrent: 1}}}})
	e.collection("free", nil)
	def := `{"state": "Disabled", "action": {"type": "Http", "request": {"uri": "https://API.example.com:8443/hook", "method": "GET"},
		"errorAction": {"type": "Http", "request": {"uri": "http://alerts.example.com/x", "method": "POST"}}}}`
	job, err := scheduler.ParseJob([]byte(def), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c", "free"} {
		if _, err := e.s.PutJob(ctx, c, "j", job, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := e.get(collPath("c"))
	wantStatus(t, "collection", p, http.StatusOK)
	wantIn(t, "collection", p, `<dt>Limits</dt><dd id="limits"><span class="limit">At most 5 at once and 120 a minute per target host.</span> <span class="limit">At most 1 at once per job.</span>`)
	p = e.get(jobPath("c", "j"))
	wantIn(t, "job", p, `<h2 id="limits-h">Limits toward its targets</h2>`,
		"<li>At most 5 at once and 120 a minute per target host: its attempts count toward api.example.com:8443, its errorAction&#39;s toward alerts.example.com (the collection&#39;s host limit).</li>",
		"<li>At most 1 at once per job: this job&#39;s attempts count on their own (the collection&#39;s job limit).</li>",
		"<li>An attempt that finds no free permit waits for one")
	wantNotIn(t, "collection without limits", e.get(collPath("free")), `id="limits"`)
	wantNotIn(t, "job without limits", e.get(jobPath("free", "j")), `id="limits"`)
}

// TestJobPageShowsLimitWait: under a collection limit of one attempt a
// minute, the second job's occurrence waits, and its page says since when
// and for which limit: it is waiting for a limit, not running.
func TestJobPageShowsLimitWait(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Limits: []scheduler.Limit{
		{Key: scheduler.LimitCollection, RatePerMinute: 1}}}})
	e.job("c", "first", "/ok", "")
	e.job("c", "second", "/ok", "")
	deadline := time.Now().Add(10 * time.Second)
	var waiting string
	for waiting == "" && time.Now().Before(deadline) {
		for _, name := range []string{"first", "second"} {
			r, err := e.s.GetJob(ctx, "c", name)
			if err != nil {
				t.Fatal(err)
			}
			if cur := r.Schedule.Current; cur != nil && cur.Limited != nil {
				waiting = name
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if waiting == "" {
		t.Fatal("neither job waits for the limit of one attempt a minute after 10 s")
	}
	p := e.get(jobPath("c", waiting))
	wantIn(t, waiting, p, "for a permit of the collection&#39;s limits (the collection limit).")
	// No attempt of it runs: it says what it waits for, never running.
	wantIn(t, waiting, p, `<span class="badge waiting" title="Waiting since `, `>waiting for a limit</span>`,
		`<span class="last-waiting">waiting for a limit</span>`, "its attempt 1 of the main action not started (it asks again at ")
	wantNotIn(t, waiting, p, `class="last-running"`, `class="badge running"`)
	wantIn(t, "collection", e.get(collPath("c")), `<span class="last-waiting">waiting for a limit</span>`)
	other := map[string]string{"first": "second", "second": "first"}[waiting]
	wantNotIn(t, other, e.get(jobPath("c", other)), "for a permit of the collection", `class="badge waiting"`)
}
