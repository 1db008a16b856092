package scheduler_test

import (
	"context"
	"encoding/json"
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

// TestHTTPFailureHandling runs jobs through the built-in HTTP executor
// against a loopback server: a 400 listed as permanent is not retried and
// the errorAction receives the failure document; a 429 with Retry-After: 1
// delays the retry past its 50 ms interval.
func TestHTTPFailureHandling(t *testing.T) {
	var mu sync.Mutex
	calls := map[string][]time.Time{}
	var alert string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls[r.URL.Path] = append(calls[r.URL.Path], time.Now())
		n := len(calls[r.URL.Path])
		if r.URL.Path == "/alert" {
			alert = string(b)
		}
		mu.Unlock()
		switch {
		case r.URL.Path == "/bad":
			http.Error(w, "malformed", http.StatusBadRequest)
		case r.URL.Path == "/busy" && n == 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	done := make(chan scheduler.HistoryEntry, 20)
	s, err := scheduler.New(memory.New(), &scheduler.Config{
		MinRetryInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), OnHistory: func(h scheduler.HistoryEntry) { done <- h },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	if _, err := s.PutCollection(ctx, "web", nil, nil); err != nil {
		t.Fatal(err)
	}
	put := func(name, path string) {
		t.Helper()
		job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+srv.URL+path+`", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.05S", "retryCount": 3, "permanentStatusCodes": [400]},
			"errorAction": {"type": "Http", "request": {"uri": "`+srv.URL+`/alert", "method": "POST"}, "retryPolicy": {"retryType": "None"}}}}`),
			&scheduler.ParseOptions{MinRetryInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "web", name, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("bad", "/bad")
	put("busy", "/busy")
	var hist []scheduler.HistoryEntry
	timeout := time.After(10 * time.Second)
	// bad: one attempt and its alert; busy: a 429, then success.
	for len(hist) < 4 {
		select {
		case h := <-done:
			hist = append(hist, h)
		case <-timeout:
			t.Fatalf("history after 10s: %+v", hist)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(calls["/bad"]); n != 1 {
		t.Errorf("/bad was called %d times, want once (400 is permanent)", n)
	}
	var doc scheduler.FailureDocument
	if err := json.Unmarshal([]byte(alert), &doc); err != nil || doc.Job != "bad" || len(doc.Attempts) != 1 || doc.Attempts[0].HTTPStatus != 400 {
		t.Errorf("alert body %q (%v): want the failure document of bad's one attempt, status 400", alert, err)
	}
	busy := calls["/busy"]
	if len(busy) != 2 || busy[1].Sub(busy[0]) < 900*time.Millisecond {
		t.Errorf("/busy calls at %v; want the retry a second after the 429, as Retry-After says", busy)
	}
	for _, h := range hist {
		if h.Job == "busy" && h.Status == scheduler.StatusFailed && !strings.Contains(h.Message, "Retry-After") {
			t.Errorf("busy's failed attempt says %q; want it to say the retry waits for Retry-After", h.Message)
		}
	}
}
