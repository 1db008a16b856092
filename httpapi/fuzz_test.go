package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// FuzzHandler sends random requests: the handler must never panic, never
// answer 5xx (the in-memory store does not fail), and always answer with a
// request ID and, for errors, an ARM error body. It is seeded with the
// golden requests.
func FuzzHandler(f *testing.F) {
	for _, st := range steps() {
		f.Add(st.method, st.path, st.body, st.auth)
	}
	f.Add("PATCH", jc1+"/jobs/j1"+v, `{"properties": null}`, false)
	f.Add("PATCH", jc1+"/jobs/j1"+v, `{"properties": {"action": null, "recurrence": {"schedule": null}}}`, false)
	f.Add("PATCH", jc1+v, `{"properties": {"quota": null}, "tags": null}`, false)
	f.Add("PUT", jc1+"/jobs/j1"+v, `[]`, false)
	f.Add("GET", jc1+"/jobs"+v+"&$top=99999999999999999999&$skip=9223372036854775807", "", false)
	f.Add("GET", jc1+"/jobs"+v+"&$orderby="+urlq("properties/status/nextExecutionTime desc")+"&$filter="+urlq("tagName eq 'a''b' and state eq Enabled"), "", false)
	f.Add("GET", jc1+"/jobs"+v+"&$orderby=failureCount%09asc&$filter="+urlq("tagValue eq '' and tagName eq '"), "", false)
	f.Add("GET", "/subscriptions/%2F/resourceGroups/..%2f/providers/Microsoft.Scheduler/jobCollections"+v, "", false)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc1", nil, nil); err != nil {
		f.Fatal(err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}, "state": "Disabled"}`), nil)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "sub1/rg1/jc1", "j1", def, nil); err != nil {
		f.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(token + " sub1")
	if err != nil {
		f.Fatal(err)
	}
	// A budget a fuzzing run does not use up, so that it explores the
	// operations rather than 429s.
	th := &httpapi.Throttle{ReadsPerWindow: min(1<<40, math.MaxInt), WritesPerWindow: min(1<<40, math.MaxInt)}
	open := httpapi.New(s, &httpapi.Options{Logger: log, Throttle: th})
	authd := httpapi.New(s, &httpapi.Options{Logger: log, Authenticator: auth, Throttle: th})

	f.Fuzz(func(t *testing.T, method, path, body string, withAuth bool) {
		req, err := http.NewRequest(method, "http://example.com"+path, strings.NewReader(body))
		if err != nil {
			return // not a request a server could receive
		}
		h := open
		if withAuth {
			h = authd
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", method, path, rec.Code, rec.Body)
		}
		if rec.Header().Get("x-ms-request-id") == "" {
			t.Fatalf("%s %q: no x-ms-request-id", method, path)
		}
		if rec.Code >= 400 {
			var er httpapi.ErrorResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil || er.Error.Code == "" || er.Error.Message == "" {
				t.Fatalf("%s %q: status %d with body %q, want an ARM error", method, path, rec.Code, rec.Body)
			}
		}
	})
}
