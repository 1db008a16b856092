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
