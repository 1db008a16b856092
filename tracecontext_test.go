package scheduler_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// traceParent is an observer that reads no span but gives RunJob a trace
// context, as package telemetry does for a caller's span while no SDK
// records.
type traceParent struct{}

func (traceParent) Attach(*scheduler.Scheduler) func() { return func() {} }
func (traceParent) StartAttempt(ctx context.Context, _ scheduler.Attempt) context.Context {
	return ctx
}
func (traceParent) EndAttempt(context.Context, scheduler.AttemptEnd) {}
func (traceParent) HistoryStored(scheduler.StoredHistory)            {}
func (traceParent) StoreCalled(scheduler.StoreCall)                  {}
func (traceParent) Missed(scheduler.Misfire)                         {}
func (traceParent) TookOver(scheduler.Takeover)                      {}
func (traceParent) Pruned(int)                                       {}
func (traceParent) TraceParent(context.Context) (string, string) {
	return "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=abc"
}

// TestStoredTraceContextReachesTheWire: an occurrence's stored trace
// context (here a run's, from RunJob's caller) goes out in the HTTP
// request's traceparent and tracestate headers, replacing the action's own,
// though nothing traces the attempt; and its retry carries it too.
func TestStoredTraceContextReachesTheWire(t *testing.T) {
	var mu sync.Mutex
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		n := len(headers)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	done := make(chan scheduler.HistoryEntry, 10)
	s, err := scheduler.New(memory.New(), &scheduler.Config{MinRetryInterval: 10 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Observer: traceParent{}, OnHistory: func(h scheduler.HistoryEntry) { done <- h }})
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
	job, err := scheduler.ParseJob([]byte(`{"startTime": "`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`",
		"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/hook", "method": "POST", "headers": {"traceparent": "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"}},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.05S", "retryCount": 1}}}`),
		&scheduler.ParseOptions{MinRetryInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "web", "hook", job, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunJob(ctx, "web", "hook"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the run's two attempts did not end within 10s")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, h := range headers {
		if h.Get("traceparent") != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" || h.Get("tracestate") != "vendor=abc" {
			t.Errorf("request %d: traceparent %q tracestate %q, want the run's stored trace context", i, h.Get("traceparent"), h.Get("tracestate"))
		}
	}
}
