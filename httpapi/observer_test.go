package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// panickyObserver is an httpapi.Observer whose methods panic.
type panickyObserver struct{}

func (panickyObserver) StartRequest(*http.Request) context.Context { panic("StartRequest fails") }
func (panickyObserver) EndRequest(*http.Request, httpapi.Served)   { panic("EndRequest fails") }

// TestObserverPanicRecovered: an Observer whose methods panic breaks no
// request: each is answered as without an Observer, and the log has one
// error per method that panicked, naming it, not one per panic.
func TestObserverPanicRecovered(t *testing.T) {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Observer: panickyObserver{},
		Logger: slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}))
	defer srv.Close()
	const path = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	for i := range 3 {
		req, err := http.NewRequest(http.MethodPut, srv.URL+path+"?api-version=2016-03-01",
			strings.NewReader(`{"location": "westus", "properties": {"sku": {"name": "Standard"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("PUT %d: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode/100 != 2 || !strings.Contains(string(body), `"name":"c"`) {
			t.Errorf("PUT %d = %d %s, %v; want the collection", i, resp.StatusCode, body, err)
		}
	}
	errs := map[string]int{}
	debugs := 0
	for line := range strings.Lines(log.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := r["msg"].(string)
		if !strings.Contains(msg, "Observer") {
			continue
		}
		m, _ := r["method"].(string)
		if p, _ := r["panic"].(string); p != m+" fails" {
			t.Errorf("record of method %s logs panic %q, want %q", m, p, m+" fails")
		}
		switch r["level"] {
		case "ERROR":
			if st, _ := r["stack"].(string); st == "" {
				t.Errorf("error of method %s has no stack", m)
			}
			errs[m]++
		case "DEBUG":
			debugs++
		}
	}
	if diff := cmp.Diff(map[string]int{"StartRequest": 1, "EndRequest": 1}, errs); diff != "" {
		t.Errorf("errors logged by method (-want +got):\n%s\nlog:\n%s", diff, log.String())
	}
	if debugs != 4 {
		t.Errorf("%d debug records of the later panics, want 4", debugs)
	}
}

// nilObserver is an httpapi.Observer whose StartRequest returns a nil
// context.
type nilObserver struct{}

func (nilObserver) StartRequest(*http.Request) context.Context { return nil }
func (nilObserver) EndRequest(*http.Request, httpapi.Served)   {}

// TestObserverNilContext: a request whose Observer's StartRequest returns a
// nil context is served with its own context.
func TestObserverNilContext(t *testing.T) {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Observer: nilObserver{}, Logger: slog.New(slog.DiscardHandler)})
	const path = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	req := httptest.NewRequest(http.MethodPut, path+"?api-version=2016-03-01",
		strings.NewReader(`{"location": "westus", "properties": {"sku": {"name": "Standard"}}}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code/100 != 2 || !strings.Contains(w.Body.String(), `"name":"c"`) {
		t.Errorf("PUT = %d %s; want the collection", w.Code, w.Body)
	}
}

// traceKey is the context key of the trace IDs in the contexts of
// TestObserverPanicLoggedWithContext.
type traceKey struct{}

// traceHandler adds to each record the trace ID of its context, as a
// handler that reads spans from the context does.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(traceKey{}).(string); ok {
		r.AddAttrs(slog.String("trace", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// spanThenPanic is an httpapi.Observer whose StartRequest returns a
// context with a trace ID of its own, and whose EndRequest panics.
type spanThenPanic struct{}

func (spanThenPanic) StartRequest(r *http.Request) context.Context {
	return context.WithValue(r.Context(), traceKey{}, "the request's span")
}
func (spanThenPanic) EndRequest(*http.Request, httpapi.Served) { panic("EndRequest fails") }

// TestObserverPanicLoggedWithContext: an Observer's panic is logged with
// the context of the call it panicked in, so that the trace ID a handler
// reads from it is in the record: the request's own context for
// StartRequest, the one StartRequest returned for EndRequest.
func TestObserverPanicLoggedWithContext(t *testing.T) {
	for _, tt := range []struct {
		name      string
		obs       httpapi.Observer
		method    string
		wantTrace string
	}{
		{"StartRequest", panickyObserver{}, "StartRequest", "the caller's"},
		{"EndRequest", spanThenPanic{}, "EndRequest", "the request's span"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var log syncbuf.Buffer
			h := httpapi.New(s, &httpapi.Options{Observer: tt.obs, Logger: slog.New(traceHandler{slog.NewJSONHandler(&log, nil)})})
			req := httptest.NewRequest(http.MethodGet, "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", nil)
			req = req.WithContext(context.WithValue(req.Context(), traceKey{}, "the caller's"))
			h.ServeHTTP(httptest.NewRecorder(), req)
			found := false
			for line := range strings.Lines(log.String()) {
				var r map[string]any
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if r["method"] != tt.method {
					continue
				}
				found = true
				if r["trace"] != tt.wantTrace {
					t.Errorf("the record of %s's panic has trace %v, want %q:\n%s", tt.method, r["trace"], tt.wantTrace, line)
				}
			}
			if !found {
				t.Errorf("no record of %s's panic in the log:\n%s", tt.method, log.String())
			}
		})
	}
}
