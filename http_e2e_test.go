package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestHTTPEndToEnd runs a job through the built-in HTTP executor against a
// local server: the first attempt gets a 500, the retry a 200.
func TestHTTPEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		bodies = append(bodies, string(b))
		n := len(got)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "done")
	}))
	defer srv.Close()

	s, done := webScheduler(t)
	ctx := context.Background()
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http",
		"request": {"uri": "`+srv.URL+`/hook", "method": "POST", "body": "ping", "headers": {"Content-Type": "text/plain"}},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.05S", "retryCount": 1}}}`),
		&scheduler.ParseOptions{MinRetryInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "web", "hook", job, nil); err != nil {
		t.Fatal(err)
	}
	var hist []scheduler.HistoryEntry
	timeout := time.After(10 * time.Second)
	for len(hist) < 2 {
		select {
		case h := <-done:
			hist = append(hist, h)
		case <-timeout:
			t.Fatalf("history after 10s: %+v", hist)
		}
	}
	if hist[0].Status != scheduler.StatusFailed || hist[1].Status != scheduler.StatusCompleted || hist[1].RetryCount != 1 {
		t.Errorf("history = %+v, want Failed then Completed on retry 1", hist)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || bodies[0] != "ping" {
		t.Fatalf("server saw %d requests, bodies %q", len(got), bodies)
	}
	h0, h1 := got[0].Header, got[1].Header
	if h0.Get("x-ms-scheduler-jobid") == "" || h0.Get("x-ms-scheduler-jobcollectionid") != "web" ||
		h0.Get("x-ms-scheduler-execution-tag") == "" || h0.Get("x-ms-scheduler-execution-tag") != h1.Get("x-ms-scheduler-execution-tag") ||
		h0.Get("x-ms-client-request-id") == h1.Get("x-ms-client-request-id") || h0.Get("x-ms-scheduler-expected-execution-time") == "" {
		t.Errorf("headers of the two attempts:\n%v\n%v", h0, h1)
	}
	r, err := s.GetJob(ctx, "web", "hook")
	if err != nil || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 2 || r.Status.FailureCount != 1 {
		t.Errorf("job = %+v, %v; want Completed, 2 executions, 1 failure", r, err)
	}
}

// TestHTTPFailureMessages checks the history messages of failed HTTP
// attempts: each says what happened once, in the executor's words.
func TestHTTPFailureMessages(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := closed.URL
	closed.Close()
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such hook", http.StatusNotFound)
	}))
	defer notFound.Close()

	s, done := webScheduler(t)
	ctx := context.Background()
	for name, uri := range map[string]string{"refused": refused, "missing": notFound.URL} {
		job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+uri+`/hook", "method": "GET"},
			"retryPolicy": {"retryType": "None"}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "web", name, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	msgs := map[string]string{}
	timeout := time.After(10 * time.Second)
	for len(msgs) < 2 {
		select {
		case h := <-done:
			msgs[h.Job] = h.Message
		case <-timeout:
			t.Fatalf("history after 10s: %v", msgs)
		}
	}
	host := strings.TrimPrefix(refused, "http://")
	want := "Failed: no response from host '" + host + "': dial tcp " + host + ": connect: connection refused"
	if msgs["refused"] != want {
		t.Errorf("message of a refused connection =\n%q\nwant\n%q", msgs["refused"], want)
	}
	// A response is described by the executor: the outcome and the
	// status first, which the error's text is, then the body, then the
	// headers, one per line.
	m := msgs["missing"]
	// The host's port may hold the digits 404 too: count the others.
	host404 := strings.TrimPrefix(notFound.URL, "http://")
	if !strings.HasPrefix(m, "Failed: 404 Not Found from host '") || !strings.Contains(m, "\nBody: no such hook\n") ||
		strings.Count(strings.ReplaceAll(m, host404, ""), "404") != 1 || !strings.Contains(m, "\nHeaders:\n") || !strings.Contains(m, "\n  Content-Type: text/plain") || strings.Contains(m, "\r") {
		t.Errorf("message of a 404 = %q, want the status once, first, then the body and the headers, without CR", m)
	}
}

// webScheduler returns a started Scheduler over a memory store, stopped
// when the test ends, with a collection "web", that sends each history
// entry on the channel it returns (room for ten), and lets retries be as
// short as 10 ms.
func webScheduler(t *testing.T) (*scheduler.Scheduler, <-chan scheduler.HistoryEntry) {
	t.Helper()
	done := make(chan scheduler.HistoryEntry, 10)
	s, err := scheduler.New(memory.New(), &scheduler.Config{
		MinRetryInterval: 10 * time.Millisecond,
		PollInterval:     50 * time.Millisecond,
		Logger:           slog.New(slog.DiscardHandler),
		OnHistory:        func(h scheduler.HistoryEntry) { done <- h },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	if _, err := s.PutCollection(ctx, "web", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s, done
}
