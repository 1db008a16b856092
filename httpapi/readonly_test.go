package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestReadOnlyToken: a token marked read-only in the token list reads
// what its subscriptions hold, and every request that would change
// something (PUT, PATCH, DELETE, POST) is answered 403
// AuthorizationFailed and changes nothing; a token of the same list
// without the mark changes things.
func TestReadOnlyToken(t *testing.T) {
	const writer, reader = "writer-token-0123456789abc", "reader-token-0123456789abc"
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(writer + " sub1\n" + reader + " sub1 read-only\n")
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]bool{reader: true, writer: false} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		if p, err := auth.Authenticate(r); err != nil || p.ReadOnly != want {
			t.Fatalf("Authenticate = %+v, %v; want ReadOnly %v", p, err, want)
		}
	}
	h := httpapi.New(s, &httpapi.Options{Logger: log, Authenticator: auth})
	const coll = "/subscriptions/sub1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	const job = coll + "/jobs/j"
	const q = "?api-version=2016-03-01"
	jobBody := `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "startTime": "` + time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"}}`
	send := func(method, path, token, body string) (int, string) {
		t.Helper()
		rec := serveWith(h, method, path+q, body, map[string]string{"Authorization": "Bearer " + token})
		return rec.Code, rec.Body.String()
	}
	if code, body := send("PUT", coll, writer, `{"location": "westus", "properties": {"sku": {"name": "Standard"}}}`); code/100 != 2 {
		t.Fatalf("writer PUT collection = %d %s", code, body)
	}
	if code, body := send("PUT", job, writer, jobBody); code/100 != 2 {
		t.Fatalf("writer PUT job = %d %s", code, body)
	}
	for _, path := range []string{coll, job, coll + "/jobs", job + "/history"} {
		if code, body := send("GET", path, reader, ""); code != http.StatusOK {
			t.Errorf("reader GET %s = %d %s, want 200", path, code, body)
		}
	}
	for _, w := range []struct{ method, path, body string }{
		{"PUT", job, jobBody},
		{"PUT", coll + "/jobs/new", jobBody},
		{"PATCH", job, `{"properties": {"state": "Disabled"}}`},
		{"DELETE", job, ""},
		{"POST", job + "/run", ""},
		{"POST", coll + "/disable", ""},
		{"PATCH", coll, `{"properties": {"state": "Suspended"}}`},
		{"DELETE", coll, ""},
	} {
		code, body := send(w.method, w.path, reader, w.body)
		if code != http.StatusForbidden || !strings.Contains(body, `"AuthorizationFailed"`) || !strings.Contains(body, "read-only") {
			t.Errorf("reader %s %s = %d %s, want 403 AuthorizationFailed saying the token is read-only", w.method, w.path, code, body)
		}
	}
	r, err := s.GetJob(ctx, "sub1/rg/c", "j")
	if err != nil || r.State != scheduler.JobEnabled || !r.Schedule.RunRequested.IsZero() {
		t.Errorf("job after the reader's refused requests: %+v, %v; want it Enabled, no run requested", r, err)
	}
	if _, err := s.GetJob(ctx, "sub1/rg/c", "new"); err == nil {
		t.Error("the reader created a job")
	}
	if c, err := s.GetCollection(ctx, "sub1/rg/c"); err != nil || c.Definition.State() != scheduler.CollectionEnabled {
		t.Errorf("collection after the reader's refused requests: %v", err)
	}
	if code, body := send("PATCH", job, writer, `{"properties": {"state": "Disabled"}}`); code != http.StatusOK {
		t.Errorf("writer PATCH = %d %s, want 200", code, body)
	}
}
